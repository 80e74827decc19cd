// Structures through gemmi (io/structure_reader) and the PDBx/mmCIF writer (io/mmcif_writer).
// Reference: read_pdb (validated against OpenMM 7.7's PDBFile) on the same structures, and the mmCIF files
// tests/data/structure_*.cif.gz written by OpenMM 7.7's PDBxFile (tests/data/make_structure_cif.py).
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <cstdint>
#include <functional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <zlib.h>

#include "common/errors.hpp"
#include "io/mmcif_writer.hpp"
#include "io/pdb_reader.hpp"
#include "io/structure_reader.hpp"
#include "model/forcefield.hpp"
#include "support/catch.hpp"
#include "support/forcefield_fixtures.hpp"
#include "support/run_mdsim.hpp"
#include "support/scratch.hpp"
#include "support/text_file.hpp"
#include "support/thrown.hpp"

namespace fs = std::filesystem;
using namespace mdsim;
using mdsim_test::amber14;
using mdsim_test::contains;
using mdsim_test::input_error_of;
using mdsim_test::kData;
using mdsim_test::kSystems;
using mdsim_test::scratch_folder;

namespace {

// Writes `text` gzip-compressed into the file `name` of the scratch folder; returns its path.
std::string write_gz(const std::string& name, const std::string& text) {
  const std::string path = scratch_folder().file(name);
  gzFile f = gzopen(path.c_str(), "wb");
  REQUIRE(f != nullptr);
  REQUIRE(gzwrite(f, text.data(), static_cast<unsigned>(text.size())) == static_cast<int>(text.size()));
  gzclose(f);
  return path;
}

// Chains, residues (name, number, insertion code), atoms (name, element), positions (1e-6 nm), box, CONECT pairs;
// chain IDs through `chain_id` (identity unless a file had to rename blank ones).
void check_same_topology(const Topology& want, const Topology& got,
                         const std::function<std::string(std::size_t, const std::string&)>& chain_id = nullptr) {
  REQUIRE(got.chains.size() == want.chains.size());
  for (std::size_t c = 0; c < want.chains.size(); ++c) {
    INFO("chain " << c);
    CHECK(got.chains[c].id == (chain_id ? chain_id(c, want.chains[c].id) : want.chains[c].id));
    CHECK(got.chains[c].residues == want.chains[c].residues);
  }
  REQUIRE(got.residues.size() == want.residues.size());
  for (std::size_t r = 0; r < want.residues.size(); ++r) {
    const TopologyResidue &a = want.residues[r], &b = got.residues[r];
    INFO("residue " << r << " " << a.name << " " << a.number);
    CHECK(b.name == a.name);
    CHECK(b.number == a.number);
    CHECK(b.insertion_code == a.insertion_code);
    CHECK(b.chain == a.chain);
    CHECK(b.atoms == a.atoms);
  }
  REQUIRE(got.num_atoms() == want.num_atoms());
  int mismatches = 0;
  for (std::size_t i = 0; i < want.atoms.size(); ++i) {
    const bool same = got.atoms[i].name == want.atoms[i].name && got.atoms[i].element == want.atoms[i].element &&
                      got.atoms[i].residue == want.atoms[i].residue &&
                      norm(got.positions_nm[i] - want.positions_nm[i]) <= 1e-6;
    if (!same && ++mismatches <= 5) {
      INFO("atom " << i << ": " << want.atoms[i].name << " " << want.atoms[i].element << " vs " << got.atoms[i].name
                   << " " << got.atoms[i].element);
      CHECK(same);
    }
  }
  CHECK(mismatches == 0);
  REQUIRE(got.box.has_value() == want.box.has_value());
  if (want.box) {
    for (const auto& [u, v] : {std::pair{want.box->a, got.box->a}, {want.box->b, got.box->b}, {want.box->c, got.box->c}})
      CHECK(norm(u - v) <= 1e-9);
  }
}

std::vector<std::pair<int, int>> bonds_of(Topology top) {
  create_topology_bonds(top, amber14().standard);
  std::vector<std::pair<int, int>> bonds;
  for (auto [i, j] : top.bonds) bonds.emplace_back(std::min(i, j), std::max(i, j));
  std::sort(bonds.begin(), bonds.end());
  return bonds;
}

}  // namespace

