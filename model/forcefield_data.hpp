// A force field as data: the contents of OpenMM ForceField XML files (atom types, residue templates,
// bonded and nonbonded definitions) and OpenMM's standard-residue tables (residues.xml, pdbNames.xml).
// io/forcefield_xml reads the files into these types; model/forcefield turns them plus a Topology into
// a System. Units as in the files: nm, kJ/mol, rad, amu, e.
#pragma once

#include <array>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace mdsim {

// Where a definition came from, for error messages.
struct FFSource {
  std::string file;
  int line = 0;
};

struct FFAtomType {
  std::string name;
  std::string atom_class;
  std::string element;  // capitalised symbol ("C", "Cl"); "" = no element (extra particle)
  double mass_amu = 0.0;
  FFSource source;
};

// How a bonded definition names one of its atoms: by type, by class, or the wildcard (type="" / class="").
enum class FFSpecKind { Wildcard, Type, Class };
struct FFTypeSpec {
  FFSpecKind kind = FFSpecKind::Wildcard;
  std::string name;  // type or class name; empty for the wildcard
};

struct FFTemplateAtom {
  std::string name;
  std::string type;
  std::map<std::string, double> parameters;  // every other attribute of <Atom> (e.g. "charge")
};

struct FFVirtualSite {  // recorded only to report it as unsupported when its template is used
  FFSource source;
};

struct FFResidueTemplate {
  std::string name;
  std::vector<FFTemplateAtom> atoms;
  std::vector<std::pair<int, int>> bonds;  // template atom indices, file order
  std::vector<int> external_bonds;         // template atom index per <ExternalBond> (an atom may repeat)
  int override_level = 0;
  bool rigid_water = true;                 // `rigidWater` attribute (OpenMM default true)
  std::vector<FFVirtualSite> virtual_sites;
  std::vector<std::string> allowed_patches;  // <AllowPatch name=...>
  FFSource source;
};

struct FFBondDef {
  std::array<FFTypeSpec, 2> atoms;
  double length_nm = 0.0;
  double k_kj_per_mol_nm2 = 0.0;
  FFSource source;
};

struct FFAngleDef {
  std::array<FFTypeSpec, 3> atoms;
  double angle_rad = 0.0;
  double k_kj_per_mol_rad2 = 0.0;
  FFSource source;
};

// Improper atom-order rules of OpenMM's PeriodicTorsionForce `ordering` attribute.
enum class ImproperOrdering { Default, Amber, Charmm, Smirnoff };

struct FFTorsionDef {
  std::array<FFTypeSpec, 4> atoms;  // for impropers atoms[0] is the central atom
  std::vector<int> periodicity;
  std::vector<double> phase_rad;
  std::vector<double> k_kj_per_mol;
  ImproperOrdering ordering = ImproperOrdering::Default;
  FFSource source;
};

struct FFNonbondedAtom {
  FFTypeSpec atom;  // Type or Class
  std::map<std::string, double> values;  // "charge", "sigma", "epsilon" where given
  FFSource source;
};

// OpenMM's residues.xml (bonds by atom name per standard residue) and pdbNames.xml (name aliases).
struct StandardResidueData {
  // residue name -> bonds (from, to) by atom name; "-X"/"+X" = atom X of the previous/next residue
  std::unordered_map<std::string, std::vector<std::pair<std::string, std::string>>> bonds;
  std::unordered_map<std::string, std::string> residue_aliases;  // alternative -> standard residue name
  // standard residue name -> (alternative atom name -> standard atom name)
  std::unordered_map<std::string, std::unordered_map<std::string, std::string>> atom_aliases;
  bool loaded = false;
};

struct ForceFieldData {
  std::vector<std::string> files;  // every file read (includes too), in load order

  std::vector<FFAtomType> atom_types;
  std::unordered_map<std::string, int> type_index;   // type name -> index in atom_types
  std::vector<FFResidueTemplate> templates;           // after `override` resolution, registration order

  std::vector<FFBondDef> bonds;
  std::vector<FFAngleDef> angles;
  std::vector<FFTorsionDef> propers;
  std::vector<FFTorsionDef> impropers;

  bool has_harmonic_bond_force = false;
  bool has_harmonic_angle_force = false;
  bool has_periodic_torsion_force = false;
  bool has_nonbonded_force = false;
  double coulomb14scale = 0.0;
  double lj14scale = 0.0;
  std::optional<bool> use_dispersion_correction;       // NonbondedForce useDispersionCorrection attribute
  std::vector<std::string> nonbonded_from_residue;     // <UseAttributeFromResidue name=...>
  std::vector<FFNonbondedAtom> nonbonded_atoms;        // file order; later entries override earlier ones

  int num_patches = 0;  // <Patches> definitions seen (patching is not supported)

  StandardResidueData standard;  // residues.xml + pdbNames.xml
};

}  // namespace mdsim
