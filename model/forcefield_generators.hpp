// Internal to model/ (and its tests; prepare/hydrogens uses the shared helpers): the steps of build_system
// (model/forcefield.hpp), one job each, as OpenMM 7.7's app/forcefield.py has one generator per force.
// build_system runs them in createSystem's order:
//   GeneratorInput          check the topology, bonded graph, type tables, residue -> template matching
//   assign_masses, repartition_hydrogen_masses
//   list_bonded_terms       angles, propers, impropers as OpenMM enumerates them
//   constraint_flags        which bonds and angles are constrained (constraint mode, rigid water)
//   add_bonds, add_angles   HarmonicBondForce, HarmonicAngleForce terms and the constraints they imply
//   add_propers, add_impropers  PeriodicTorsionForce terms
//   add_virtual_sites       the templates' <VirtualSite>s
//   assign_nonbonded_parameters, add_exceptions  NonbondedForce particles and exceptions
//   add_rigid_waters        SETTLE triples
// Each generator appends to the System in OpenMM's term order; the same inputs give the same System to the
// last bit whether the generators run alone or through build_system.
#pragma once

#include <array>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "model/forcefield.hpp"

namespace mdsim::ffgen {

// ---------------------------------------------------------------- shared helpers (forcefield_support.cpp)

std::string normalise_element(const std::string& symbol);  // " cL " -> "Cl"
double element_mass(const std::string& symbol);            // amu as OpenMM's element.py; 0 if unknown
std::pair<int, int> ordered(int a, int b);                 // (min, max)
std::string join(const std::vector<std::string>& words);   // separated by single spaces
std::string residue_label(const Topology& top, int residue);  // "residue ALA 2 (chain 'A')"
int residue_line(const Topology& top, int residue);            // line of its first atom (else its own)

// Index consistency of a Topology (a hand-made one may be broken): InputError instead of a crash.
void check_topology(const Topology& top);

// Residue and atom names mapped through pdbNames.xml, as OpenMM's PDBFile renames them.
struct NormalisedNames {
  std::vector<std::string> residue;  // per residue
  std::vector<std::string> atom;     // per atom
};
NormalisedNames normalise_names(const Topology& top, const StandardResidueData& standard);

// The topology's bonded graph as the generators (and prepare/hydrogens) read it.
struct AtomGraph {
  std::vector<std::string> element;         // normalised element symbol per atom ("" = none)
  std::vector<std::vector<int>> bonded_to;  // per atom: bonded atoms from Topology::bonds, sorted, unique
};
AtomGraph make_atom_graph(const Topology& top);

// Atom type -> atom class, for definitions that name classes.
struct TypeTables {
  std::vector<int> class_of;  // type index -> class id
  std::unordered_map<std::string, int> class_id;
};
TypeTables make_type_tables(const ForceFieldData& ff);

// A definition's atom spec with its name looked up: a type index, a class id (-2: unknown name) or the wildcard.
struct ResolvedSpec {
  FFSpecKind kind = FFSpecKind::Wildcard;
  int id = -1;
};
ResolvedSpec resolve(const FFTypeSpec& spec, const ForceFieldData& ff, const TypeTables& tables);
bool spec_has(const ResolvedSpec& spec, int type, const TypeTables& tables);

// ---------------------------------------------------------------- template matching (forcefield_templates.cpp)

// What OpenMM's _matchAllResiduesToTemplates chose, per residue and per atom.
struct TemplateMatch {
  std::vector<int> residue_template;  // index into ForceFieldData::templates, per residue
  std::vector<int> atom_type;         // index into ForceFieldData::atom_types, per atom
  std::vector<const std::map<std::string, double>*> atom_parameters;  // its template atom's attributes
  std::vector<int> atom_template_index;  // its atom index within the matched template
  std::vector<const FFVirtualSite*> atom_site;  // the template's <VirtualSite> for an atom that is one, else null
  // The patched templates (single_residue_patched_templates) when some residue needed one: residue_template k >=
  // ForceFieldData::templates.size() means (*patched_templates)[k - that size]. atom_parameters point into them.
  std::shared_ptr<const std::vector<FFResidueTemplate>> patched_templates;
};

// Every template a single-residue <Patch> combination makes (OpenMM's _generatePatchedSingleResidueTemplates per
// template, in template order; named "ALA-NTER", "ALA-NTER-CTER"). InputError for an <AllowPatch> naming no patch
// or a patch with virtual sites.
std::vector<FFResidueTemplate> single_residue_patched_templates(const ForceFieldData& ff);
// The same for one template (its single-residue patches' combinations).
std::vector<FFResidueTemplate> patched_variants(const ForceFieldData& ff, const FFResidueTemplate& t);
// Residue k's part of a patch applied to template t (OpenMM's createPatchedTemplates; named "T-PATCH"): its atoms
// removed, added and changed, its bonds, and an external bond where the patch bonds it to another of its residues.
// None where OpenMM's raises (an added name exists, a changed or bonded one does not).
std::optional<FFResidueTemplate> apply_patch(const FFPatch& patch, int k, const FFResidueTemplate& t);
bool has_multi_residue_patches(const ForceFieldData& ff);

// Matches every residue (chain order) to a template by bonded graph and elements, independent of atom names; the
// residues no template matches, to the single-residue patched templates, then, in pairs of residues bonded to each
// other, to the two-residue patches (CHARMM's DISU) applied to every combination of their candidate templates
// (OpenMM's _applyPatchesToMatchResidues; patches of three or more residues are not tried).
// InputError ("pdb:line: ...") when an atom has no element or one no template uses, when a residue matches no
// template (naming the closest one), or several with different parameters or virtual sites. An atom without an
// element (extra particle) matches only an element-less template atom, of its own name when the template has one.
TemplateMatch match_templates(const Topology& top, const ForceFieldData& ff, const NormalisedNames& names,
                              const AtomGraph& graph);

// Every residue (chain order) that matches no template, with what match_templates would say about it; InputError
// as match_templates for an atom whose element no template uses.
std::vector<ResidueTemplateProblem> template_problems(const Topology& top, const ForceFieldData& ff,
                                                     const NormalisedNames& names, const AtomGraph& graph);

// The matched template names per residue, as build_system reports them.
TemplateAssignment template_assignment(const ForceFieldData& ff, const TemplateMatch& match);

// ---------------------------------------------------------------- what every term generator reads

struct GeneratorInput {
  // Checks the topology, builds the graph and type tables and matches templates (InputError as above).
  GeneratorInput(const Topology& topology, const ForceFieldData& forcefield, const ForceFieldOptions& options);

