// prepare/prepare (with prepare/heterogens and prepare/residue_problems): what prepare_system refuses and how
// (folders, lone amino acids, every incomplete or unknown residue in one message), heterogens removed as
// PDBFixer's removeHeterogens removes them, and what the summary says (every histidine, waters already in the
// input). Small structures written here, or the shared systems' heavy atoms.
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "common/errors.hpp"
#include "io/forcefield_xml.hpp"
#include "io/structure_reader.hpp"
#include "prepare/heterogens.hpp"
#include "prepare/prepare.hpp"
#include "prepare/residue_problems.hpp"
#include "support/catch.hpp"
#include "support/scratch.hpp"
#include "support/text_file.hpp"
#include "support/thrown.hpp"

namespace fs = std::filesystem;
using namespace mdsim;
using mdsim_test::contains;
using mdsim_test::input_error_of;
using mdsim_test::scratch;

namespace {

const std::string kSystems = std::string(MDSIM_TEST_DATA_DIR) + "/systems/";

fs::path write(const fs::path& path, const std::string& text) {
  std::ofstream(path) << text;
  return path;
}

// The shared system's lines without hydrogens, water, ions and CONECT; `rename` ("HIS    27" -> "HIE    27")
// applied to each atom line.
std::string heavy_atoms(const std::string& system, const std::string& from = "", const std::string& to = "") {
  std::ifstream in(kSystems + system);
  std::string out;
  for (std::string line; std::getline(in, line);) {
    const bool atom = line.rfind("ATOM", 0) == 0 || line.rfind("HETATM", 0) == 0;
    if (atom) {
      const std::string element = line.size() >= 78 ? line.substr(76, 2) : "";
      const std::string residue = line.substr(17, 3);
      if (element == " H" || residue == "HOH" || residue == " Cl" || residue == " Na") continue;
      if (!from.empty() && line.find(from) != std::string::npos) line.replace(line.find(from), from.size(), to);
    }
    if (line.rfind("CONECT", 0) == 0 || line.rfind("END", 0) == 0) continue;
    out += line + "\n";
  }
  return out;
}

// A PDB atom line.
std::string atom(const std::string& record, int serial, const std::string& name, const std::string& residue,
                 char chain, int number, double x, double y, double z, const std::string& element) {
  return fmt::format("{:<6}{:>5} {:<4} {:>3} {}{:>4}    {:8.3f}{:8.3f}{:8.3f}  1.00  0.00          {:>2}\n", record,
                     serial, name.size() < 4 ? " " + name : name, residue, chain, number, x, y, z, element);
}

// ALA heavy atoms (ala2_vacuum.pdb's, shifted by `dx` nm along x) as residue `number` of `chain`.
std::string alanine(char chain, int number, int serial, double dx) {
  const double x = 10.0 * dx;
  return atom("ATOM", serial, "N", "ALA", chain, number, 3.555 + x, 3.970, 0.0, "N") +
         atom("ATOM", serial + 1, "CA", "ALA", chain, number, 4.853 + x, 4.614, 0.0, "C") +
         atom("ATOM", serial + 2, "CB", "ALA", chain, number, 5.661 + x, 4.221, -1.232, "C") +
         atom("ATOM", serial + 3, "C", "ALA", chain, number, 4.713 + x, 6.129, 0.0, "C") +
         atom("ATOM", serial + 4, "O", "ALA", chain, number, 3.601 + x, 6.653, 0.0, "O") + "TER\n";
}

PrepareOptions dry() {
  PrepareOptions o;
  o.solvate = false;
  return o;
}

PreparedSystem prepare(const fs::path& input, const PrepareOptions& options) {
  PrepareFiles files;
  files.input = input.string();
  return prepare_system(files, options);
}

}  // namespace

