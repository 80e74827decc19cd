// The Systems the reader and template-path tests compare with OpenMM's createSystem(constraints=None,
// rigidWater=False) (one helper each instead of a copy per test file): a topology file's options, and a PDB through
// the force-field template path.
#pragma once

#include <string>

#include "io/pdb_reader.hpp"
#include "io/topology_file.hpp"
#include "model/forcefield.hpp"

namespace mdsim_test {

// createSystem's arguments for a topology-file reader: this method and cutoff, Ewald tolerance 5e-4, no constraints,
// flexible water.
inline mdsim::TopologyFileOptions flexible_topology_options(mdsim::NonbondedMethod method, double cutoff_nm,
                                                            bool dispersion_correction) {
  mdsim::TopologyFileOptions o;
  o.nonbonded.method = method;
  o.nonbonded.cutoff_nm = cutoff_nm;
  o.nonbonded.ewald_tolerance = 5e-4;
  o.nonbonded.dispersion_correction = dispersion_correction;
  o.constraints = mdsim::ConstraintMode::None;
  o.rigid_water = false;
  return o;
}

// The PDB (its bonds made as OpenMM's PDBFile makes them) through the template path with `ff`: this method, a
// 1.0 nm cutoff, Ewald tolerance 5e-4, and the given constraints (none and flexible water unless said otherwise).
// `topology`, when given, receives the structure read.
inline mdsim::System template_system(const mdsim::ForceFieldData& ff, const std::string& pdb,
                                     mdsim::NonbondedMethod method, bool dispersion_correction,
                                     mdsim::ConstraintMode constraints = mdsim::ConstraintMode::None,
                                     bool rigid_water = false, mdsim::TemplateAssignment* assignment = nullptr,
                                     mdsim::Topology* topology = nullptr) {
  mdsim::Topology top = mdsim::read_pdb(pdb);
  mdsim::create_topology_bonds(top, ff.standard);
  mdsim::ForceFieldOptions o;
  o.constraints = constraints;
  o.rigid_water = rigid_water;
  o.nonbonded.method = method;
  o.nonbonded.cutoff_nm = 1.0;
  o.nonbonded.ewald_tolerance = 5e-4;
  o.nonbonded.dispersion_correction = dispersion_correction;
  mdsim::System s = mdsim::build_system(top, ff, o, assignment);
  if (topology != nullptr) *topology = std::move(top);
  return s;
}

}  // namespace mdsim_test
