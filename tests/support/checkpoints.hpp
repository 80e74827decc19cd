// Bit-for-bit comparison of what two runs wrote (resume tests): one helper instead of a loop per test.
#pragma once

#include <cstddef>
#include <filesystem>
#include <vector>

#include "io/hdf5_arrays.hpp"
#include "physics/vec3.hpp"
#include "support/catch.hpp"

namespace mdsim_test {

// How many vectors of a and b differ in any component; a.size() + b.size() when their lengths differ.
inline std::size_t differing_vectors(const std::vector<mdsim::Vec3d>& a, const std::vector<mdsim::Vec3d>& b) {
  if (a.size() != b.size()) return a.size() + b.size();
  std::size_t differing = 0;
  for (std::size_t i = 0; i < a.size(); ++i) differing += (a[i].x != b[i].x || a[i].y != b[i].y || a[i].z != b[i].z);
  return differing;
}

// How many atoms' vectors in `dataset` ("positions_nm", "velocities_nm_per_ps") of two HDF5 files (checkpoints)
// differ in any bit; the files must hold the same number of atoms.
inline std::size_t differing_vectors(const std::filesystem::path& a_file, const std::filesystem::path& b_file,
                                     const char* dataset) {
  const auto a = mdsim::read_vec3_dataset_h5(a_file.string(), dataset);
  const auto b = mdsim::read_vec3_dataset_h5(b_file.string(), dataset);
  REQUIRE(a.size() == b.size());
  return differing_vectors(a, b);
}

// The runs in the folders a and b ended in the same state: the positions and velocities of their final
// checkpoints (out/checkpoint.h5) equal bit for bit.
inline void check_same_final_state(const std::filesystem::path& a, const std::filesystem::path& b) {
  for (const char* dataset : {"positions_nm", "velocities_nm_per_ps"}) {
    INFO(dataset);
    CHECK(differing_vectors(a / "out/checkpoint.h5", b / "out/checkpoint.h5", dataset) == 0);
  }
}

}  // namespace mdsim_test