TEST_CASE("prepare: a lone amino acid is refused with its cause (no template for N- and C-terminal at once)") {
  // amber14 has inner, N-terminal (NALA) and C-terminal (CALA) forms of each amino acid, none for both at once.
  const ForceFieldData ff = load_forcefields({"amber14-all.xml", "amber14/tip3p.xml"}, "");
  int both = 0;
  for (const auto& t : ff.templates) both += t.name == "ALA" || t.name == "NALA" || t.name == "CALA";
  CHECK(both == 3);

  const fs::path dir = scratch("lone");
  // ACE-ALA-NME in chain A (its ends are caps), a lone ALA in chain B 2 nm away.
  std::ifstream in(kSystems + "ala2_vacuum.pdb");
  std::string ala2;
  for (std::string line; std::getline(in, line);)
    if ((line.rfind("ATOM", 0) == 0 || line.rfind("HETATM", 0) == 0) && line.substr(76, 2) != " H")
      ala2 += line.substr(0, 21) + "A" + line.substr(22) + "\n";
  const fs::path one = write(dir / "one.pdb", ala2 + "TER\n" + alanine('B', 1, 20, 2.0));
  CHECK(input_error_of([&] { prepare(one, dry()); }) ==
        one.string() + ":12: residue ALA 1 (chain 'B') is a lone amino acid: bonded to no other residue, it is both "
                       "N- and C-terminal at once, and the force field has no template for such a residue; remove "
                       "it, or cap it (ACE and NME) or join it to the chain it belongs to");

  // Two lone residues: one message naming both, each with its line.
  const fs::path two = write(dir / "two.pdb", alanine('B', 1, 1, 0.0) + alanine('C', 7, 6, 2.0));
  CHECK(input_error_of([&] { prepare(two, dry()); }) ==
        two.string() + ":1: 2 residues match no force field template: ALA 1 (chain 'B', line 1), ALA 7 (chain 'C', "
                       "line 7): bonded to no other residue, so N- and C-terminal at once, a form no template has; "
                       "remove, cap (ACE, NME) or join each to its chain");
}

TEST_CASE("prepare: every residue that lacks heavy atoms, in one message with its line") {
  // 4X8U's residues 60A-60D (OpenMM's insertions.pdbx): LYS 60A lacks NZ, LYS 60C CD CE NZ, ASN 60D its side chain.
  const std::string text =
      atom("ATOM", 1, "N", "LYS", 'H', 60, 4.240, 41.656, 14.575, "N") +
      atom("ATOM", 2, "CA", "LYS", 'H', 60, 4.388, 43.071, 14.222, "C") +
      atom("ATOM", 3, "C", "LYS", 'H', 60, 5.294, 43.324, 13.023, "C") +
      atom("ATOM", 4, "O", "LYS", 'H', 60, 5.726, 44.457, 12.828, "O") +
      atom("ATOM", 5, "CB", "LYS", 'H', 60, 4.853, 43.870, 15.449, "C") +
      atom("ATOM", 6, "CG", "LYS", 'H', 60, 3.731, 44.096, 16.449, "C") +
      atom("ATOM", 7, "CD", "LYS", 'H', 60, 4.257, 44.404, 17.833, "C") +
      atom("ATOM", 8, "CE", "LYS", 'H', 60, 3.124, 44.673, 18.792, "C") +
      atom("ATOM", 9, "N", "ILE", 'H', 60, 5.552, 42.303, 12.196, "N") +
      atom("ATOM", 10, "CA", "ILE", 'H', 60, 6.382, 42.504, 11.005, "C") +
      atom("ATOM", 11, "C", "ILE", 'H', 60, 5.550, 43.159, 9.885, "C") +
      atom("ATOM", 12, "O", "ILE", 'H', 60, 4.442, 42.696, 9.581, "O") +
      atom("ATOM", 13, "CB", "ILE", 'H', 60, 7.097, 41.190, 10.495, "C") +
      atom("ATOM", 14, "CG1", "ILE", 'H', 60, 7.974, 40.487, 11.586, "C") +
      atom("ATOM", 15, "CG2", "ILE", 'H', 60, 7.916, 41.436, 9.212, "C") +
      atom("ATOM", 16, "CD1", "ILE", 'H', 60, 9.078, 41.330, 12.278, "C") +
      atom("ATOM", 17, "N", "LYS", 'H', 60, 6.112, 44.208, 9.256, "N") +
      atom("ATOM", 18, "CA", "LYS", 'H', 60, 5.533, 44.859, 8.069, "C") +
      atom("ATOM", 19, "C", "LYS", 'H', 60, 6.548, 44.763, 6.937, "C") +
      atom("ATOM", 20, "O", "LYS", 'H', 60, 6.177, 44.543, 5.787, "O") +
      atom("ATOM", 21, "CB", "LYS", 'H', 60, 5.139, 46.313, 8.343, "C") +
      atom("ATOM", 22, "CG", "LYS", 'H', 60, 3.789, 46.433, 9.040, "C") +
      atom("ATOM", 23, "N", "ASN", 'H', 60, 7.844, 44.865, 7.289, "N") +
      atom("ATOM", 24, "CA", "ASN", 'H', 60, 8.992, 44.777, 6.384, "C") +
      atom("ATOM", 25, "C", "ASN", 'H', 60, 9.414, 43.301, 6.208, "C") +
      atom("ATOM", 26, "O", "ASN", 'H', 60, 10.515, 42.927, 6.608, "O") +
      atom("ATOM", 27, "CB", "ASN", 'H', 60, 10.151, 45.643, 6.923, "C");
  // Insertion codes A-D in column 27.
  std::string coded;
  const char codes[] = {'A', 'A', 'A', 'A', 'A', 'A', 'A', 'A', 'B', 'B', 'B', 'B', 'B', 'B', 'B', 'B',
                        'C', 'C', 'C', 'C', 'C', 'C', 'D', 'D', 'D', 'D', 'D'};
  std::size_t k = 0;
  for (std::size_t at = 0, next; (next = text.find('\n', at)) != std::string::npos; at = next + 1, ++k)
    coded += text.substr(at, 26) + codes[k] + text.substr(at + 27, next - at - 26);
  const fs::path dir = scratch("heavy");
  const fs::path in = write(dir / "insertions.pdb", coded);
  CHECK(input_error_of([&] { prepare(in, dry()); }) ==
        in.string() + ":1: 3 residues lack heavy atoms: LYS 60A (chain 'H', line 1) lacks [NZ]; LYS 60C (chain 'H', "
                      "line 17) lacks [CD CE NZ]; ASN 60D (chain 'H', line 23) lacks [CG ND2 OD1]; hydrogens need "
                      "complete residues: add the missing atoms with PDBFixer or model them");
}