TEST_CASE("a structure read as PDB and as PDBx/mmCIF gives identical topologies") {
  for (const std::string name : {"ala2_water", "villin_water"}) {
    INFO(name);
    const Topology pdb = read_pdb(kSystems + name + ".pdb");
    const StructureFile via_gemmi = read_structure(kSystems + name + ".pdb");
    const StructureFile cif = read_structure(kData + "structure_" + name + ".cif.gz");
    CHECK(via_gemmi.notes.empty());
    CHECK(cif.notes.empty());
    // make_structure_cif.py names a blank chain by its index (a blank is no mmCIF value).
    const auto renamed = [](std::size_t index, const std::string& id) {
      return id == " " ? std::string(1, static_cast<char>('A' + index % 26)) : id;
    };
    check_same_topology(pdb, via_gemmi.topology);
    check_same_topology(pdb, cif.topology, renamed);
    CHECK(via_gemmi.topology.conect == pdb.conect);
    CHECK(cif.topology.conect == pdb.conect);
    const auto bonds = bonds_of(pdb);
    CHECK(bonds.size() > static_cast<std::size_t>(pdb.num_atoms() / 2));
    CHECK(bonds_of(via_gemmi.topology) == bonds);
    CHECK(bonds_of(cif.topology) == bonds);
  }
}

TEST_CASE("read_structure agrees with read_pdb on the shared systems and the PDB test files") {
  // Left out: pdb_altloc.pdb (read_pdb keeps the first location, as OpenMM; read_structure the most occupied: a
  // test below) and pdb_blank_elements.pdb (an unknown element column 'XX', which read_pdb replaces by a guess
  // from the atom name as OpenMM does, read_structure refuses). In the files whose serials wrap past 99,999 the
  // topologies agree but not the serials (read_pdb unwraps them) nor the CONECT pairs (read_structure skips a
  // serial two atoms share).
  for (const auto& [path, same_serials] :
       {std::pair{kSystems + "ala2_vacuum.pdb", true}, {kSystems + "ala2_water.pdb", true},
        {kSystems + "villin_water.pdb", true}, {kSystems + "dhfr.pdb", true}, {kData + "pdb_insertion_codes.pdb", true},
        {kData + "pdb_models.pdb", true}, {kData + "pdb_hybrid36.pdb", true},
        {kData + "pdb_wrapped_serials.pdb", false}, {kData + "pdb_wrapped_to_one.pdb", false}}) {
    INFO(path);
    const Topology pdb = read_pdb(path);
    const StructureFile structure = read_structure(path);
    check_same_topology(pdb, structure.topology);
    for (std::size_t i = 0; i < pdb.atoms.size(); ++i) {
      if (structure.topology.atoms[i].line != pdb.atoms[i].line ||
          (same_serials && structure.topology.atoms[i].serial != pdb.atoms[i].serial)) {
        INFO("atom " << i);
        CHECK(structure.topology.atoms[i].line == pdb.atoms[i].line);
        CHECK(structure.topology.atoms[i].serial == pdb.atoms[i].serial);
        break;
      }
    }
    if (same_serials) CHECK(structure.topology.conect == pdb.conect);
  }
}

TEST_CASE("residue numbers that repeat in a chain (wrapped past 9999) stay separate residues, in file order") {
  // gemmi alone would file the second HOH 9999 and HOH 0 under the first ones; read_pdb (as OpenMM) does not.
  std::string text = "CRYST1   30.000   30.000   30.000  90.00  90.00  90.00 P 1           1 \n";
  const int numbers[] = {9998, 9999, 0, 1, 9999, 0};
  int serial = 1;
  for (int k = 0; k < 6; ++k)
    for (const char* name : {" O  ", " H1 ", " H2 "}) {
      const double x = 1.0 + 3.0 * k + (name[1] == 'O' ? 0.0 : name[2] == '1' ? 0.9 : -0.3);
      text += fmt::format("HETATM{:5d} {} HOH W{:4d}    {:8.3f}{:8.3f}{:8.3f}  1.00  0.00           {}  \n", serial++,
                          name, numbers[k], x, name[1] == 'O' ? 2.0 : 2.6, 3.0, name[1] == 'O' ? " O" : " H");
    }
  text += "END\n";
  const std::string path = scratch_folder().write("wrapped_residues.pdb", text);
  const Topology pdb = read_pdb(path);
  REQUIRE(pdb.residues.size() == 6);
  const StructureFile structure = read_structure(path);
  check_same_topology(pdb, structure.topology);
  CHECK(structure.notes.empty());
  CHECK(bonds_of(structure.topology) == bonds_of(pdb));
}

