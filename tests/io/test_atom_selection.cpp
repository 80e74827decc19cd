// Atom selections (io/atom_selection): grammar, errors, subset topologies, and agreement with
// MDTraj's selection language on the shared systems (tests/python/check_selection.py).
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "common/errors.hpp"
#include "io/atom_selection.hpp"
#include "io/forcefield_xml.hpp"
#include "io/pdb_reader.hpp"
#include "model/forcefield.hpp"
#include "support/catch.hpp"
#include "support/text_file.hpp"

using namespace mdsim;

namespace {

const std::string kShared = MDSIM_TEST_DATA_DIR;
const std::string kSource = MDSIM_SOURCE_DIR;

std::vector<int> range(int lo, int hi) {  // inclusive
  std::vector<int> v;
  for (int i = lo; i <= hi; ++i) v.push_back(i);
  return v;
}

// Message of the InputError `select_atoms` throws.
std::string error_of(const Topology& t, const std::string& selection) {
  try {
    select_atoms(t, selection, "run.yaml:31:12: output.trajectory.atoms");
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace

TEST_CASE("atom selection keywords and index lists on ala2_water") {
  const Topology t = read_pdb(kShared + "/systems/ala2_water.pdb");
  REQUIRE(t.num_atoms() == 2269);
  CHECK(select_atoms(t, "all") == range(0, 2268));
  CHECK(select_atoms(t, "protein") == range(0, 21));  // ACE, ALA, NME
  CHECK(select_atoms(t, "not water") == range(0, 21));
  CHECK(select_atoms(t, "water") == range(22, 2268));
  CHECK(select_atoms(t, "  NOT   Water ") == range(0, 21));
  CHECK(select_atoms(t, "0-21,30") == [] {
    auto v = range(0, 21);
    v.push_back(30);
    return v;
  }());
  CHECK(select_atoms(t, "30, 0 - 3, 2, 1") == std::vector<int>{0, 1, 2, 3, 30});
  CHECK(select_atoms(t, "2268") == std::vector<int>{2268});
  // heavy: the 10 protein heavy atoms (ACE C CH3 O, ALA N CA CB C O, NME N C) and every water O.
  const std::vector<int> heavy = select_atoms(t, "heavy");
  CHECK(heavy.size() == 10 + 749);
  CHECK(select_atoms(t, "protein and heavy").size() == 10);
  CHECK(select_atoms(t, "hydrogen").size() == 12 + 2 * 749);
  CHECK(select_atoms(t, "water or protein") == range(0, 2268));
  CHECK(select_atoms(t, "not (water or protein and heavy)").size() == 12);
  CHECK(select_atoms(t, "0-5 and not hydrogen") == std::vector<int>{1, 4, 5});  // ACE CH3, C, O
}

TEST_CASE("atom selection errors are one line naming the config key, position and what was expected") {
  const Topology t = read_pdb(kShared + "/systems/ala2_vacuum.pdb");
  CHECK(error_of(t, "proteins") ==
        "run.yaml:31:12: output.trajectory.atoms: invalid atom selection \"proteins\": unknown keyword at character 1 "
        "(found 'proteins'); expected all, protein, backbone, water, heavy, hydrogen, not/and/or, or an index list like \"0-21,30\"");
  CHECK(error_of(t, "0-22") ==
        "run.yaml:31:12: output.trajectory.atoms: invalid atom selection \"0-22\": atom index 22 at character 3 is out "
        "of range; the system has 22 atoms (indices 0-21)");
  CHECK(error_of(t, "5-2") ==
        "run.yaml:31:12: output.trajectory.atoms: invalid atom selection \"5-2\": range 5-2 at character 1 ends before "
        "it starts");
  CHECK(error_of(t, "water") ==
        "run.yaml:31:12: output.trajectory.atoms: atom selection \"water\" matches none of the 22 atoms");
  CHECK(error_of(t, "") .find("expected a keyword or an atom index at character 1 (found the end)") != std::string::npos);
  CHECK(error_of(t, "0-") .find("expected the end of the range at character 3 (found the end)") != std::string::npos);
  CHECK(error_of(t, "1,,2").find("expected an atom index at character 3 (found ',')") != std::string::npos);
  CHECK(error_of(t, "(protein").find("expected ')' at character 9") != std::string::npos);
  CHECK(error_of(t, "protein heavy").find("expected 'and', 'or' or the end of the selection at character 9") !=
        std::string::npos);
  CHECK(error_of(t, "not").find("at character 4 (found the end)") != std::string::npos);
  CHECK(error_of(t, "1;2").find("unexpected character at character 2 (found ';')") != std::string::npos);
  CHECK(error_of(t, "99999999999999999999999").find("is out of range") != std::string::npos);
  for (const char* s : {"proteins", "0-22", "", "1;2", "not"}) CHECK(error_of(t, s).find('\n') == std::string::npos);
}

TEST_CASE("protein and water residue names") {
  for (const char* n : {"ALA", "GLY", "HIS", "HID", "HIE", "HIP", "HSD", "CYX", "CYM", "ASH", "GLH", "LYN", "ACE",
                        "NME", "NMA", "NALA", "CALA", "NHIE", "CCYX", "MSE"})
    CHECK(is_protein_residue_name(n));
  for (const char* n : {"HOH", "WAT", "NA", "CL", "Cl", "K", "DA", "A", "U", "ALAX", "XALA", "LIG", ""})
    CHECK(!is_protein_residue_name(n));
  for (const char* n : {"HOH", "WAT", "SOL", "TIP3", "T4P", "SPC"}) CHECK(is_water_residue_name(n));
  for (const char* n : {"NA", "ALA", "HO", "DOD"}) CHECK(!is_water_residue_name(n));
}

TEST_CASE("subset topology keeps chains, residues, positions and the bonds between kept atoms") {
  Topology t = read_pdb(kShared + "/systems/ala2_water.pdb");
  create_topology_bonds(t, load_standard_residue_data(kSource + "/forcefields"));
  const std::vector<int> atoms = {4, 5, 6, 22, 23, 24, 2268};  // ACE C O, ALA N, first water, one H of the last
  const Topology s = subset_topology(t, atoms);
  REQUIRE(s.num_atoms() == 7);
  CHECK(s.residues.size() == 4);  // ACE, ALA, HOH, HOH
  CHECK(s.residues[0].name == "ACE");
  CHECK(s.residues[0].atoms == std::vector<int>{0, 1});
  CHECK(s.residues[1].atoms == std::vector<int>{2});
  CHECK(s.residues[3].atoms == std::vector<int>{6});
  CHECK(s.atoms[2].name == "N");
  CHECK(s.atoms[2].residue == 1);
  CHECK(s.positions_nm[3].x == t.positions_nm[22].x);
  CHECK(s.box.has_value());
  std::vector<std::pair<int, int>> bonds = s.bonds;
  for (auto& [i, j] : bonds)
    if (i > j) std::swap(i, j);
  std::sort(bonds.begin(), bonds.end());
  // C=O and C-N of the peptide bond, O-H1 and O-H2 of the water.
  CHECK(bonds == std::vector<std::pair<int, int>>{{0, 1}, {0, 2}, {3, 4}, {3, 5}});
  std::size_t residues_in_chains = 0;
  for (const TopologyChain& c : s.chains) residues_in_chains += c.residues.size();
  CHECK(residues_in_chains == s.residues.size());
  REQUIRE_THROWS_AS(subset_topology(t, {3, 2}), RuntimeError);
}

TEST_CASE("selections agree with MDTraj's selection language") {
  for (const std::string name : {"ala2_water", "villin_water", "dhfr"}) {
    const std::string pdb = kShared + "/systems/" + name + ".pdb";
    const Topology t = read_pdb(pdb);
    const std::vector<std::pair<std::string, std::string>> pairs = {
        {"all", "all"},
        {"protein", "protein"},
        {"water", "water"},
        {"not water", "not water"},
        {"heavy", "not element H"},
        {"protein and heavy", "protein and not element H"},
        {"not protein and not water", "not protein and not water"},
        {"0-21,30", "index 0 to 21 or index 30"},
    };
    std::string json = "{";
    for (std::size_t k = 0; k < pairs.size(); ++k) {
      std::vector<int> ours;
      try {
        ours = select_atoms(t, pairs[k].first);
      } catch (const InputError&) {  // matches no atom (e.g. no ions in ala2_water): MDTraj finds none either
      }
      json += fmt::format("{}\"{}\": [{}]", k ? ", " : "", pairs[k].second, fmt::join(ours, ", "));
    }
    json += "}";
    const std::string file = fmt::format("selection_{}.json", name);
    {
      std::ofstream out(file);
      out << json;
      REQUIRE(out.good());
    }
    const char* py = std::getenv("MDSIM_TEST_PYTHON");
    const std::string log = fmt::format("selection_py_{}.log", ::getpid());
    const std::string cmd = fmt::format("{} {}/tests/python/check_selection.py {} {} > {} 2>&1",
                                        py && *py ? py : "/usr/bin/python3", kSource, pdb, file, log);
    const int rc = std::system(cmd.c_str());
    INFO(name << "\n" << mdsim_test::read_text(log));
    CHECK(rc == 0);
  }
}
