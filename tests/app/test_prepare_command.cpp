// `mdsim prepare` end to end: heavy-atom-only structures (hydrogens, waters and ions stripped from the shared
// systems, as a PDB entry has them) prepared, checked by `mdsim check` and run through the protocol written for
// them, and the errors a raw structure meets.
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "io/mmcif_writer.hpp"
#include "io/pdb_reader.hpp"
#include "io/structure_reader.hpp"
#include "support/catch.hpp"
#include "support/run_mdsim.hpp"
#include "support/scratch.hpp"
#include "support/text_file.hpp"

namespace fs = std::filesystem;
using mdsim_test::scratch;
using mdsim::test::run_mdsim;

namespace {

using mdsim_test::contains;

// The shared system's heavy atoms outside water and ions, CRYST1 kept; `drop_residues` (resSeq) left out too.
std::string heavy_atoms(const std::string& system, int drop_from = 0, int drop_to = -1) {
  std::ifstream in(std::string(MDSIM_TEST_DATA_DIR) + "/systems/" + system);
  std::string out, line;
  while (std::getline(in, line)) {
    if (line.rfind("ATOM", 0) == 0 || line.rfind("HETATM", 0) == 0) {
      std::string element = line.size() >= 78 ? line.substr(76, 2) : "";
      element.erase(0, element.find_first_not_of(' '));
      const std::string residue = line.substr(17, 3);
      const int number = std::stoi(line.substr(22, 4));
      if (element == "H" || residue == "HOH" || residue == "NA " || residue == "CL ") continue;
      if (number >= drop_from && number <= drop_to) continue;
    }
    if (line.rfind("CONECT", 0) == 0) continue;
    out += line + "\n";
  }
  return out;
}

fs::path write(const fs::path& path, const std::string& text) {
  std::ofstream(path) << text;
  return path;
}

int count_element(const mdsim::Topology& top, const std::string& element) {
  int n = 0;
  for (const auto& a : top.atoms) n += a.element == element;
  return n;
}

}  // namespace

TEST_CASE("prepare: alanine dipeptide without solvent gets OpenMM's hydrogens back", "[prepare]") {
  const fs::path dir = scratch("ala2");
  const fs::path in = write(dir / "ala2.pdb", heavy_atoms("ala2_vacuum.pdb"));
  const auto r = run_mdsim("prepare " + in.string() + " --no-solvent -o " + (dir / "out.pdb").string() + " --config " +
                           (dir / "run.yaml").string());
  INFO(r.out << r.err);
  REQUIRE(r.code == 0);
  CHECK(contains(r.out, "hydrogens: 12 added"));
  const mdsim::Topology out = mdsim::read_pdb((dir / "out.pdb").string());
  const mdsim::Topology ref = mdsim::read_pdb(std::string(MDSIM_TEST_DATA_DIR) + "/systems/ala2_vacuum.pdb");
  CHECK(out.num_atoms() == ref.num_atoms());
  CHECK(count_element(out, "H") == count_element(ref, "H"));
  CHECK_FALSE(out.box.has_value());
  // Without a box the protocol has no NPT stage and no PME; the config is valid.
  std::ifstream config(dir / "run.yaml");
  std::stringstream text;
  text << config.rdbuf();
  CHECK(contains(text.str(), "nonbonded_method: no_cutoff"));
  CHECK_FALSE(contains(text.str(), "barostat"));
  const auto check = run_mdsim("check " + (dir / "run.yaml").string());
  INFO(check.out << check.err);
  CHECK(check.code == 0);
}

