// PDB reader, writer and element table (io/pdb_reader, io/pdb_writer, io/elements).
// Reference values: /work/shared/reference (OpenMM 7.7), tests/data/pdb_openmm_*.txt (dumped from
// OpenMM 7.7, recipes in their headers), and hand-made files tests/data/pdb_*.pdb whose expected
// topology is what OpenMM 7.7's PDBFile gives for them (checked with /usr/bin/python3) unless a
// comment says the case is one OpenMM does not handle.
#include <hdf5.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "common/errors.hpp"
#include "io/pdb_reader.hpp"
#include "io/pdb_writer.hpp"
#include "model/elements.hpp"
#include "model/topology.hpp"
#include "support/catch.hpp"
#include "support/text_file.hpp"

using namespace mdsim;

namespace {

const std::string kShared = MDSIM_TEST_DATA_DIR;
const std::string kData = std::string(MDSIM_SOURCE_DIR) + "/tests/data/";
const std::vector<std::string> kSystems = {"ala2_vacuum", "ala2_water", "villin_water", "dhfr"};

std::string system_pdb(const std::string& name) { return kShared + "/systems/" + name + ".pdb"; }

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// Writes `text` to a file in the test's working folder and returns its path.
std::string write_text(const std::string& name, const std::string& text) {
  std::ofstream out(name, std::ios::binary);
  out << text;
  REQUIRE(out.good());
  return name;
}

// The few reference-JSON values this test needs: "counts" entries and "box_nm" (absent -> none).
struct ReferenceJson {
  std::string text;
  explicit ReferenceJson(const std::string& name)
      : text(mdsim_test::read_text(kShared + "/reference/" + name + ".json")) {}

  long count(const std::string& key) const {
    const std::size_t counts = text.find("\"counts\"");
    REQUIRE(counts != std::string::npos);
    const std::size_t at = text.find("\"" + key + "\":", counts);
    REQUIRE(at != std::string::npos);
    return std::strtol(text.c_str() + at + key.size() + 3, nullptr, 10);
  }
  bool has_box() const { return text.find("\"box_nm\"") != std::string::npos; }
  std::vector<double> box() const {
    std::size_t at = text.find("\"box_nm\"");
    REQUIRE(at != std::string::npos);
    at = text.find('[', at);
    std::vector<double> values;
    int depth = 0;
    for (std::size_t i = at; i < text.size(); ++i) {
      const char c = text[i];
      if (c == '[') ++depth;
      if (c == ']' && --depth == 0) break;
      if (c == '-' || (c >= '0' && c <= '9')) {
        char* end = nullptr;
        values.push_back(std::strtod(text.c_str() + i, &end));
        i = static_cast<std::size_t>(end - text.c_str()) - 1;
      }
    }
    return values;
  }
};

std::vector<double> read_h5_positions(const std::string& path) {
  const hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  REQUIRE(file >= 0);
  const hid_t dataset = H5Dopen2(file, "/positions_nm", H5P_DEFAULT);
  REQUIRE(dataset >= 0);
  const hid_t space = H5Dget_space(dataset);
  hsize_t dims[2] = {0, 0};
  REQUIRE(H5Sget_simple_extent_ndims(space) == 2);
  H5Sget_simple_extent_dims(space, dims, nullptr);
  REQUIRE(dims[1] == 3);
  std::vector<double> values(dims[0] * dims[1]);
  REQUIRE(H5Dread(dataset, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data()) >= 0);
  H5Sclose(space);
  H5Dclose(dataset);
  H5Fclose(file);
  return values;
}

std::string error_of(const std::string& path) {
  try {
    read_pdb(path);
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no InputError)";
}

void check_box(const Boxd& box, const std::vector<double>& expected) {
  REQUIRE(expected.size() == 9);
  const double got[9] = {box.a.x, box.a.y, box.a.z, box.b.x, box.b.y, box.b.z, box.c.x, box.c.y, box.c.z};
  for (int k = 0; k < 9; ++k) {
    INFO("box component " << k);
    CHECK(got[k] == Catch::Approx(expected[static_cast<std::size_t>(k)]).epsilon(1e-14).margin(1e-15));
  }
}

std::string atom_line(int serial, const std::string& name, const std::string& res, char chain, int resseq, double x,
                      double y, double z, const std::string& element) {
  char buffer[256];
  std::snprintf(buffer, sizeof buffer, "HETATM%5d %-4s %3s %c%4d    %8.3f%8.3f%8.3f  1.00  0.00          %2s  ", serial,
                name.c_str(), res.c_str(), chain, resseq, x, y, z, element.c_str());
  return buffer;
}

}  // namespace

