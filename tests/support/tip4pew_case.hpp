// The TIP4P-Ew case with virtual sites (shared/topologies ffxml_amber14_tip4pew_ala2): its serialized System
// (tests/data/make_system_xml_tip4pew.py, OpenMM 7.7) and OpenMM's reference, for the CPU and CUDA virtual-site tests.
#pragma once

#include <string>
#include <vector>

#include "io/system_xml.hpp"
#include "support/reference_data.hpp"
#include "support/system_xml_cases.hpp"

namespace mdsim_test {

inline std::string tip4pew_reference() {
  return std::string(MDSIM_SOURCE_DIR) + "/tests/data/shared/topologies/reference/ffxml_amber14_tip4pew_ala2";
}

inline mdsim::System tip4pew_system() {
  return mdsim::read_system_xml(system_xml_data() + "system_xml_tip4pew_ala2.system.xml.gz").system;
}

// OpenMM's positions (sites placed).
inline std::vector<mdsim::Vec3d> tip4pew_positions() { return read_h5_vec3(tip4pew_reference() + ".h5", "positions_nm"); }

// The positions with every site's row moved away (10 nm off): what an evaluation must place itself.
inline std::vector<mdsim::Vec3d> with_sites_displaced(const mdsim::System& s, std::vector<mdsim::Vec3d> x) {
  for (const mdsim::VirtualSite& v : s.virtual_sites) x[static_cast<std::size_t>(v.particle)] += mdsim::Vec3d(10, -10, 10);
  return x;
}

}  // namespace mdsim_test
