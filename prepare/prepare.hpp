// `mdsim prepare`: from a structure as it comes from the PDB (heavy atoms only, PDB or PDBx/mmCIF) to a
// simulation-ready system, as OpenMM's Modeller does: hydrogens at a pH (prepare/hydrogens), a box of
// water (prepare/solvent), neutralising ions and salt (prepare/solvent), and a ready config for `mdsim run`.
// Units: nm, K, mol/L (molar), pH.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace mdsim {

// The periodic box around the solute (OpenMM 8's Modeller.addSolvent boxShape): a cube, a rhombic
// dodecahedron (xy-square form) or a truncated octahedron, each with the same minimum image distance
// (solute extent + 2 × padding); or an explicit rectangular box.
enum class BoxShape { Cube, Dodecahedron, Octahedron };

struct PrepareOptions {
  std::vector<std::string> forcefield{"amber14-all.xml", "amber14/tip3p.xml"};  // templates, charges, radii
  // Hydrogens.
  double ph = 7.0;
  std::map<std::string, std::string> variants;  // "A:45" or "A:45B" (chain:resSeq[iCode]) -> HID, HIE, ASH, CYX, ...
  // Solvent.
  bool solvate = true;
  double padding_nm = 1.0;
  std::optional<std::array<double, 3>> box_nm;  // explicit rectangular box edges; overrides padding
  BoxShape box_shape = BoxShape::Cube;
  std::string water_model = "tip3p";
  // Ions: neutralise, then salt to ionic_strength (not counting the neutralising ions).
  bool neutralize = true;
  double ionic_strength_molar = 0.15;
  std::string positive_ion = "Na+";  // Na+ | K+
  std::string negative_ion = "Cl-";  // Cl-
  std::uint64_t seed = 1;            // which waters become ions
};

const char* to_string(BoxShape shape);

}  // namespace mdsim