TEST_CASE("alternate locations: each residue keeps the label of highest mean occupancy, whole; a note says so") {
  const std::string text =
      "ATOM      1  N   SER A  10       1.000   2.000   3.000  1.00  0.00           N  \n"
      "ATOM      2  CA ASER A  10       2.000   2.000   3.000  0.40  0.00           C  \n"
      "ATOM      3  CA BSER A  10       2.100   2.100   3.100  0.60  0.00           C  \n"
      "ATOM      4  CB ASER A  10       3.000   2.000   3.000  0.50  0.00           C  \n"
      "ATOM      5  CB BSER A  10       3.100   2.100   3.100  0.50  0.00           C  \n"
      "ATOM      6  OG ASER A  10       4.000   2.000   3.000  0.30  0.00           O  \n"
      "ATOM      7  OG BSER A  10       4.100   2.100   3.100  0.30  0.00           O  \n"
      "ATOM      8  OG CSER A  10       4.200   2.200   3.200  0.40  0.00           O  \n"
      "ATOM      9  C   SER A  10       2.000   3.000   3.000  1.00  0.00           C  \n"
      "ATOM     10  N  AGLY A  11       3.000   4.000   3.000  0.50  0.00           N  \n"
      "ATOM     11  CA AGLY A  11       3.000   5.000   3.000  0.50  0.00           C  \n"
      "ATOM     12  CA BGLY A  11       3.300   5.300   3.300  0.50  0.00           C  \n"
      "END\n";
  const StructureFile s = read_structure(scratch_folder().write("altloc.pdb", text));
  const Topology& top = s.topology;
  REQUIRE(top.num_atoms() == 7);
  std::vector<int> serials;
  for (const TopologyAtom& a : top.atoms) serials.push_back(a.serial);
  // SER: B's mean 0.467 beats A's 0.40 and C's 0.40, so CA, CB and OG all come from B (not OG C's single 0.4
  // against OG B's 0.3); GLY: a tie, so A, the first, and N A that only A has.
  CHECK(serials == std::vector<int>{1, 3, 5, 7, 9, 10, 11});
  CHECK(top.positions_nm[1].x == Catch::Approx(0.21).epsilon(1e-12));
  CHECK(top.atoms[1].line == 3);
  CHECK(s.notes == std::vector<std::string>{
                       "altloc A dropped for 3 atoms (each residue keeps its most occupied location)",
                       "altloc B dropped for 1 atom (each residue keeps its most occupied location)",
                       "altloc C dropped for 1 atom (each residue keeps its most occupied location)"});

  // The same in PDBx/mmCIF (label_alt_id, occupancy).
  std::string cif =
      "data_altloc\nloop_\n_atom_site.group_PDB\n_atom_site.id\n_atom_site.type_symbol\n_atom_site.label_atom_id\n"
      "_atom_site.label_alt_id\n_atom_site.label_comp_id\n_atom_site.label_asym_id\n_atom_site.label_seq_id\n"
      "_atom_site.Cartn_x\n_atom_site.Cartn_y\n_atom_site.Cartn_z\n_atom_site.occupancy\n_atom_site.auth_seq_id\n"
      "_atom_site.auth_asym_id\n";
  for (const char* row : {"ATOM 1 N N . SER A 1 1.0 2.0 3.0 1.00 10 A", "ATOM 2 C CA A SER A 1 2.0 2.0 3.0 0.40 10 A",
                          "ATOM 3 C CA B SER A 1 2.1 2.1 3.1 0.60 10 A", "ATOM 4 C C . SER A 1 2.0 3.0 3.0 1.00 10 A"})
    cif += std::string(row) + "\n";
  const StructureFile c = read_structure(scratch_folder().write("altloc.cif", cif));
  REQUIRE(c.topology.num_atoms() == 3);
  CHECK(c.topology.atoms[1].serial == 3);
  CHECK(c.topology.atoms[1].line == 19);
  CHECK(c.topology.residues[0].number == 10);
  CHECK(c.notes == std::vector<std::string>{"altloc A dropped for 1 atom (each residue keeps its most occupied location)"});
}

