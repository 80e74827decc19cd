// libFuzzer target of the force-field XML reader (io/forcefield_xml.hpp): the input is the text of one
// OpenMM force-field file, read by parse_forcefield_xml (the reader load_forcefields applies to each file;
// <Include>s are not followed, so the target never opens files the input names). A force field it accepts
// is then handed to build_system (model/forcefield.hpp) for two fixed topologies, with the standard residue
// tables of forcefields/: hydrogen peroxide + formaldehyde (the tests' tiny topology, matched by
// tests/data/ff_tiny.xml) and one water (matched by tip3p.xml), so that the data the reader produced is
// consumed the way a run consumes it. Both document InputError for bad input; any other exception, a
// sanitizer report, a crash or a timeout is a finding.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "common/errors.hpp"
#include "io/forcefield_xml.hpp"
#include "model/forcefield.hpp"
#include "support/tiny_topology.hpp"

namespace {

mdsim::Topology water_topology() {
  mdsim::Topology t;
  t.source = "water.pdb";
  t.chains.push_back({"W", {0}});
  t.residues.push_back({"HOH", 0, 1, ' ', {0, 1, 2}, 1});
  t.atoms = {{"O", "O", 0, 1, 1}, {"H1", "H", 0, 2, 2}, {"H2", "H", 0, 3, 3}};
  t.positions_nm = {{0.0, 0.0, 0.0}, {0.09572, 0.0, 0.0}, {-0.024, 0.0927, 0.0}};
  return t;
}

struct Fixtures {
  mdsim::StandardResidueData standard = mdsim::load_standard_residue_data(MDSIM_SOURCE_DIR "/forcefields");
  std::vector<mdsim::Topology> topologies;
  Fixtures() {
    topologies = {mdsim_test::tiny_topology(), water_topology()};
    for (auto& t : topologies) mdsim::create_topology_bonds(t, standard);
  }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const Fixtures fixtures;
  mdsim::ForceFieldData ff;
  try {
    ff = mdsim::parse_forcefield_xml(std::string(reinterpret_cast<const char*>(data), size), "fuzz.xml");
  } catch (const mdsim::InputError&) {
    return 0;
  }
  ff.standard = fixtures.standard;
  static const mdsim::ConstraintMode modes[] = {mdsim::ConstraintMode::None, mdsim::ConstraintMode::HBonds,
                                                mdsim::ConstraintMode::AllBonds, mdsim::ConstraintMode::HAngles};
  mdsim::ForceFieldOptions options;
  options.nonbonded.method = mdsim::NonbondedMethod::NoCutoff;
  options.constraints = modes[size % 4];
  options.rigid_water = (size / 4) % 2 == 0;
  for (const auto& topology : fixtures.topologies) {
    try {
      mdsim::build_system(topology, ff, options);
    } catch (const mdsim::InputError&) {
    }
  }
  return 0;
}