TEST_CASE("prepare: villin from heavy atoms to a neutral solvated system and a valid protocol", "[prepare]") {
  const fs::path dir = scratch("villin");
  const fs::path in = write(dir / "villin.pdb", heavy_atoms("villin_water.pdb"));
  const auto r = run_mdsim("prepare " + in.string() + " --config " + (dir / "run.yaml").string());
  INFO(r.out << r.err);
  REQUIRE(r.code == 0);
  const fs::path out = dir / "villin_prepared.pdb";
  REQUIRE(fs::exists(out));
  CHECK(contains(r.out, "HIS 27 (chain ' '): HID"));
  CHECK(contains(r.out, "-> +0 e"));
  const mdsim::Topology top = mdsim::read_pdb(out.string());
  REQUIRE(top.box.has_value());
  CHECK(top.box->a.x >= 4.0);
  // The protein's hydrogens equal the shared (OpenMM-built) structure's.
  const mdsim::Topology ref = mdsim::read_pdb(std::string(MDSIM_TEST_DATA_DIR) + "/systems/villin_water.pdb");
  int ref_protein_h = 0, protein_h = 0;
  for (const auto& a : ref.atoms)
    ref_protein_h += a.element == "H" && ref.residues[static_cast<std::size_t>(a.residue)].name != "HOH";
  for (const auto& a : top.atoms)
    protein_h += a.element == "H" && top.residues[static_cast<std::size_t>(a.residue)].name != "HOH";
  CHECK(protein_h == ref_protein_h);
  const auto check = run_mdsim("check " + (dir / "run.yaml").string());
  INFO(check.out << check.err);
  CHECK(check.code == 0);
  CHECK(contains(check.out, "stage minimize"));
  CHECK(contains(check.out, "stage npt"));

  // The same seed gives the same file; the YAML settings file means what the options mean.
  write(dir / "settings.yaml", "prepare:\n  input: villin.pdb\n  output: again.pdb\n  seed: 1\n");
  const auto again = run_mdsim("prepare " + (dir / "settings.yaml").string());
  INFO(again.out << again.err);
  REQUIRE(again.code == 0);
  std::ifstream a(out), b(dir / "again.pdb");
  std::stringstream ta, tb;
  ta << a.rdbuf();
  tb << b.rdbuf();
  CHECK(ta.str() == tb.str());
}

TEST_CASE("prepare: the same structure as PDB and as PDBx/mmCIF gives the same prepared system", "[prepare]") {
  const fs::path dir = scratch("cif");
  const fs::path pdb = write(dir / "villin.pdb", heavy_atoms("villin_water.pdb"));
  const mdsim::Topology raw = mdsim::read_pdb(pdb.string());
  mdsim::write_mmcif((dir / "villin.cif").string(), raw, raw.positions_nm, raw.box);
  const auto from_pdb = run_mdsim("prepare " + pdb.string() + " -o " + (dir / "a.pdb").string());
  const auto from_cif = run_mdsim("prepare " + (dir / "villin.cif").string() + " -o " + (dir / "b.pdb").string());
  INFO(from_pdb.err << from_cif.err);
  REQUIRE(from_pdb.code == 0);
  REQUIRE(from_cif.code == 0);
  const mdsim::Topology a = mdsim::read_pdb((dir / "a.pdb").string());
  const mdsim::Topology b = mdsim::read_pdb((dir / "b.pdb").string());
  REQUIRE(a.num_atoms() == b.num_atoms());
  for (int i = 0; i < a.num_atoms(); ++i) {
    const auto k = static_cast<std::size_t>(i);
    CHECK(a.atoms[k].name == b.atoms[k].name);
    CHECK(a.residues[static_cast<std::size_t>(a.atoms[k].residue)].name ==
          b.residues[static_cast<std::size_t>(b.atoms[k].residue)].name);
    for (int d = 0; d < 3; ++d) CHECK(a.positions_nm[k][d] == Catch::Approx(b.positions_nm[k][d]).margin(1e-4));
  }
}