TEST_CASE("microheterogeneity: of residues sharing a number, the one holding the most occupied altloc is kept") {
  // As OpenMM's test file altlocs.pdb, residue 25: ILE in altlocs A and B (0.20 each), LEU in C (0.60).
  auto atom = [](int serial, const char* name, char alt, const char* res, double x, double occ, const char* el) {
    return fmt::format("ATOM  {:5d} {:<4}{}{} A  25    {:8.3f}{:8.3f}{:8.3f}{:6.2f}  0.00          {:>2}  \n", serial,
                       name, alt, res, x, 1.0, 2.0, occ, el);
  };
  std::string pdb = atom(1, " N", 'A', "ILE", 1.0, 0.2, "N") + atom(2, " N", 'B', "ILE", 1.0, 0.2, "N") +
                    atom(3, " CA", 'A', "ILE", 2.0, 0.2, "C") + atom(4, " CA", 'B', "ILE", 2.0, 0.2, "C") +
                    atom(5, " CG1", 'A', "ILE", 3.0, 0.2, "C") + atom(6, " CG1", 'B', "ILE", 3.1, 0.2, "C") +
                    atom(7, " N", 'C', "LEU", 1.0, 0.6, "N") + atom(8, " CA", 'C', "LEU", 2.0, 0.6, "C") +
                    atom(9, " CG", 'C', "LEU", 3.5, 0.6, "C") + "END\n";
  const StructureFile s = read_structure(scratch_folder().write("microheterogeneity.pdb", pdb));
  REQUIRE(s.topology.residues.size() == 1);
  CHECK(s.topology.residues[0].name == "LEU");
  std::vector<int> serials;
  for (const TopologyAtom& a : s.topology.atoms) serials.push_back(a.serial);
  CHECK(serials == std::vector<int>{7, 8, 9});
  CHECK(s.notes == std::vector<std::string>{
                       "altloc A dropped for 3 atoms (each residue keeps its most occupied location)",
                       "altloc B dropped for 3 atoms (each residue keeps its most occupied location)",
                       "residue ILE 25 (chain 'A') dropped: altloc C of the same site, LEU, has the highest occupancy"});

  // The same as PDBx/mmCIF: one number, two residue names.
  std::string cif =
      "data_micro\nloop_\n_atom_site.group_PDB\n_atom_site.id\n_atom_site.type_symbol\n_atom_site.label_atom_id\n"
      "_atom_site.label_alt_id\n_atom_site.label_comp_id\n_atom_site.label_asym_id\n_atom_site.label_seq_id\n"
      "_atom_site.Cartn_x\n_atom_site.Cartn_y\n_atom_site.Cartn_z\n_atom_site.occupancy\n";
  for (const char* row : {"ATOM 1 N N A ILE A 25 1.0 1.0 2.0 0.2", "ATOM 2 N N B ILE A 25 1.0 1.0 2.0 0.2",
                          "ATOM 3 C CA A ILE A 25 2.0 1.0 2.0 0.2", "ATOM 4 C CA B ILE A 25 2.0 1.0 2.0 0.2",
                          "ATOM 5 N N C LEU A 25 1.0 1.0 2.0 0.6", "ATOM 6 C CA C LEU A 25 2.0 1.0 2.0 0.6"})
    cif += std::string(row) + "\n";
  const StructureFile c = read_structure(scratch_folder().write("microheterogeneity.cif", cif));
  REQUIRE(c.topology.residues.size() == 1);
  CHECK(c.topology.residues[0].name == "LEU");
  CHECK(c.topology.num_atoms() == 2);
  CHECK(c.topology.atoms[0].serial == 5);
}