TEST_CASE("prepare: every residue without a template in one message, the first 20 and how many more") {
  const fs::path dir = scratch("unknown");
  std::string text;
  for (int i = 0; i < 22; ++i) text += atom("HETATM", i + 1, "C1", "LIG", 'A', 401 + i, 5.0 * i, 0.0, 0.0, "C");
  const fs::path in = write(dir / "ligands.pdb", text);
  std::string expected = in.string() + ":1: 22 residues match no force field template: ";
  for (int i = 0; i < 20; ++i) expected += fmt::format("{}LIG {} (chain 'A', line {})", i ? ", " : "", 401 + i, i + 1);
  expected += ", and 2 more: no template has their names; supply their force field XML (--forcefield, "
              "prepare.forcefield) or remove them (--remove-heterogens)";
  CHECK(input_error_of([&] { prepare(in, dry()); }) == expected);
  // One unknown residue: build_system's own message.
  const fs::path one = write(dir / "one.pdb", atom("HETATM", 1, "C1", "LIG", 'A', 401, 0.0, 0.0, 0.0, "C"));
  CHECK(input_error_of([&] { prepare(one, dry()); }) ==
        one.string() + ":1: no template for residue LIG 401 (chain 'A'): supply its force field XML (system.forcefield; "
                       "for mdsim prepare, --forcefield)");
  CHECK(listed({"a", "b"}) == "a, b");
}