TEST_CASE("prepare: a chain break is an error naming both residues, or split on request", "[prepare]") {
  const fs::path dir = scratch("gap");
  const fs::path in = write(dir / "gap.pdb", heavy_atoms("villin_water.pdb", 10, 12));
  const auto r = run_mdsim("prepare " + in.string() + " --config " + (dir / "run.yaml").string());
  CHECK(r.code == 2);
  CHECK(contains(r.err, "breaks between"));
  CHECK(contains(r.err, "9 and"));
  CHECK(contains(r.err, "13"));
  CHECK(contains(r.err, "--chain-breaks split"));
  CHECK_FALSE(fs::exists(dir / "gap_prepared.pdb"));
  CHECK_FALSE(fs::exists(dir / "run.yaml"));
  const auto split = run_mdsim("prepare " + in.string() + " --chain-breaks split --no-solvent");
  INFO(split.out << split.err);
  CHECK(split.code == 0);
  CHECK(contains(split.out, "split: chain"));
}

TEST_CASE("prepare: errors a raw structure meets, located and with the fix; nothing written", "[prepare]") {
  const fs::path dir = scratch("errors");
  std::string text = heavy_atoms("villin_water.pdb");
  const std::size_t end = text.find("END");
  const std::string ligand =
      "HETATM 9999  C1  LIG A 401      40.000  40.000  40.000  1.00  0.00           C  \n";
  const fs::path lig = write(dir / "lig.pdb", text.substr(0, end) + ligand + text.substr(end));
  const auto r = run_mdsim("prepare " + lig.string());
  CHECK(r.code == 2);
  CHECK(contains(r.err, "LIG"));
  CHECK(contains(r.err, "force field XML"));
  CHECK_FALSE(fs::exists(dir / "lig_prepared.pdb"));

  const fs::path in = write(dir / "villin.pdb", text);
  const auto variant = run_mdsim("prepare " + in.string() + " --variant :99=HIE");
  CHECK(variant.code == 2);
  CHECK(contains(variant.err, "no residue 99"));
  const auto given = run_mdsim("prepare " + in.string() + " --no-solvent --variant :27=HIE -o " + (dir / "given.pdb").string());
  INFO(given.out << given.err);
  CHECK(given.code == 0);
  CHECK(contains(given.out, "HIS 27 (chain ' '): HIE"));
  const auto padding = run_mdsim("prepare " + in.string() + " --cutoff 3nm");
  CHECK(padding.code == 2);
  CHECK(contains(padding.err, "too small for the cutoff"));
  const auto salt = run_mdsim("prepare " + in.string() + " --ionic-strength 80M");
  CHECK(salt.code == 2);
  CHECK_FALSE(fs::exists(dir / "villin_prepared.pdb"));
  const auto unit = run_mdsim("prepare " + in.string() + " --padding 1ps");
  CHECK(unit.code == 2);
  CHECK(contains(unit.err, "--padding"));
}

TEST_CASE("prepare: --remove-heterogens and remove_heterogens keep water and the names asked for", "[prepare]") {
  const fs::path dir = scratch("heterogens");
  // ACE-ALA-NME (its caps are heterogens, as in PDBFixer), a sulfate and a water.
  std::string text = heavy_atoms("ala2_vacuum.pdb");
  text.insert(text.find("END"),
              "HETATM   30  S   SO4 B   1      20.000  20.000  20.000  1.00  0.00           S  \n"
              "HETATM   31  O1  SO4 B   1      21.500  20.000  20.000  1.00  0.00           O  \n"
              "HETATM   32  O2  SO4 B   1      18.500  20.000  20.000  1.00  0.00           O  \n"
              "HETATM   33  O3  SO4 B   1      20.000  21.500  20.000  1.00  0.00           O  \n"
              "HETATM   34  O4  SO4 B   1      20.000  18.500  20.000  1.00  0.00           O  \n"
              "HETATM   35  O   HOH C   1      25.000  25.000  25.000  1.00  0.00           O  \n");
  const fs::path in = write(dir / "in.pdb", text);
  const std::string line = "heterogens removed: SO4 1 (1 residue, 5 atoms); kept: ACE 1, NME 1 (--keep-heterogens), 1 water\n";
  const auto r = run_mdsim("prepare " + in.string() + " --no-solvent --remove-heterogens --keep-heterogens ace "
                           "--keep-heterogens NME -o " + (dir / "a.pdb").string());
  INFO(r.out << r.err);
  REQUIRE(r.code == 0);
  CHECK(contains(r.out, line));
  const mdsim::Topology a = mdsim::read_pdb((dir / "a.pdb").string());
  std::map<std::string, int> names;
  for (const auto& res : a.residues) ++names[res.name];
  CHECK(names == std::map<std::string, int>{{"ACE", 1}, {"ALA", 1}, {"NME", 1}, {"HOH", 1}});

  write(dir / "settings.yaml", "prepare:\n  input: in.pdb\n  output: b.pdb\n  solvent: false\n"
                               "  remove_heterogens: true\n  keep_heterogens: [ACE, NME]\n");
  const auto file = run_mdsim("prepare " + (dir / "settings.yaml").string());
  INFO(file.out << file.err);
  REQUIRE(file.code == 0);
  CHECK(contains(file.out, line));

  // Without the keep list the caps go too, as in PDBFixer, and the alanine left alone has no template.
  const auto bare = run_mdsim("prepare " + in.string() + " --no-solvent --remove-heterogens -o " + (dir / "c.pdb").string());
  CHECK(bare.code == 2);
  CHECK(contains(bare.err, "residue ALA 2 (chain ' ') is a lone amino acid"));
  CHECK_FALSE(fs::exists(dir / "c.pdb"));
}