TEST_CASE("a multi-model file: the first model, and a note") {
  const StructureFile pdb = read_structure(kData + "pdb_models.pdb");
  CHECK(pdb.topology.num_atoms() == 2);
  CHECK(pdb.notes == std::vector<std::string>{"model 1 of 2 used (the file holds 2 models)"});
  const std::string cif =
      "data_models\nloop_\n_atom_site.id\n_atom_site.type_symbol\n_atom_site.label_atom_id\n_atom_site.label_comp_id\n"
      "_atom_site.auth_asym_id\n_atom_site.auth_seq_id\n_atom_site.Cartn_x\n_atom_site.Cartn_y\n_atom_site.Cartn_z\n"
      "_atom_site.pdbx_PDB_model_num\n"
      "1 C C1 LIG A 1 1.0 2.0 3.0 1\n2 O O1 LIG A 1 1.5 2.5 3.5 1\n"
      "1 C C1 LIG A 1 9.0 9.0 9.0 2\n2 O O1 LIG A 1 9.5 9.5 9.5 2\n"
      "1 C C1 LIG A 1 8.0 8.0 8.0 3\n2 O O1 LIG A 1 8.5 8.5 8.5 3\n";
  const StructureFile c = read_structure(write_gz("models.cif.gz", cif));
  REQUIRE(c.topology.num_atoms() == 2);
  CHECK(c.topology.positions_nm[1].z == Catch::Approx(0.35).epsilon(1e-12));
  CHECK(c.notes == std::vector<std::string>{"model 1 of 3 used (the file holds 3 models)"});

  // mdsim says so too: a notice on stderr, the rest of the output as usual.
  const std::string water =
      "data_w\nloop_\n_atom_site.id\n_atom_site.type_symbol\n_atom_site.label_atom_id\n_atom_site.label_comp_id\n"
      "_atom_site.auth_asym_id\n_atom_site.auth_seq_id\n_atom_site.Cartn_x\n_atom_site.Cartn_y\n_atom_site.Cartn_z\n"
      "_atom_site.pdbx_PDB_model_num\n"
      "1 O O HOH W 1 28.414 24.909 23.615 1\n2 H H1 HOH W 1 28.334 23.995 23.344 1\n"
      "3 H H2 HOH W 1 28.001 25.406 22.909 1\n1 O O HOH W 1 20.563 26.999 26.373 2\n"
      "2 H H1 HOH W 1 19.731 26.744 26.773 2\n3 H H2 HOH W 1 21.171 27.070 27.109 2\n";
  const std::string structure = scratch_folder().write("water_models.cif", water);
  const std::string config = scratch_folder().write(
      "water_models.yaml", "system:\n  structure: " + structure +
                               "\n  forcefield: [tip3p.xml]\n  nonbonded_method: no_cutoff\nplatform: cpu\n");
  const auto r = mdsim::test::run_mdsim("check " + config);
  CHECK(r.code == 0);
  CHECK(r.err == "notice: " + structure + ": model 1 of 2 used (the file holds 2 models)\n");
  CHECK(contains(r.out, "atoms:          3 in 1 residues, 1 chains; 1 waters"));
}

TEST_CASE("write_mmcif: read back by read_structure, and by OpenMM's PDBxFile") {
  Topology top = read_pdb(kSystems + "ala2_water.pdb");
  create_topology_bonds(top, amber14().standard);
  // ala2_water's chain IDs repeat (A-Z for 749 chains): OpenMM's reading takes label_asym_id then, which the
  // writer makes unique (the ID at its first use, fresh letters after), so every chain comes back.
  {
    const std::string repeated = scratch_folder().file("repeated_ids.cif");
    write_mmcif(repeated, top, top.positions_nm, top.box);
    const Topology back = read_structure(repeated).topology;
    REQUIRE(back.chains.size() == top.chains.size());
    for (std::size_t c = 0; c < 26; ++c) CHECK(back.chains[c].id == top.chains[c].id);
    CHECK(back.chains[26].id == "AA");
    CHECK(back.residues.size() == top.residues.size());
  }
  // Unique chain IDs come back as they are. Beyond the PDB format: residue numbers past 9999, an insertion code,
  // a primed atom name, a blank chain ID.
  for (std::size_t c = 0; c < top.chains.size(); ++c) top.chains[c].id = "W" + std::to_string(c);
  top.residues[1].insertion_code = 'B';
  top.residues.back().number = 123456;
  top.atoms[0].name = "H5'";
  top.chains.back().id = " ";
  const std::string path = scratch_folder().file("written.cif");
  write_mmcif(path, top, top.positions_nm, top.box);
  CHECK(!fs::exists(path + ".partial"));
  const StructureFile back = read_structure(path);
  CHECK(back.notes.empty());
  // The blank chain is written under a label no other chain uses.
  const std::string blank_label = back.topology.chains.back().id;
  CHECK(blank_label == "A");
  check_same_topology(top, back.topology, [&](std::size_t index, const std::string& id) {
    return index + 1 == top.chains.size() ? blank_label : id;
  });
  // _struct_conn carries the bonds of the non-standard residues (ACE, NME), as OpenMM's writer lists them.
  std::vector<std::pair<int, int>> hetero;
  for (auto [i, j] : top.bonds) {
    const auto& ri = top.residues[static_cast<std::size_t>(top.atoms[static_cast<std::size_t>(i)].residue)].name;
    const auto& rj = top.residues[static_cast<std::size_t>(top.atoms[static_cast<std::size_t>(j)].residue)].name;
    if (ri == "ACE" || ri == "NME" || rj == "ACE" || rj == "NME") hetero.emplace_back(std::min(i, j), std::max(i, j));
  }
  std::sort(hetero.begin(), hetero.end());
  CHECK(hetero.size() == 12);
  CHECK(back.topology.conect == hetero);

  // OpenMM 7.7 reads it: atoms, residues, chains, box, and the bonds of its own createStandardBonds plus _struct_conn.
  if (std::system("/usr/bin/python3 -c 'import openmm' > /dev/null 2>&1") != 0) {
    WARN("OpenMM (/usr/bin/python3) not available: the PDBxFile read-back is skipped");
    return;
  }
  const std::string out = scratch_folder().file("openmm.txt");
  const std::string script =
      "import sys\nfrom openmm.app import PDBxFile\nf = PDBxFile(sys.argv[1])\nt = f.topology\n"
      "res = list(t.residues())\nprint(t.getNumAtoms(), t.getNumResidues(), t.getNumChains(), t.getNumBonds())\n"
      "print(res[1].insertionCode, res[-1].id, list(t.atoms())[0].name)\n"
      "print(' '.join('%.6f' % (x._value if hasattr(x, '_value') else x) for v in t.getPeriodicBoxVectors() for x in "
      "v))\nprint(' '.join('%.6f' % x for x in f.getPositions(asNumpy=True)._value[-1]))\n";
  const std::string script_path = scratch_folder().write("read_cif.py", script);
  REQUIRE(std::system(("/usr/bin/python3 " + script_path + " " + path + " > " + out).c_str()) == 0);
  std::ifstream in(out);
  int atoms = 0, residues = 0, chains = 0, bonds = 0;
  in >> atoms >> residues >> chains >> bonds;
  CHECK(atoms == top.num_atoms());
  CHECK(residues == static_cast<int>(top.residues.size()));
  CHECK(chains == static_cast<int>(top.chains.size()));
  CHECK(bonds == static_cast<int>(top.bonds.size()));
  std::string icode, last_id, first_name;
  in >> icode >> last_id >> first_name;
  CHECK(icode == "B");
  CHECK(last_id == "123456");
  CHECK(first_name == "H5'");
  double box[9];
  for (double& v : box) in >> v;
  CHECK(box[0] == Catch::Approx(top.box->a.x).margin(1e-5));
  CHECK(box[4] == Catch::Approx(top.box->b.y).margin(1e-5));
  CHECK(box[8] == Catch::Approx(top.box->c.z).margin(1e-5));
  double last[3];
  for (double& v : last) in >> v;
  CHECK(last[0] == Catch::Approx(top.positions_nm.back().x).margin(1e-5));
  CHECK(last[2] == Catch::Approx(top.positions_nm.back().z).margin(1e-5));
}