  const Topology& topology;  // with its bonds (create_topology_bonds)
  const ForceFieldData& forcefield;
  const ForceFieldOptions options;  // a copy: callers may pass a temporary
  NormalisedNames names;
  AtomGraph graph;
  TypeTables tables;
  TemplateMatch match;

  int type_of(int atom) const { return match.atom_type[static_cast<std::size_t>(atom)]; }
};

// ---------------------------------------------------------------- per-particle parameters (forcefield_nonbonded.cpp)

// System::mass_amu from the atom types.
void assign_masses(const GeneratorInput& in, System& sys);

// System::charge_e, sigma_nm, epsilon_kj_per_mol: <NonbondedForce> <Atom> values by type or class (the last entry
// naming a type wins), else the matched template atom's attribute (<UseAttributeFromResidue>). Without a
// <NonbondedForce>: charge 0, sigma 1, epsilon 0. InputError when neither gives a value.
void assign_nonbonded_parameters(const GeneratorInput& in, System& sys);

// System::exceptions (NonbondedForce::createExceptionsFromBonds): pairs within 3 bonds, ordered by the later atom
// then the earlier; 1-2 and 1-3 excluded, 1-4 scaled by coulomb14scale / lj14scale with Lorentz-Berthelot sigma
// and epsilon. Needs the particle parameters. Nothing without a <NonbondedForce>. A virtual site shares the bonds
// of its `excludeWith` atom and is bonded to it (OpenMM's _findBondsForExclusions).
void add_exceptions(const GeneratorInput& in, System& sys);

// System::virtual_sites (OpenMM's createSystem "Add virtual sites"): per atom matched to a template's <VirtualSite>,
// in particle order, its parents the atoms of the same residue matched to the site's parent template atoms.
// Its mass is 0: the reader refuses a <VirtualSite> whose atom type has mass.
void add_virtual_sites(const GeneratorInput& in, System& sys);

// Per particle: the virtual-site particles that share its exclusions (OpenMM's data.excludeAtomWith).
std::vector<std::vector<int>> sites_excluded_with(const GeneratorInput& in);

// ---------------------------------------------------------------- bonded terms (forcefield_bonded.cpp, _torsions.cpp)

// OpenMM's data.angles (sorted), data.propers (sorted, unique, first atom < last) and data.impropers (centre
// atom first, its neighbours in index order).
struct BondedLists {
  std::vector<std::array<int, 3>> angles;
  std::vector<std::array<int, 4>> propers;
  std::vector<std::array<int, 4>> impropers;
};
BondedLists list_bonded_terms(const Topology& top, const AtomGraph& graph);

// Which topology bonds and which BondedLists::angles are constrained.
struct ConstraintFlags {
  std::vector<char> bond;   // per Topology::bonds entry
  std::vector<char> angle;  // per BondedLists::angles entry
};

// Distance constraints in the order they are added, one per atom pair.
class ConstraintSet {
 public:
  // Adds the constraint unless the pair has one already; InputError if that one has another distance.
  void add(int a1, int a2, double distance_nm);
  std::optional<double> distance_nm(int a1, int a2) const;
  const std::vector<DistanceConstraint>& list() const { return list_; }