TEST_CASE("element table equals OpenMM's app/element.py", "[pdb][elements]") {
  std::istringstream table(mdsim_test::read_text(kData + "pdb_openmm_elements.txt"));
  int rows = 0;
  for (std::string line; std::getline(table, line);) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream fields(line);
    std::string symbol;
    int number = 0;
    double mass = 0;
    fields >> symbol >> number >> mass;
    INFO(symbol);
    const Element* element = find_element(symbol);
    REQUIRE(element != nullptr);
    CHECK(std::string(element->symbol) == symbol);
    CHECK(element->atomic_number == number);
    CHECK(element->mass_amu == mass);
    ++rows;
  }
  CHECK(rows == 117);
  REQUIRE(find_element("CL") != nullptr);
  CHECK(std::string(find_element("CL")->symbol) == "Cl");
  CHECK(std::string(find_element(" na ")->symbol) == "Na");
  CHECK(std::string(find_element("zN")->symbol) == "Zn");
  CHECK(find_element("d")->atomic_number == 1);
  CHECK(find_element("") == nullptr);
  CHECK(find_element("Xx") == nullptr);
  CHECK(find_element("EP") == nullptr);
  CHECK(find_element("Carbon") == nullptr);
}

TEST_CASE("shared systems: counts and box equal the OpenMM reference", "[pdb]") {
  for (const std::string& name : kSystems) {
    INFO(name);
    const Topology top = read_pdb(system_pdb(name));
    const ReferenceJson ref(name);
    CHECK(top.source == system_pdb(name));
    CHECK(top.num_atoms() == ref.count("atoms"));
    CHECK(static_cast<long>(top.residues.size()) == ref.count("residues"));
    CHECK(static_cast<long>(top.chains.size()) == ref.count("chains"));
    CHECK(top.positions_nm.size() == top.atoms.size());
    REQUIRE(top.box.has_value() == ref.has_box());
    if (top.box) {
      // computePeriodicBoxVectors reproduced operation by operation: bit-for-bit equal.
      const std::vector<double> box = ref.box();
      REQUIRE(box.size() == 9);
      const double got[9] = {top.box->a.x, top.box->a.y, top.box->a.z, top.box->b.x, top.box->b.y,
                             top.box->b.z, top.box->c.x, top.box->c.y, top.box->c.z};
      for (int k = 0; k < 9; ++k) CHECK(got[k] == box[static_cast<std::size_t>(k)]);
    }
    // Structure is consistent: every atom in exactly its residue, residues in their chain.
    int atoms_in_residues = 0;
    for (std::size_t r = 0; r < top.residues.size(); ++r) {
      const TopologyResidue& res = top.residues[r];
      REQUIRE(!res.atoms.empty());
      for (int a : res.atoms) REQUIRE(top.atoms[static_cast<std::size_t>(a)].residue == static_cast<int>(r));
      atoms_in_residues += static_cast<int>(res.atoms.size());
    }
    CHECK(atoms_in_residues == top.num_atoms());
  }
}

TEST_CASE("shared systems: positions equal the reference .h5, elements and CONECT equal OpenMM's", "[pdb]") {
  // Element counts and CONECT pairs as OpenMM reads them (tests/data/pdb_openmm_summary.txt).
  std::map<std::string, std::map<std::string, int>> elements;
  std::map<std::string, std::vector<std::pair<int, int>>> conect;
  std::istringstream summary(mdsim_test::read_text(kData + "pdb_openmm_summary.txt"));
  for (std::string line; std::getline(summary, line);) {
    std::istringstream fields(line);
    std::string kind, name;
    fields >> kind >> name;
    if (kind == "elements") {
      std::string symbol;
      int count = 0;
      while (fields >> symbol >> count) elements[name][symbol] = count;
    } else if (kind == "conect") {
      int i = 0, j = 0;
      fields >> i >> j;
      conect[name].emplace_back(i, j);
    }
  }
  for (const std::string& name : kSystems) {
    INFO(name);
    const Topology top = read_pdb(system_pdb(name));
    const std::vector<double> ref = read_h5_positions(kShared + "/reference/" + name + ".h5");
    REQUIRE(ref.size() == 3 * top.positions_nm.size());
    // Å * 0.1 from a correctly rounded parse, as OpenMM does: equal, not just within 1e-6 nm.
    double max_diff = 0;
    for (std::size_t i = 0; i < top.positions_nm.size(); ++i) {
      for (int k = 0; k < 3; ++k) max_diff = std::max(max_diff, std::fabs(top.positions_nm[i][k] - ref[3 * i + static_cast<std::size_t>(k)]));
    }
    CHECK(max_diff == 0.0);

    std::map<std::string, int> counts;
    for (const TopologyAtom& atom : top.atoms) counts[atom.element]++;
    CHECK(counts == elements[name]);
    CHECK(top.conect == conect[name]);
  }
}