TEST_CASE("prepare then run the protocol it wrote: every stage runs and restraints act only where asked", "[prepare]") {
  // The CI-sized version of the prepared protocol's check (bench/prepare_validate.sh runs 10 ps + 10 ps of DHFR on
  // a GPU): solvated alanine dipeptide with stages of 0.1 ps each.
  const fs::path dir = scratch("protocol");
  const fs::path in = write(dir / "ala2.pdb", heavy_atoms("ala2_vacuum.pdb"));
  const auto prep = run_mdsim("prepare " + in.string() + " -o " + (dir / "system.pdb").string() + " --config " +
                              (dir / "run.yaml").string() +
                              " --padding 0.8nm --cutoff 0.8nm --nvt-time 0.1ps --npt-time 0.1ps --production-time 0.1ps");
  INFO(prep.out << prep.err);
  REQUIRE(prep.code == 0);
  // State lines every 10 steps instead of 500, so the short stages show.
  std::ifstream config_in(dir / "run.yaml");
  std::stringstream config;
  config << config_in.rdbuf();
  std::string text = config.str();
  const std::string every = "state: {file: state.csv, interval: 500}";
  REQUIRE(contains(text, every));
  text.replace(text.find(every), every.size(), "state: {file: state.csv, interval: 10}");
  write(dir / "run.yaml", text);
  const auto run = run_mdsim("run " + (dir / "run.yaml").string());
  INFO(run.out << run.err);
  REQUIRE(run.code == 0);

  std::ifstream log(dir / "out" / "state.csv");
  std::string header, line;
  std::getline(log, header);
  REQUIRE(contains(header, "restraint_kj_per_mol,stage"));
  std::map<std::string, int> lines;
  std::map<std::string, double> restraint;
  long last_step = 0;
  while (std::getline(log, line)) {
    std::vector<std::string> cells;
    std::stringstream row(line);
    for (std::string cell; std::getline(row, cell, ',');) cells.push_back(cell);
    REQUIRE(cells.size() >= 3);
    const std::string stage = cells.back();
    const long step = std::stol(cells[0]);
    CHECK(step == last_step + 10);  // one log across the stages, steps continuing
    last_step = step;
    ++lines[stage];
    restraint[stage] = std::max(restraint[stage], std::stod(cells[cells.size() - 2]));
    const double temperature = std::stod(cells[5]);
    CHECK(temperature > 50.0);
    CHECK(temperature < 600.0);
  }
  CHECK(lines["nvt"] == 5);
  CHECK(lines["npt"] == 5);
  CHECK(lines["production"] == 5);
  CHECK(restraint["nvt"] > 0.0);
  CHECK(restraint["npt"] > 0.0);
  CHECK(restraint["production"] == 0.0);
}
