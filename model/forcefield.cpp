// System building from a Topology and OpenMM ForceField XML data, following OpenMM 7.7's app/forcefield.py
// createSystem so that every term, its parameters and its atom order equal OpenMM's for the same input. The work is
// done by the generators of model/forcefield_generators.hpp (forcefield_templates.cpp, _nonbonded.cpp, _bonded.cpp,
// _torsions.cpp, _constraints.cpp); this file runs them in createSystem's order. Topology bonds come from
// create_topology_bonds (forcefield_topology_bonds.cpp), called where the topology is read.
#include "model/forcefield.hpp"

#include "common/errors.hpp"
#include "model/forcefield_generators.hpp"

namespace mdsim {
namespace ffgen {

GeneratorInput::GeneratorInput(const Topology& top, const ForceFieldData& ff, const ForceFieldOptions& opts)
    : topology(top), forcefield(ff), options(opts) {
  check_topology(top);
  names = normalise_names(top, ff.standard);
  graph = make_atom_graph(top);
  tables = make_type_tables(ff);
  match = match_templates(top, ff, names, graph);
}

}  // namespace ffgen

namespace {

void set_box_and_nonbonded(const Topology& top, const ForceFieldOptions& options, System& sys) {
  sys.box = top.box;
  sys.nonbonded = options.nonbonded;
  if (!top.box && is_periodic(options.nonbonded.method))
    throw InputError(located(top.source, 0, 0,
                             "a periodic nonbonded method (PME or CutoffPeriodic) needs a periodic box, but the "
                             "structure has none (no CRYST1 record)"));
}

}  // namespace

System build_system(const Topology& top, const ForceFieldData& ff, const ForceFieldOptions& options,
                    TemplateAssignment* assignment) {
  using namespace ffgen;
  const GeneratorInput in(top, ff, options);
  if (assignment != nullptr) *assignment = template_assignment(ff, in.match);
  const std::vector<char> rigid = rigid_water_residues(top, in.names, options.rigid_water);

  System sys;
  assign_masses(in, sys);
  if (options.hydrogen_mass_amu) repartition_hydrogen_masses(in, rigid, *options.hydrogen_mass_amu, sys);
  set_box_and_nonbonded(top, options, sys);

  const BondedLists lists = list_bonded_terms(top, in.graph);
  const ConstraintFlags flags = constraint_flags(in, rigid, lists.angles);
  ConstraintSet constraints;
  const std::vector<double> bond_length_nm = add_bonds(in, flags, constraints, sys);
  add_angles(in, lists.angles, flags, bond_length_nm, constraints, sys);
  add_urey_bradleys(in, lists.angles, flags, sys);
  add_propers(in, lists.propers, sys);
  add_impropers(in, lists.impropers, sys);
  add_harmonic_impropers(in, lists.impropers, sys);
  add_cmap_torsions(in, lists.propers, sys);
  add_virtual_sites(in, sys);
  assign_nonbonded_parameters(in, sys);
  add_exceptions(in, sys);
  apply_lennard_jones(in, sys);
  sys.constraints = constraints.list();
  add_rigid_waters(in, rigid, constraints, sys);
  return sys;
}

}  // namespace mdsim