TEST_CASE("shared systems: names, numbers, chains and serials as written", "[pdb]") {
  const Topology top = read_pdb(system_pdb("ala2_water"));
  REQUIRE(top.num_atoms() == 2269);
  CHECK(top.atoms[1].name == "CH3");
  CHECK(top.atoms[1].element == "C");
  CHECK(top.atoms[1].serial == 2);
  CHECK(top.atoms[1].line == 4);
  CHECK(top.residues[0].name == "ACE");
  CHECK(top.residues[1].name == "ALA");
  CHECK(top.residues[1].number == 2);
  CHECK(top.residues[1].line == 9);
  CHECK(top.chains[0].id == "A");
  CHECK(top.chains[0].residues == std::vector<int>{0, 1, 2});
  // Each water is its own chain (TER after each); IDs cycle A..Z, so "B" repeats: still new chains.
  CHECK(top.chains[1].id == "B");
  CHECK(top.chains[27].id == "B");
  CHECK(top.residues[3].name == "HOH");
  CHECK(top.atoms.back().serial == 2269 + 750 - 1);  // TER records take serial numbers

  // dhfr's waters spill their 5-digit resSeq into the insertion-code column (OpenMM reads
  // " 702" + iCode '3' for 7023); residue boundaries follow.
  const Topology dhfr = read_pdb(system_pdb("dhfr"));
  const TopologyResidue& last = dhfr.residues.back();
  CHECK(last.name == "HOH");
  CHECK(last.number == 702);
  CHECK(last.insertion_code == '3');
  CHECK(last.atoms.size() == 3);
}

TEST_CASE("alternate locations: the first location of each atom is kept", "[pdb]") {
  const Topology top = read_pdb(kData + "pdb_altloc.pdb");
  REQUIRE(top.num_atoms() == 9);
  REQUIRE(top.residues.size() == 2);
  std::vector<std::string> names;
  for (const TopologyAtom& atom : top.atoms) names.push_back(atom.name);
  CHECK(names == std::vector<std::string>{"N", "CA", "CB", "OG", "HG", "C", "N", "CB", "C"});
  CHECK(top.residues[0].name == "SER");
  CHECK(top.residues[1].name == "ALA");  // the GLY point-mutation alternate is dropped
  CHECK(top.atoms[1].serial == 2);       // CA altloc A (occupancy 0.4) wins: the first, as in OpenMM
  CHECK(top.positions_nm[1].x == Catch::Approx(0.2).epsilon(1e-15));
  CHECK(top.positions_nm[4].x == Catch::Approx(0.45).epsilon(1e-15));  // HG exists only in altloc B
  CHECK(top.atoms[6].serial == 10);
  // CONECT 3-5 refers to dropped altloc-B atoms (ignored); CONECT 4 2 6 to kept ones.
  CHECK(top.conect == std::vector<std::pair<int, int>>{{1, 2}, {2, 3}});
}

TEST_CASE("insertion codes, TER and chain IDs", "[pdb]") {
  const Topology top = read_pdb(kData + "pdb_insertion_codes.pdb");
  REQUIRE(top.num_atoms() == 8);
  REQUIRE(top.residues.size() == 7);
  REQUIRE(top.chains.size() == 3);
  const char codes[7] = {' ', 'A', 'B', ' ', ' ', ' ', ' '};
  const int numbers[7] = {52, 52, 52, 53, 53, 54, 54};
  for (int r = 0; r < 7; ++r) {
    INFO("residue " << r);
    CHECK(top.residues[static_cast<std::size_t>(r)].insertion_code == codes[r]);
    CHECK(top.residues[static_cast<std::size_t>(r)].number == numbers[r]);
  }
  CHECK(top.residues[1].atoms.size() == 2);
  CHECK(top.residues[4].name == "ALA");  // same number, other name: a new residue
  CHECK(top.chains[0].id == "A");
  CHECK(top.chains[1].id == "A");  // after TER, even with the same ID
  CHECK(top.chains[2].id == "B");
  CHECK(top.chains[0].residues.size() == 5);
  CHECK(top.atoms[6].serial == 8);
}

TEST_CASE("MODEL: only the first model is read; END ends the file", "[pdb]") {
  const Topology top = read_pdb(kData + "pdb_models.pdb");
  REQUIRE(top.num_atoms() == 2);
  CHECK(top.residues.size() == 1);
  CHECK(top.chains.size() == 1);
  CHECK(top.chains[0].id == " ");
  CHECK(top.positions_nm[1].z == Catch::Approx(0.35).epsilon(1e-15));
  CHECK(top.conect == std::vector<std::pair<int, int>>{{0, 1}});
  REQUIRE(top.box.has_value());
  CHECK(top.box->a.x == 2.0);
  CHECK(top.box->b.y == 3.0);
  CHECK(top.box->c.z == 4.0);
  CHECK(!top.box->triclinic());
}