TEST_CASE("prepare: the summary lists every histidine, also one the input already names HIE") {
  const fs::path dir = scratch("his");
  // Heavy atoms only, HIS 27 named HIE: the form comes from hydrogen bonds (as in OpenMM); the summary says so.
  const fs::path named = write(dir / "hie.pdb", heavy_atoms("villin_water.pdb", "HIS    27", "HIE    27"));
  const std::string summary = prepare_summary(prepare(named, dry()));
  CHECK(contains(summary, "protonation: ASP 2, C-terminal COO- 1, GLU 2, HID 1, LYS 5, N-terminal NH3+ 1\n"));
  CHECK(contains(summary, "  HIE 27 (chain ' '): HID (pH 7 > 6.5; no hydrogen-bond partner for ND1-H or NE2-H (HID, "
                          "as Modeller); named HIE in the input, but a name does not choose the form (as in OpenMM): "
                          "--variant :27=HIE does)\n"));
  // With its hydrogens (HE2 present) the HIE is HIE, and listed.
  std::ifstream full_in(kSystems + "villin_water.pdb");
  std::string full;
  for (std::string line; std::getline(full_in, line);) {
    if (line.find("HOH") != std::string::npos || line.rfind("CONECT", 0) == 0) continue;
    if (line.find("HIS    27") != std::string::npos) line.replace(line.find("HIS    27"), 9, "HIE    27");
    full += line + "\n";
  }
  const fs::path with_h = write(dir / "hie_h.pdb", full);
  CHECK(contains(prepare_summary(prepare(with_h, dry())), "  HIE 27 (chain ' '): HIE (hydrogen on NE2 present)\n"));
}

TEST_CASE("prepare: an input that holds waters says so; an already solvated one is named as such") {
  PrepareOptions options;
  options.padding_nm = 0.8;
  options.cutoff_nm = 0.8;
  const PreparedSystem p = prepare(kSystems + "ala2_water.pdb", options);
  CHECK(p.report.input_waters == 749);
  const std::string summary = prepare_summary(p);
  CHECK(contains(summary, "  note: the input is already solvated: its 749 waters fill about 65% of its periodic box "
                          "(3.285 x 3.286 x 3.186 nm). They are kept; water is added only where there is room (no "
                          "new water overlaps an atom already there), in a new box 0.8 nm (padding) beyond the "
                          "outermost atom, waters included, and ions replace randomly chosen waters, the input's too. "
                          "--no-solvent (prepare.solvent: false) adds no water or ions and keeps the input's box\n"));
  CHECK(contains(summary, fmt::format("solvent: {} waters besides the input's 749; ",
                                      p.report.solvent.waters_added - p.report.ions.positive - p.report.ions.negative)));
  // Without solvating there is nothing to say.
  CHECK_FALSE(contains(prepare_summary(prepare(kSystems + "ala2_water.pdb", dry())), "note: the input"));
}

TEST_CASE("prepare: a folder, a missing or an unreadable input is a clear error naming the path") {
  const fs::path dir = scratch("paths");
  fs::create_directories(dir / "structure.pdb");
  CHECK(input_error_of([&] { prepare(dir / "structure.pdb", dry()); }) ==
        (dir / "structure.pdb").string() + ": is a folder; give a .pdb or .cif file (PDB or PDBx/mmCIF, optionally .gz)");
  PrepareFiles files;
  files.input = (dir / "structure.pdb").string();
  CHECK(input_error_of([&] { check_prepare_files(files, ""); }) ==
        files.input + ": is a folder; give a .pdb or .cif file (PDB or PDBx/mmCIF, optionally .gz)");
  CHECK(input_error_of([&] { prepare(dir / "absent.pdb", dry()); }) ==
        (dir / "absent.pdb").string() + ": cannot open the structure file: No such file or directory");
  const fs::path locked = write(dir / "locked.pdb", heavy_atoms("ala2_vacuum.pdb"));
  ::chmod(locked.c_str(), 0);
  if (::geteuid() == 0) {
    WARN("running as root, which reads a file without read permission: the unreadable-file check is skipped");
  } else {
    CHECK(input_error_of([&] { prepare(locked, dry()); }) ==
          locked.string() + ": cannot open the structure file: Permission denied");
  }
}

