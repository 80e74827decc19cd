// CHARMM parameter files, as OpenMM 7.7's CharmmParameterSet reads them: topology files (.rtf, .top: only their
// MASS lines, which define the atom types), parameter files (.prm, .par: ATOMS, BONDS, ANGLES with Urey-Bradley,
// DIHEDRALS, IMPROPER, CMAP, NONBONDED with 1-4 values and the nbxmod / e14fac settings, NBFIX; HBOND and NBTHOLE
// are skipped) and stream files (.str: their `read rtf card` and `read para card` blocks). Topology files are
// read first, then parameter files, then stream files, each group in the order given, as OpenMM does; a later
// definition replaces an earlier one (a dihedral term replaces the one of the same periodicity). Text after `!` is
// a comment, a line ending in `-` continues on the next, and names are upper-cased.
// Units as written in the files: kcal/mol, Å, degrees (io/charmm_psf converts them when it builds the System).
#pragma once

#include <array>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace mdsim {

struct CharmmWhere {  // where a definition was read, for messages
  std::string file;
  int line = 0;
};

struct CharmmAtomType {
  std::string name;
  int number = -1;        // the MASS line's number (-1: none; CHARMM's "MASS -1" auto-numbering)
  double mass_amu = 0.0;
  int atomic_number = 0;  // from the MASS line's element, else the element nearest the mass; 0: none (a lone pair)
  bool has_lj = false;    // a NONBONDED line gave its values
  double epsilon_kcal = 0.0, rmin_half_a = 0.0;      // |epsilon| and Rmin/2
  double epsilon14_kcal = 0.0, rmin14_half_a = 0.0;  // the 1-4 values (the normal ones when none are given)
  CharmmWhere where;       // its MASS line
  CharmmWhere lj_where;    // its NONBONDED line
};

struct CharmmBondType {  // E = Kb (b - b0)^2
  double k_kcal_per_a2 = 0.0, r0_a = 0.0;
};

struct CharmmAngleType {  // E = Ktheta (theta - theta0)^2 [+ Kub (S - S0)^2]
  double k_kcal_per_rad2 = 0.0, theta0_deg = 0.0;
  bool urey_bradley = false;
  double ub_k_kcal_per_a2 = 0.0, ub_r0_a = 0.0;
};

struct CharmmDihedralTerm {  // E = Kchi (1 + cos(n chi - delta))
  double k_kcal = 0.0;
  int periodicity = 1;
  double phase_deg = 0.0;
};

struct CharmmImproperType {  // E = Kpsi (psi - psi0)^2
  double k_kcal_per_rad2 = 0.0, psi0_deg = 0.0;
};

struct CharmmCmapType {  // the grid as written: from -180 degrees, phi the slow index, kcal/mol
  int size = 0;
  std::vector<double> grid_kcal;
  CharmmWhere where;
};

struct CharmmNbfix {  // pair-specific Emin (as |Emin|) and Rmin (the full distance), and their 1-4 values
  double emin_kcal = 0.0, rmin_a = 0.0;
  double emin14_kcal = 0.0, rmin14_a = 0.0;  // the normal ones when the line gives none
};

// Keys are in canonical order (bonds and NBFIX: sorted; angles: outer types sorted; dihedrals, impropers and each
// CMAP torsion: the smaller of the key and its reverse). "X" is the wildcard of dihedrals and impropers.
struct CharmmParameters {
  std::map<std::string, CharmmAtomType> types;
  std::map<int, std::string> type_by_number;
  std::map<std::array<std::string, 2>, CharmmBondType> bonds;
  std::map<std::array<std::string, 3>, CharmmAngleType> angles;
  std::map<std::array<std::string, 4>, std::vector<CharmmDihedralTerm>> dihedrals;
  std::map<std::array<std::string, 4>, CharmmImproperType> impropers;
  std::map<std::array<std::string, 8>, CharmmCmapType> cmaps;
  std::map<std::array<std::string, 2>, CharmmNbfix> nbfix;
  int nbxmod = 5;       // NONBONDED's nbxmod: which bonded pairs are excluded (5: 1-2, 1-3 out, 1-4 with 1-4 values)
  double e14fac = 1.0;  // 1-4 electrostatics scale
  std::vector<std::string> files;  // read, in reading order

  // The types' names in canonical order, for the maps above.
  static std::array<std::string, 2> bond_key(std::string a, std::string b);
  static std::array<std::string, 3> angle_key(std::string a, const std::string& b, std::string c);
  static std::array<std::string, 4> torsion_key(const std::array<std::string, 4>& t);
  // The dihedral terms or improper of these types, trying wildcards ("X") in up to three positions when no
  // exact entry exists (fewest wildcards first), as OpenMM matches them; nullptr when none matches.
  const std::vector<CharmmDihedralTerm>* find_dihedral(const std::array<std::string, 4>& t) const;
  const CharmmImproperType* find_improper(const std::array<std::string, 4>& t) const;
};

// What a file holds, from its extension as OpenMM decides (.rtf/.top topology, .prm/.par parameters, .str stream,
// .inp by "par" or "top" in its name); InputError for any other.
enum class CharmmFileKind { Topology, Parameters, Stream };
CharmmFileKind charmm_file_kind(const std::string& path);

// Reads the files (topology files first, then parameter files, then stream files). InputError, located at the file
// and line, for a line that does not parse, NONBONDED values for a type no MASS line defined, a CMAP grid with the
// wrong number of values, a file that cannot be opened, or no files at all.
CharmmParameters read_charmm_parameters(const std::vector<std::string>& paths);

// Adds one file's text to `into`; `source` names it in messages.
void read_charmm_parameter_text(const std::string& text, const std::string& source, CharmmFileKind kind,
                                CharmmParameters& into);

}  // namespace mdsim