TEST_CASE("hybrid-36 serial numbers and residue numbers", "[pdb]") {
  const Topology top = read_pdb(kData + "pdb_hybrid36.pdb");
  REQUIRE(top.num_atoms() == 6);
  const int serials[6] = {99998, 99999, 100000, 100001, 100035, 100036};
  for (int i = 0; i < 6; ++i) CHECK(top.atoms[static_cast<std::size_t>(i)].serial == serials[i]);
  REQUIRE(top.residues.size() == 3);
  CHECK(top.residues[0].number == 9999);
  CHECK(top.residues[1].number == 10000);
  CHECK(top.residues[2].number == 10001);
  CHECK(top.conect == std::vector<std::pair<int, int>>{{0, 1}, {2, 3}, {3, 4}, {4, 5}});
}

TEST_CASE("decimal serial numbers that wrap after 99999", "[pdb]") {
  // Serials 1 and 2 occur twice; CONECT records are mapped in file order, partners to the nearest
  // atom with that serial. (OpenMM maps every serial to the last atom carrying it, which would
  // bond atoms 5-6 twice and lose 0-1; this case goes beyond what it handles.)
  const Topology top = read_pdb(kData + "pdb_wrapped_serials.pdb");
  REQUIRE(top.num_atoms() == 7);
  const int serials[7] = {1, 2, 99998, 99999, 100000, 100001, 100002};
  for (int i = 0; i < 7; ++i) CHECK(top.atoms[static_cast<std::size_t>(i)].serial == serials[i]);
  REQUIRE(top.residues.size() == 3);
  CHECK(top.residues[1].number == 9999);
  CHECK(top.residues[2].number == 0);
  CHECK(top.conect == std::vector<std::pair<int, int>>{{0, 1}, {2, 3}, {3, 4}, {4, 5}, {5, 6}});

  const Topology to_one = read_pdb(kData + "pdb_wrapped_to_one.pdb");
  REQUIRE(to_one.num_atoms() == 4);
  CHECK(to_one.atoms[2].serial == 100001);
  CHECK(to_one.atoms[3].serial == 100002);
  CHECK(to_one.residues.size() == 2);
  CHECK(to_one.conect == std::vector<std::pair<int, int>>{{1, 2}, {2, 3}});
}

TEST_CASE("blank or unknown element columns: elements inferred from atom names like OpenMM", "[pdb]") {
  const Topology top = read_pdb(kData + "pdb_blank_elements.pdb");
  std::vector<std::string> elements;
  for (const TopologyAtom& atom : top.atoms) elements.push_back(atom.element);
  // OpenMM 7.7 PDBFile gives: N C H O S | Cl Na Ca Zn Mg K | C Cl P Cl | O H H
  // (1HB -> H: leading digits stripped; CA alone in its residue -> calcium, CA in ALA -> carbon;
  // 'XX' column unknown -> inferred from P1; column 'cl' -> Cl regardless of the name C2).
  CHECK(elements == std::vector<std::string>{"N", "C", "H", "O", "S", "Cl", "Na", "Ca", "Zn", "Mg", "K", "C", "Cl",
                                             "P", "Cl", "O", "H", "H"});
  CHECK(top.atoms[2].name == "1HB");  // names are kept as written (no pdbNames.xml renaming)
  CHECK(top.chains.size() == 4);
  CHECK(top.residues.size() == 9);
}