TEST_CASE("prepare: remove_heterogens removes what PDBFixer removes, keeps water and the names asked for") {
  const ForceFieldData ff = load_forcefields({"amber14-all.xml", "amber14/tip3p.xml"}, "");
  for (const char* name : {"ALA", "HIS", "HIE", "HID", "ASH", "GLH", "LYN", "CYX", "DA", "DA5", "U", "UNK", "N"})
    CHECK(is_standard_residue(name, ff.standard));
  for (const char* name : {"ACE", "NME", "NAG", "SO4", "MSE", "NA", "HEM"}) CHECK_FALSE(is_standard_residue(name, ff.standard));
  CHECK(is_water("HOH", ff.standard));
  CHECK(is_water("WAT", ff.standard));

  // Villin with two sulfates, a glycerol, a sodium ion and two waters, far from the protein.
  std::string text = heavy_atoms("villin_water.pdb");
  text += atom("HETATM", 900, "S", "SO4", 'B', 1, 60.0, 0.0, 0.0, "S");
  for (int i = 0; i < 4; ++i) text += atom("HETATM", 901 + i, fmt::format("O{}", i + 1), "SO4", 'B', 1, 61.0 + i, 0.0, 0.0, "O");
  text += atom("HETATM", 905, "S", "SO4", 'B', 2, 60.0, 10.0, 0.0, "S");
  for (int i = 0; i < 4; ++i) text += atom("HETATM", 906 + i, fmt::format("O{}", i + 1), "SO4", 'B', 2, 61.0 + i, 10.0, 0.0, "O");
  for (int i = 0; i < 6; ++i)
    text += atom("HETATM", 910 + i, fmt::format("{}{}", i < 3 ? "C" : "O", i % 3 + 1), "GOL", 'B', 3, 60.0, 20.0 + i, 0.0,
                 i < 3 ? "C" : "O");
  text += atom("HETATM", 916, "NA", "NA", 'C', 1, 60.0, 30.0, 0.0, "NA");
  text += atom("HETATM", 917, "O", "HOH", 'D', 1, 60.0, 40.0, 0.0, "O");
  text += atom("HETATM", 918, "O", "HOH", 'D', 2, 60.0, 45.0, 0.0, "O");
  const fs::path dir = scratch("heterogens");
  const fs::path in = write(dir / "villin_het.pdb", text);
  PrepareOptions options = dry();
  options.remove_heterogens = true;
  options.keep_heterogens = {"NA"};
  const PreparedSystem p = prepare(in, options);
  CHECK(contains(prepare_summary(p), "heterogens removed: GOL 1, SO4 2 (3 residues, 16 atoms); kept: NA 1 "
                                     "(--keep-heterogens), 2 waters\n"));
  int sodium = 0, water = 0, sulfur = 0;
  for (const auto& r : p.topology.residues) sodium += r.name == "NA", water += r.name == "HOH", sulfur += r.name == "SO4";
  CHECK(sodium == 1);
  CHECK(water == 2);
  CHECK(sulfur == 0);

  // A keep list naming no heterogen of the input, or given without remove_heterogens.
  options.keep_heterogens = {"NGA"};
  CHECK(input_error_of([&] { prepare(in, options); }) ==
        "--keep-heterogens NGA: " + in.string() + " has no heterogen named NGA (its heterogens: GOL 1, NA 1, SO4 2); "
        "--remove-heterogens keeps standard residues and water anyway, and the keep list names heterogens to keep "
        "besides them (residue names as in the file)");
  options.remove_heterogens = false;
  options.keep_heterogens = {"NA", "GOL"};
  CHECK(input_error_of([&] { prepare(in, options); }) ==
        "--keep-heterogens NA,GOL given without --remove-heterogens: the keep list names the heterogens "
        "--remove-heterogens leaves in place; add --remove-heterogens (prepare.remove_heterogens: true) or leave out "
        "the keep list");

  // A modified residue inside the chain is a heterogen too: removing it leaves a gap, which the error explains.
  const fs::path modified = write(dir / "modified.pdb", heavy_atoms("villin_water.pdb", "ARG    14", "XYZ    14"));
  options = dry();
  options.remove_heterogens = true;
  const std::string gap = input_error_of([&] { prepare(modified, options); });
  CHECK(contains(gap, "chain ' ' breaks between"));
  CHECK(contains(gap, "residues are missing there (--remove-heterogens removed XYZ 14 there: if it belongs to the chain, "
                      "keep it with --keep-heterogens XYZ). Model them (PDBFixer)"));
}