TEST_CASE("bad structure files: located one-line errors with a fix") {
  const auto& dir = scratch_folder();
  const std::string head = "data_x\nloop_\n_atom_site.id\n_atom_site.type_symbol\n_atom_site.label_atom_id\n"
                           "_atom_site.label_comp_id\n_atom_site.auth_asym_id\n_atom_site.auth_seq_id\n";
  const std::string xyz = "_atom_site.Cartn_x\n_atom_site.Cartn_y\n_atom_site.Cartn_z\n";

  std::string path = dir.write("no_xyz.cif", head + "1 C C1 LIG A 1\n");
  CHECK(input_error_of([&] { read_structure(path); }) ==
        path + ":3: _atom_site has no coordinates (_atom_site.Cartn_x, Cartn_y, Cartn_z): this file describes atoms "
               "without positions; use the coordinate file of the entry");
  path = dir.write("no_atom_site.cif", "data_x\n_cell.length_a 10.0\n");
  CHECK(input_error_of([&] { read_structure(path); }) ==
        path + ": no _atom_site category: this PDBx/mmCIF file holds no atom coordinates (a dictionary or sequence "
               "file?); use the coordinate file of the entry");
  path = dir.write("syntax.cif", head + xyz + "1 C C1 LIG A 1 1.0 2.0\n");
  const std::string syntax = input_error_of([&] { read_structure(path); });
  CHECK(syntax.rfind(path + ":", 0) == 0);
  CHECK(contains(syntax, "PDBx/mmCIF syntax error: Wrong number of values in the loop"));
  CHECK(syntax.find('\n') == std::string::npos);
  path = dir.write("element.cif", head + xyz + "1 C C1 LIG A 1 1.0 2.0 3.0\n2 Qx Q1 LIG A 1 1.0 2.0 4.0\n");
  CHECK(input_error_of([&] { read_structure(path); }) ==
        path + ":13: unknown element 'Qx' (_atom_site.type_symbol) of atom 'Q1' in residue LIG 1 (chain 'A'); write "
               "the element symbol (C, N, O, Na, ...)");
  path = dir.write("duplicate.cif", head + xyz + "1 C C1 LIG A 1 1.0 2.0 3.0\n2 C C1 LIG A 1 1.0 2.0 4.0\n");
  CHECK(input_error_of([&] { read_structure(path); }) ==
        path + ":13: duplicate atom 'C1' in residue LIG 1 (chain 'A'): already on line 12; give each atom of a residue "
               "its own name, or a separate residue its own number");
  // Found by fuzz_structure: an _atom_site without auth_asym_id and label_asym_id (one chain, ' ').
  path = dir.write("no_chain.cif", "data_x\nloop_\n_atom_site.id\n_atom_site.type_symbol\n_atom_site.label_atom_id\n"
                                   "_atom_site.label_comp_id\n_atom_site.auth_seq_id\n" + xyz +
                                       "1 Na NA NA 1 1.0 2.0 3.0\n2 Cl CL CL 2 4.0 2.0 3.0\n");
  const Topology no_chain = read_structure(path).topology;
  REQUIRE(no_chain.chains.size() == 1);
  CHECK(no_chain.chains[0].id == " ");
  CHECK(no_chain.residues.size() == 2);
  path = dir.write("number.cif", head + xyz + "1 C C1 LIG A 1 1.0 abc 3.0\n");
  CHECK(input_error_of([&] { read_structure(path); }) ==
        path + ":12: _atom_site.Cartn_y of atom 'C1' (id 1) is 'abc', not a number; each atom needs coordinates");
  path = dir.write("empty.pdb", "REMARK nothing here\nEND\n");
  CHECK(input_error_of([&] { read_structure(path); }) ==
        path + ": the file holds no atoms (no ATOM/HETATM records or _atom_site rows)");
  path = dir.write("element.pdb",
                   "ATOM      1  QN  ALA A   1       1.000   2.000   3.000  1.00  0.00          Xq  \n");
  CHECK(input_error_of([&] { read_structure(path); }) ==
        path + ":1: cannot determine the element of atom 'QN' in residue ALA 1 (chain 'A'): element columns 77-78 "
               "are 'Xq' (unknown) and the atom name does not start with an element symbol; write the element "
               "symbol in columns 77-78");
  // Found by fuzz_structure: a byte outside ASCII at a line's start made gemmi shift a negative char. In an atom
  // record it is refused where it is (as read_pdb does); in another record it is ignored.
  path = dir.write("latin1.pdb", "ATOM      1  \xe9   ALA A   1       1.000   2.000   3.000  1.00  0.00           C  \n");
  CHECK(input_error_of([&] { read_structure(path); }) ==
        path + ":1:14: byte 0xe9 in column 14 is not ASCII text; PDB records are plain ASCII");
  // Found by fuzz_structure: gemmi 0.5.7 reads a short LINK/SSBOND/CISPEP record past its end and overflows an int
  // on a 10-digit DBREF2 number; OpenMM's PDBFile reads neither, and read_structure hands gemmi a copy without them.
  path = dir.write("link.pdb", "LINK         O   HOH A   1\nSSBOND   1 CYS A\n"
                               "DBREF2 1ABC A                                9999999999  9999999999\n"
                               "HETATM    1 NA    NA A   1       1.000   2.000   3.000  1.00  0.00          NA  \n");
  CHECK(read_structure(path).topology.num_atoms() == 1);
  path = dir.write("remark.pdb", "\xffREMARK written by a tool in another encoding\n"
                                 "HETATM    1 NA    NA A   1       1.000   2.000   3.000  1.00  0.00          NA  \n");
  CHECK(read_structure(path).topology.atoms.at(0).element == "Na");
  path = dir.write("nan.pdb", "ATOM      1  N   ALA A   1         nan   2.000   3.000  1.00  0.00           N  \n");
  CHECK(input_error_of([&] { read_structure(path); }) ==
        path + ":1: atom 'N' (serial 1) has the coordinate nan, not a number: a damaged record? Fix it");
  path = dir.write("short.pdb", "ATOM      1  N   ALA A   1       1.000   2.000\n");
  const std::string short_line = input_error_of([&] { read_structure(path); });
  CHECK(short_line.rfind(path + ":1: cannot read this PDB file: The line is too short", 0) == 0);
  CHECK(short_line.find('\n') == std::string::npos);
  path = dir.write("garbage.cif.gz", "this is not gzip data at all\n");
  CHECK(input_error_of([&] { read_structure(path); }) ==
        path + ": the name ends in .gz but the file is not gzip-compressed; rename it without .gz");
  // A .gz cut short.
  std::string whole;
  {
    std::ifstream in(kData + "structure_ala2_water.cif.gz", std::ios::binary);
    whole.assign(std::istreambuf_iterator<char>(in), {});
  }
  path = dir.write("truncated.cif.gz", whole.substr(0, whole.size() / 2));
  const std::string truncated = input_error_of([&] { read_structure(path); });
  CHECK(truncated.rfind(path + ": cannot decompress the gzip file (", 0) == 0);
  CHECK(contains(truncated, "damaged or truncated"));
  path = dir.file("missing.cif");
  CHECK(input_error_of([&] { read_structure(path); }) ==
        path + ": cannot open the structure file: No such file or directory");
  path = dir.write("cell.cif", head + xyz + "1 C C1 LIG A 1 1.0 2.0 3.0\n#\n_cell.length_a 10\n_cell.length_b 10\n"
                               "_cell.length_c -10\n_cell.angle_alpha 90\n_cell.angle_beta 90\n_cell.angle_gamma 90\n");
  CHECK(input_error_of([&] { read_structure(path); }) ==
        path + ":14: _cell cell lengths must be positive (found c = -10); fix the unit cell or remove it");
}