TEST_CASE("unnumbered residues, VMD hexadecimal serials, 4-character names, extra particles", "[pdb]") {
  // Expected values are what OpenMM 7.7's PDBFile reads from the same text.
  auto line = [](const std::string& serial, const std::string& name, const std::string& res, const std::string& resseq,
                 double x, const std::string& element) {
    char buffer[256];
    std::snprintf(buffer, sizeof buffer, "HETATM%5s %-4s %-4sA%4s    %8.3f%8.3f%8.3f  1.00  0.00          %2s  ",
                  serial.c_str(), name.c_str(), res.c_str(), resseq.c_str(), x, 0.0, 0.0, element.c_str());
    return std::string(buffer);
  };
  SECTION("blank or starred resSeq: a repeated atom name starts the next residue") {
    std::string text;
    const char* resseq[3] = {"", "", "****"};
    for (int w = 0; w < 3; ++w) {
      text += line(std::to_string(3 * w + 1), "O", "HOH", resseq[w], 3 * w + 1, "O") + "\n";
      text += line(std::to_string(3 * w + 2), "H1", "HOH", resseq[w], 3 * w + 2, "H") + "\n";
      text += line(std::to_string(3 * w + 3), "H2", "HOH", resseq[w], 3 * w + 3, "H") + "\n";
    }
    const Topology top = read_pdb(write_text("test_pdb_unnumbered.pdb", text + "END\n"));
    REQUIRE(top.residues.size() == 3);
    for (int r = 0; r < 3; ++r) {
      CHECK(top.residues[static_cast<std::size_t>(r)].atoms.size() == 3);
      CHECK(top.residues[static_cast<std::size_t>(r)].number == r + 1);
    }
  }
  SECTION("hexadecimal serials after 99999, CRLF line ends") {
    const std::string text = line("99999", "C1", "LIG", "1", 1, "C") + "\r\n" + line("186a0", "C2", "LIG", "1", 2, "C") +
                             "\r\n" + line("186a1", "C3", "LIG", "1", 3, "C") + "\r\nCONECT186a0186a1\r\nEND\r\n";
    const Topology top = read_pdb(write_text("test_pdb_hex.pdb", text));
    REQUIRE(top.num_atoms() == 3);
    CHECK(top.atoms[1].serial == 100000);
    CHECK(top.atoms[2].serial == 100001);
    CHECK(top.atoms[2].element == "C");
    CHECK(top.conect == std::vector<std::pair<int, int>>{{1, 2}});
  }
  SECTION("4-character residue names and EP extra particles, through the writer too") {
    const std::string text = line("1", "O", "TIP4", "1", 1, "O") + "\n" + line("2", "H1", "TIP4", "1", 2, "H") + "\n" +
                             line("3", "H2", "TIP4", "1", 3, "H") + "\n" + line("4", "M", "TIP4", "1", 4, "EP") + "\nEND\n";
    const Topology top = read_pdb(write_text("test_pdb_tip4p.pdb", text));
    REQUIRE(top.residues.size() == 1);
    CHECK(top.residues[0].name == "TIP4");
    REQUIRE(top.num_atoms() == 4);
    CHECK(top.atoms[3].name == "M");
    CHECK(top.atoms[3].element.empty());
    write_pdb("test_pdb_tip4p_out.pdb", top, top.positions_nm, std::nullopt);
    const std::vector<std::string> lines = lines_of(mdsim_test::read_text("test_pdb_tip4p_out.pdb"));
    CHECK(lines[4].substr(12, 10) == "M    TIP4A");
    CHECK(lines[4].substr(76, 2) == "EP");
    const Topology back = read_pdb("test_pdb_tip4p_out.pdb");
    CHECK(back.residues[0].name == "TIP4");
    CHECK(back.atoms[3].element.empty());
  }
  SECTION("Drude particles are not supported") {
    const std::string text = line("1", "C1", "LIG", "1", 1, "C") + "\n" + line("2", "DC1", "LIG", "1", 2, "") + "\nEND\n";
    const std::string path = write_text("test_pdb_drude.pdb", text);
    const std::string message = error_of(path);
    CHECK(message.rfind(path + ":2:13: ", 0) == 0);
    CHECK(message.find("Drude") != std::string::npos);
  }
}

TEST_CASE("triclinic CRYST1 gives OpenMM's reduced box vectors", "[pdb]") {
  // Expected vectors: OpenMM 7.7 PDBFile(io.StringIO(cryst1 + one HETATM)).topology
  // .getPeriodicBoxVectors(), printed with repr() by /usr/bin/python3 (rows a, b, c in nm).
  struct Case {
    const char* cryst1;
    std::vector<double> box;
  };
  const std::vector<Case> cases = {
      {"CRYST1   77.000   77.000   77.000 109.47 109.47 109.47 P 1           1 ",  // truncated octahedron
       {7.7, 0.0, 0.0, -2.566512006275427, 7.259684299034228, 0.0, -2.566512006275427, -3.6295140726962454,
        6.2872604302465485}},
      {"CRYST1   70.000   70.000   70.000  60.00  60.00  90.00 P 1           1 ",  // rhombic dodecahedron
       {7.0, 0.0, 0.0, 0.0, 7.0, 0.0, -3.499999999999999, -3.499999999999999, 4.949747468305831}},
      {"CRYST1   50.000   50.000   80.000  90.00  90.00 120.00 P 1           1 ",  // hexagonal
       {5.0, 0.0, 0.0, -2.499999999999999, 4.330127018922194, 0.0, 0.0, 0.0, 8.0}},
      {"CRYST1   40.000   60.000   50.000  80.00  70.00  30.00 P 1           1 ",  // needs reduction of b and c
       {4.0, 0.0, 0.0, 1.196152422706632, 2.9999999999999996, 0.0, 1.7101007166283442, -1.2254995505909358,
        4.535824775108562}},
  };
  int index = 0;
  for (const Case& c : cases) {
    INFO(c.cryst1);
    const std::string path = write_text("test_pdb_triclinic_" + std::to_string(index++) + ".pdb",
                                        std::string(c.cryst1) + "\n" +
                                            atom_line(1, "O", "HOH", 'A', 1, 1.0, 1.0, 1.0, "O") + "\nEND\n");
    const Topology top = read_pdb(path);
    REQUIRE(top.box.has_value());
    check_box(*top.box, c.box);
    CHECK(top.box->triclinic());
  }
}