 private:
  std::map<std::pair<int, int>, double> distance_nm_;
  std::vector<DistanceConstraint> list_;
};

// HarmonicBondForce: per topology bond, the first definition matching its types (either direction). A
// constrained bond becomes a constraint at the definition's length and keeps its term only with
// flexible_constraints; zero force constants give no term. Returns each bond's definition length (0 where none
// matches, or without a <HarmonicBondForce>), which constrained angles need.
std::vector<double> add_bonds(const GeneratorInput& in, const ConstraintFlags& flags, ConstraintSet& constraints,
                              System& sys);

// HarmonicAngleForce: per angle, the first definition matching its types (outer atoms either way round). A
// constrained angle becomes a constraint between its outer atoms (law of cosines on the two bond lengths).
void add_angles(const GeneratorInput& in, const std::vector<std::array<int, 3>>& angles, const ConstraintFlags& flags,
                const std::vector<double>& bond_length_nm, ConstraintSet& constraints, System& sys);

// PeriodicTorsionForce propers: the first matching definition without wildcards, else the first with wildcards;
// one term per nonzero periodicity.
void add_propers(const GeneratorInput& in, const std::vector<std::array<int, 4>>& propers, System& sys);

// PeriodicTorsionForce impropers (_matchImproper): the last matching definition without wildcards, else the
// first with wildcards; atom order by the definition's ordering rule (default, amber, charmm, smirnoff), cached
// per type signature as OpenMM does.
void add_impropers(const GeneratorInput& in, const std::vector<std::array<int, 4>>& impropers, System& sys);

// CustomTorsionForce harmonic impropers (CHARMM): _matchImproper per improper (no type cache, as OpenMM's
// CustomTorsionGenerator), one HarmonicImproperTerm per match, k as written (E = k dtheta^2).
void add_harmonic_impropers(const GeneratorInput& in, const std::vector<std::array<int, 4>>& impropers, System& sys);

// ---------------------------------------------------------------- CHARMM sections (forcefield_charmm.cpp)

// AmoebaUreyBradleyForce: per angle not constrained (unless flexible_constraints), the first definition whose
// centre type matches and whose outer types match either way round: a UreyBradleyTerm on the outer atoms with
// force constant 2k (OpenMM adds HarmonicBondForce(d, 2k)).
void add_urey_bradleys(const GeneratorInput& in, const std::vector<std::array<int, 3>>& angles,
                       const ConstraintFlags& flags, System& sys);

// CMAPTorsionForce: the maps, then per chain of five bonded atoms extending a proper (sorted), the first definition
// without wildcards matching either direction, else the first with.
void add_cmap_torsions(const GeneratorInput& in, const std::vector<std::array<int, 4>>& propers, System& sys);

// LennardJonesForce (after assign_nonbonded_parameters and add_exceptions): per-particle sigma/epsilon from its
// <Atom>s, the 1-4 exceptions' sigma/epsilon from sigma14/epsilon14 (or NBFIX) scaled by its lj14scale, and
// System::lj_types when both types of an <NBFixPair> are in the system. InputError for a type without an entry, or
// an atom with <NonbondedForce> epsilon too.
void apply_lennard_jones(const GeneratorInput& in, System& sys);

// ---------------------------------------------------------------- constraints (forcefield_constraints.cpp)

// Per residue: 1 for a water (HOH after pdbNames.xml) when rigid_water is set.
std::vector<char> rigid_water_residues(const Topology& top, const NormalisedNames& names, bool rigid_water);

// OpenMM's constraint options: HBonds (bonds with a hydrogen), AllBonds, HAngles (all bonds; angles H-X-H and
// H-O-X); every bond and angle inside a rigid water.
ConstraintFlags constraint_flags(const GeneratorInput& in, const std::vector<char>& rigid_residue,
                                 const std::vector<std::array<int, 3>>& angles);

// Hydrogen mass repartitioning: each hydrogen outside rigid waters gets hydrogen_mass_amu, taken from the heavy
// atom bonded to it. InputError for a nonpositive hydrogen mass or one that leaves an atom without mass.
void repartition_hydrogen_masses(const GeneratorInput& in, const std::vector<char>& rigid_residue,
                                 double hydrogen_mass_amu, System& sys);

// System::rigid_waters: per rigid water residue, its O and two H (besides virtual sites, which are placed from
// them) when all three distances are constrained and both O-H distances are equal.
void add_rigid_waters(const GeneratorInput& in, const std::vector<char>& rigid_residue,
                      const ConstraintSet& constraints, System& sys);

}  // namespace mdsim::ffgen
