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

// A residue template's <VirtualSite> (OpenMM's _VirtualSiteData): the site and its parents as template atom
// indices, by `siteName`/`atomName<i>` or the older `index`/`atom<i>` spelling.
enum class FFVirtualSiteType { Average2, Average3, OutOfPlane, LocalCoords };

struct FFVirtualSite {
  FFVirtualSiteType type = FFVirtualSiteType::Average2;
  int site = -1;             // template atom index of the site (an element-less, massless atom)
  std::vector<int> parents;  // template atom indices: 2 (average2) or 3
  int exclude_with = -1;     // template atom whose exclusions the site shares (`excludeWith`, default parents[0])
  // average2/average3: weight<i>; outOfPlane: weight12, weight13, weightCross.
  std::vector<double> weights;
  // localCoords: wo<i>, wx<i>, wy<i> per parent and p1..p3 (nm).
  std::vector<double> origin_weights, x_weights, y_weights;
  std::array<double, 3> local_position_nm{};
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

// <AmoebaUreyBradleyForce> <UreyBradley>: a 1-3 term on an angle's outer atoms. k as written; OpenMM's generator
// adds it to the HarmonicBondForce as 2k (E = k (r13 - d)^2).
struct FFUreyBradleyDef {
  std::array<FFTypeSpec, 3> atoms;
  double r13_nm = 0.0;           // `d`
  double k_kj_per_mol_nm2 = 0.0;  // `k` as written
  FFSource source;
};

// <CustomTorsionForce energy="k*(theta-theta0)^2"> <Improper> (CHARMM's harmonic impropers; the only expression
// mdsim reads), matched as OpenMM's _matchImproper with the section's `ordering` (default "charmm").
struct FFHarmonicImproperDef {
  std::array<FFTypeSpec, 4> atoms;  // atoms[0] is the central atom
  double theta0_rad = 0.0;
  double k_kj_per_mol_rad2 = 0.0;
  ImproperOrdering ordering = ImproperOrdering::Charmm;
  FFSource source;
};

// <CMAPTorsionForce>: the maps (OpenMM's CMAPTorsionForce layout: energy[i + size j] at phi = i 2pi/size,
// psi = j 2pi/size) and the five-atom definitions that choose one.
struct FFCmapDef {
  std::array<FFTypeSpec, 5> atoms;
  int map = 0;
  FFSource source;
};

// <LennardJonesForce> <Atom> (sigma, epsilon and optional sigma14/epsilon14) and <NBFixPair>.
struct FFLennardJonesAtom {
  FFTypeSpec atom;
  double sigma_nm = 0.0, epsilon_kj_per_mol = 0.0;
  std::optional<double> sigma14_nm, epsilon14_kj_per_mol;
  FFSource source;
};
struct FFNbfixPair {
  std::array<FFTypeSpec, 2> atoms;
  double sigma_nm = 0.0, epsilon_kj_per_mol = 0.0;
  FFSource source;
};

// A <Patch> (OpenMM's _PatchData): changes applied to `num_residues` templates. Atom references carry the
// patch residue they belong to ("2:N" = atom N of the patch's second residue; 0-based here).
struct FFPatchAtomRef {
  int residue = 0;
  std::string name;
};
struct FFPatchAtom {
  int residue = 0;
  FFTemplateAtom atom;
};
struct FFPatch {
  std::string name;
  int num_residues = 1;
  std::vector<FFPatchAtom> added, changed;
  std::vector<FFPatchAtomRef> removed;
  std::vector<std::pair<FFPatchAtomRef, FFPatchAtomRef>> added_bonds, removed_bonds;
  std::vector<FFPatchAtomRef> added_external_bonds, removed_external_bonds;
  std::vector<std::string> all_atom_names;  // every atom it adds, changes or removes (OpenMM's allAtomNames)
  bool has_virtual_sites = false;           // <VirtualSite> in a patch: not supported (refused when applied)
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

  std::vector<FFUreyBradleyDef> urey_bradleys;          // <AmoebaUreyBradleyForce>
  std::vector<FFHarmonicImproperDef> harmonic_impropers;  // <CustomTorsionForce> impropers
  std::vector<std::vector<double>> cmap_maps;             // <CMAPTorsionForce> <Map>s (size^2 values each)
  std::vector<FFCmapDef> cmap_torsions;
  bool has_cmap_torsion_force = false;
  bool has_lennard_jones_force = false;
  double lennard_jones_lj14scale = 0.0;
  std::optional<bool> lennard_jones_dispersion_correction;
  std::vector<FFLennardJonesAtom> lennard_jones_atoms;  // file order; later entries override earlier ones
  std::vector<FFNbfixPair> nbfix_pairs;

  int num_patches = 0;               // <Patch> definitions seen
  std::vector<FFPatch> patches;      // by name, the last definition of a name wins (OpenMM's registerPatch)
  // template name -> (patch name, patch residue index 0-based), from <AllowPatch> and <ApplyToResidue>, in file order
  std::map<std::string, std::vector<std::pair<std::string, int>>> template_patches;

  StandardResidueData standard;  // residues.xml + pdbNames.xml
};

}  // namespace mdsim