TEST_CASE("bad input: one-line InputError naming file and line", "[pdb]") {
  SECTION("malformed coordinate") {
    const std::string path = kData + "pdb_bad_coordinate.pdb";
    const std::string message = error_of(path);
    CHECK(message.rfind(path + ":3:39: ", 0) == 0);
    CHECK(message.find("y coordinate") != std::string::npos);
    CHECK(message.find("12.3a5") != std::string::npos);
    CHECK(message.find('\n') == std::string::npos);
  }
  SECTION("unknown element") {
    const std::string path = kData + "pdb_unknown_element.pdb";
    const std::string message = error_of(path);
    CHECK(message.rfind(path + ":3:", 0) == 0);
    CHECK(message.find("'X1'") != std::string::npos);
    CHECK(message.find("UNK 7") != std::string::npos);
  }
  SECTION("missing file") {
    CHECK(error_of("no_such_file.pdb").rfind("no_such_file.pdb: cannot open", 0) == 0);
  }
  SECTION("no atoms") {
    const std::string path = write_text("test_pdb_empty.pdb", "REMARK nothing here\nEND\n");
    CHECK(error_of(path) == path + ": no ATOM or HETATM records found");
  }
  SECTION("truncated atom record") {
    const std::string path = write_text("test_pdb_short.pdb", "ATOM      1  N   ALA A   1       1.000   2.000\n");
    CHECK(error_of(path).rfind(path + ":1:", 0) == 0);
  }
  SECTION("bad CRYST1") {
    const std::string path = write_text("test_pdb_bad_cryst1.pdb", "CRYST1   20.000   abc      20.000  90.00  90.00  90.00\n" +
                                                                       atom_line(1, "O", "HOH", 'A', 1, 1, 1, 1, "O") + "\n");
    CHECK(error_of(path).rfind(path + ":1:16: ", 0) == 0);
    const std::string flat = write_text("test_pdb_flat_cryst1.pdb", "CRYST1   20.000   20.000   20.000  90.00  90.00 179.99\n"
                                                                        "CRYST1   20.000   20.000   20.000 170.00  10.00  90.00\n" +
                                                                        atom_line(1, "O", "HOH", 'A', 1, 1, 1, 1, "O") + "\n");
    CHECK(error_of(flat).rfind(flat + ":2:", 0) == 0);
  }
  SECTION("bad CONECT serial") {
    const std::string path = write_text("test_pdb_bad_conect.pdb", atom_line(1, "C1", "LIG", 'A', 1, 1, 1, 1, "C") +
                                                                       "\n" + atom_line(2, "C2", "LIG", 'A', 1, 2, 1, 1, "C") +
                                                                       "\nCONECT    1  2x3\n");
    CHECK(error_of(path).rfind(path + ":3:12: ", 0) == 0);
  }
  SECTION("duplicate atom name in a numbered residue") {
    const std::string path = write_text("test_pdb_duplicate_name.pdb",
                                        atom_line(1, "N", "ALA", 'A', 5, 1, 1, 1, "N") + "\n" +
                                            atom_line(2, "CA", "ALA", 'A', 5, 2, 1, 1, "C") + "\n" +
                                            atom_line(3, "CA", "ALA", 'A', 5, 3, 1, 1, "C") + "\n");
    CHECK(error_of(path) == path + ":3:13: duplicate atom name 'CA' in residue ALA 5 (chain 'A'): already on line 2; "
                                   "give each atom of a residue its own name, or give a separate residue its own number");
  }
  SECTION("misaligned residue name") {
    std::string line = atom_line(1, "C1", "LI", 'A', 1, 1, 1, 1, "C");
    line[20] = 'G';  // "  LIG" shifted one column to the right
    const std::string path = write_text("test_pdb_misaligned.pdb", line + "\n");
    CHECK(error_of(path).rfind(path + ":1:18: misaligned residue name", 0) == 0);
  }
}