TEST_CASE("damaged structure files give a located InputError, never another exception or a crash") {
  // Every prefix (a file cut short) and a fixed sequence of byte changes of a small mmCIF and a small PDB file.
  std::string cif;
  {
    std::ostringstream text;
    write_mmcif(scratch_folder().file("source.cif"), read_pdb(kSystems + "ala2_vacuum.pdb"),
                read_pdb(kSystems + "ala2_vacuum.pdb").positions_nm, Boxd{{2, 0, 0}, {0, 2, 0}, {0, 0, 2}});
    std::ifstream in(scratch_folder().file("source.cif"), std::ios::binary);
    text << in.rdbuf();
    cif = text.str();
  }
  std::string pdb;
  {
    std::ifstream in(kSystems + "ala2_vacuum.pdb", std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    pdb = text.str();
  }
  int read = 0, refused = 0;
  const auto attempt = [&](const std::string& name, const std::string& text) {
    const std::string path = scratch_folder().write(name, text);
    try {
      read_structure(path);
      ++read;
    } catch (const InputError& e) {
      ++refused;
      const std::string message = e.what();
      CHECK(message.rfind(path, 0) == 0);
      CHECK(message.find('\n') == std::string::npos);
    }
  };
  for (const auto& [name, text] : {std::pair{std::string("cut.cif"), cif}, {std::string("cut.pdb"), pdb}}) {
    for (std::size_t n = 0; n < text.size(); n += 7) attempt(name, text.substr(0, n));
    std::uint32_t state = 12345;
    const char replacements[] = {' ', '\n', '\'', '"', '_', '#', ';', '.', '?', 'X', '9', '-', '(', '\0'};
    for (int k = 0; k < 400; ++k) {
      std::string damaged = text;
      state = state * 1664525u + 1013904223u;
      const std::size_t at = state % damaged.size();
      damaged[at] = replacements[(state >> 16) % sizeof(replacements)];
      attempt(name, damaged);
    }
  }
  CHECK(read > 0);
  CHECK(refused > 0);
}

TEST_CASE("mdsim energy of a PDBx/mmCIF config equals that of the PDB config") {
  const auto& dir = scratch_folder();
  const std::string settings = "  nonbonded_method: pme\n  constraints: none\n  rigid_water: false\n";
  const std::string pdb_cfg = dir.write("pdb.yaml", "system:\n  pdb: " + kSystems + "ala2_water.pdb\n" + settings);
  const std::string cif_cfg =
      dir.write("cif.yaml", "system:\n  structure: " + kData + "structure_ala2_water.cif.gz\n" + settings);
  const auto a = mdsim::test::run_mdsim("energy --json --platform cpu " + pdb_cfg);
  const auto b = mdsim::test::run_mdsim("energy --json --platform cpu " + cif_cfg);
  REQUIRE(a.code == 0);
  REQUIRE(b.code == 0);
  // The JSON is the same but for the structure's path.
  const std::string pdb_name = kSystems + "ala2_water.pdb", cif_name = kData + "structure_ala2_water.cif.gz";
  std::string expected = a.out;
  for (std::size_t at = expected.find(pdb_name); at != std::string::npos; at = expected.find(pdb_name, at))
    expected.replace(at, pdb_name.size(), cif_name);
  CHECK(contains(a.out, "\"total\""));
  CHECK(b.out == expected);
}