TEST_CASE("writer reproduces OpenMM's records for the shared systems and reads back", "[pdb][writer]") {
  for (const std::string& name : kSystems) {
    INFO(name);
    const Topology top = read_pdb(system_pdb(name));
    const std::string out = "test_pdb_roundtrip_" + name + ".pdb";
    write_pdb(out, top, top.positions_nm, top.box);

    // The shared files were written by OpenMM 7.7 (keeping IDs): every CRYST1/ATOM/HETATM/TER
    // record must come out byte for byte; CONECT records as the same set of (atom, partner).
    const std::vector<std::string> original = lines_of(mdsim_test::read_text(system_pdb(name)));
    const std::vector<std::string> written = lines_of(mdsim_test::read_text(out));
    auto records = [](const std::vector<std::string>& lines) {
      std::vector<std::string> kept;
      std::multiset<std::pair<int, int>> bonds;
      for (const std::string& line : lines) {
        const std::string record = line.substr(0, 6);
        if (record == "CONECT") {
          const int first = std::stoi(line.substr(6, 5));
          for (std::size_t col = 11; col + 5 <= line.size(); col += 5) bonds.emplace(first, std::stoi(line.substr(col, 5)));
        } else if (record != "REMARK") {
          kept.push_back(line);
        }
      }
      return std::make_pair(kept, bonds);
    };
    const auto [original_records, original_bonds] = records(original);
    const auto [written_records, written_bonds] = records(written);
    REQUIRE(written_records.size() == original_records.size());
    int mismatches = 0;
    for (std::size_t i = 0; i < written_records.size(); ++i) {
      if (written_records[i] != original_records[i] && mismatches++ < 5) {
        CHECK(written_records[i] == original_records[i]);
      }
    }
    CHECK(mismatches == 0);
    CHECK(written_bonds == original_bonds);

    const Topology back = read_pdb(out);
    REQUIRE(back.num_atoms() == top.num_atoms());
    REQUIRE(back.residues.size() == top.residues.size());
    REQUIRE(back.chains.size() == top.chains.size());
    int atoms_differing = 0, positions_differing = 0;
    for (std::size_t i = 0; i < top.atoms.size(); ++i) {
      if (back.atoms[i].name != top.atoms[i].name || back.atoms[i].element != top.atoms[i].element ||
          back.atoms[i].residue != top.atoms[i].residue || back.atoms[i].serial != top.atoms[i].serial) {
        ++atoms_differing;
      }
      for (int k = 0; k < 3; ++k) {
        // Written with 3 decimals in Å: the shared files have 3 decimals, so nothing is lost.
        if (back.positions_nm[i][k] != top.positions_nm[i][k]) ++positions_differing;
      }
    }
    CHECK(atoms_differing == 0);
    CHECK(positions_differing == 0);
    for (std::size_t r = 0; r < top.residues.size(); ++r) {
      CHECK(back.residues[r].name == top.residues[r].name);
      CHECK(back.residues[r].number == top.residues[r].number);
      CHECK(back.residues[r].insertion_code == top.residues[r].insertion_code);
    }
    CHECK(back.conect == top.conect);
    REQUIRE(back.box.has_value() == top.box.has_value());
    if (top.box) {
      CHECK(back.box->a.x == top.box->a.x);
      CHECK(back.box->b.y == top.box->b.y);
      CHECK(back.box->c.z == top.box->c.z);
    }
  }
}

TEST_CASE("writer: triclinic box, rounding to 3 decimals, bonds and hetero CONECT", "[pdb][writer]") {
  Topology top = read_pdb(kData + "pdb_blank_elements.pdb");
  // A triclinic box (truncated octahedron) and positions with more decimals than a PDB holds.
  const Boxd box{{7.7, 0.0, 0.0}, {-2.566512006275427, 7.259684299034228, 0.0},
                 {-2.566512006275427, -3.6295140726962454, 6.2872604302465485}};
  std::vector<Vec3d> positions = top.positions_nm;
  for (std::size_t i = 0; i < positions.size(); ++i) positions[i] += Vec3d(1e-5 * double(i), -3.33333e-4, 0.123456789);
  // Bonds as the force-field builder would fill them: ALA N-CA (not written: standard residue),
  // LIG C1-CL1 and LIG-ALA (written: a hetero residue is involved), water O-H (not written).
  top.bonds = {{0, 1}, {11, 12}, {4, 13}, {15, 16}};
  write_pdb("test_pdb_writer_triclinic.pdb", top, positions, box);
  const Topology back = read_pdb("test_pdb_writer_triclinic.pdb");
  REQUIRE(back.num_atoms() == top.num_atoms());
  for (std::size_t i = 0; i < positions.size(); ++i) {
    for (int k = 0; k < 3; ++k) CHECK(std::fabs(back.positions_nm[i][k] - positions[i][k]) <= 0.5e-4 + 1e-12);
  }
  for (std::size_t i = 0; i < top.atoms.size(); ++i) CHECK(back.atoms[i].element == top.atoms[i].element);
  // CRYST1 keeps lengths to 1e-3 Å and angles to 0.01°: vectors agree to 7.7 nm * 1e-4 rad.
  REQUIRE(back.box.has_value());
  const double got[9] = {back.box->a.x, back.box->a.y, back.box->a.z, back.box->b.x, back.box->b.y,
                         back.box->b.z, back.box->c.x, back.box->c.y, back.box->c.z};
  const double want[9] = {box.a.x, box.a.y, box.a.z, box.b.x, box.b.y, box.b.z, box.c.x, box.c.y, box.c.z};
  for (int k = 0; k < 9; ++k) CHECK(std::fabs(got[k] - want[k]) <= 1e-3);
  CHECK(back.conect == std::vector<std::pair<int, int>>{{4, 13}, {11, 12}});
  // Record types: ALA is ATOM, ions/ligand/water HETATM; 2-letter elements keep the name at column 13.
  const std::vector<std::string> lines = lines_of(mdsim_test::read_text("test_pdb_writer_triclinic.pdb"));
  CHECK(lines[1].rfind("CRYST1   77.000   77.000   77.000 109.47 109.47 109.47 P 1           1", 0) == 0);
  CHECK(lines[2].substr(0, 6) == "ATOM  ");
  CHECK(lines[2].substr(12, 4) == " N  ");
  CHECK(lines[8].substr(0, 6) == "HETATM");
  CHECK(lines[8].substr(12, 4) == "CL  ");
  CHECK(lines[8].substr(76, 2) == "Cl");
}

TEST_CASE("writer and reader: more than 99,999 atoms wrap serials and keep CONECT right", "[pdb][writer]") {
  // A 3-atom ligand, 33,340 waters, and the ligand again: 100,026 atoms, so the second ligand's
  // serials wrap to small numbers that the first ligand also has.
  Topology top;
  top.chains.push_back({"A", {}});
  auto add_residue = [&](const std::string& name, int number, const std::vector<std::pair<std::string, std::string>>& atoms) {
    const int r = static_cast<int>(top.residues.size());
    TopologyResidue residue;
    residue.name = name;
    residue.chain = 0;
    residue.number = number;
    top.residues.push_back(residue);
    top.chains[0].residues.push_back(r);
    for (const auto& [atom_name, element] : atoms) {
      const int a = top.num_atoms();
      TopologyAtom atom;
      atom.name = atom_name;
      atom.element = element;
      atom.residue = r;
      top.atoms.push_back(atom);
      top.residues[static_cast<std::size_t>(r)].atoms.push_back(a);
      top.positions_nm.emplace_back(0.001 * (a % 1000), 0.01 * ((a / 1000) % 1000), 0.1 * (a / 1000000));
    }
  };
  const std::vector<std::pair<std::string, std::string>> ligand = {{"C1", "C"}, {"C2", "C"}, {"CL3", "Cl"}};
  add_residue("LIG", 1, ligand);
  for (int w = 0; w < 33340; ++w) add_residue("HOH", w + 2, {{"O", "O"}, {"H1", "H"}, {"H2", "H"}});
  add_residue("LIG", 33342, ligand);
  const int n = top.num_atoms();
  REQUIRE(n == 100026);
  top.bonds = {{0, 1}, {1, 2}, {n - 3, n - 2}, {n - 2, n - 1}, {3, 4}, {3, 5}};
  write_pdb("test_pdb_huge.pdb", top, top.positions_nm, std::nullopt);

  const std::vector<std::string> lines = lines_of(mdsim_test::read_text("test_pdb_huge.pdb"));
  CHECK(lines[99999].substr(0, 11) == "HETATM99999");  // atom index 99,998 (lines[0] is the REMARK)
  CHECK(lines[100000].substr(0, 11) == "HETATM    0");  // then the serial wraps to 0
  CHECK(lines[100000].substr(22, 4) == "3334");         // in water 33,332, resSeq 33,334 -> 3334

  const Topology back = read_pdb("test_pdb_huge.pdb");
  REQUIRE(back.num_atoms() == n);
  CHECK(back.residues.size() == top.residues.size());
  CHECK(back.atoms[99999].serial == 100000);
  CHECK(back.atoms[n - 1].serial == n);
  CHECK(back.residues.back().number == 3342);
  // CONECT: both ligands' bonds, each to its own atoms although their serials coincide.
  CHECK(back.conect == std::vector<std::pair<int, int>>{{0, 1}, {1, 2}, {n - 3, n - 2}, {n - 2, n - 1}});
  for (int i = 0; i < n; i += 997) {
    for (int k = 0; k < 3; ++k) REQUIRE(std::fabs(back.positions_nm[static_cast<std::size_t>(i)][k] - top.positions_nm[static_cast<std::size_t>(i)][k]) < 1e-9);
  }
}

TEST_CASE("writer rejects what a PDB cannot hold", "[pdb][writer]") {
  Topology top = read_pdb(kData + "pdb_models.pdb");
  std::vector<Vec3d> positions = top.positions_nm;
  positions[1].y = std::nan("");
  REQUIRE_THROWS_AS(write_pdb("test_pdb_nan.pdb", top, positions, std::nullopt), RuntimeError);
  positions[1].y = 2e7;  // 2e8 Å does not fit 8 columns
  REQUIRE_THROWS_AS(write_pdb("test_pdb_nan.pdb", top, positions, std::nullopt), RuntimeError);
  positions[1].y = 2e2;  // 2000 Å: written with fewer decimals, as OpenMM does
  write_pdb("test_pdb_large.pdb", top, positions, std::nullopt);
  CHECK(read_pdb("test_pdb_large.pdb").positions_nm[1].y == Catch::Approx(200.0));
  positions.pop_back();
  REQUIRE_THROWS_AS(write_pdb("test_pdb_nan.pdb", top, positions, std::nullopt), std::invalid_argument);
}
