// Lists of vectors compared as the platform tests compare them (bit for bit, or by the largest difference), and
// a box from its three vectors.
#pragma once

#include <algorithm>
#include <cstring>
#include <vector>

#include "physics/pbc.hpp"
#include "physics/vec3.hpp"
#include "support/catch.hpp"

namespace mdsim_test {

// Whether a and b hold the same vectors, bit for bit.
inline bool bitwise_equal(const std::vector<mdsim::Vec3d>& a, const std::vector<mdsim::Vec3d>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(mdsim::Vec3d)) == 0;
}

// The largest |a_i - b_i| of two lists of the same length.
inline double max_difference(const std::vector<mdsim::Vec3d>& a, const std::vector<mdsim::Vec3d>& b) {
  REQUIRE(a.size() == b.size());
  double worst = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i) worst = std::max(worst, mdsim::norm(a[i] - b[i]));
  return worst;
}

inline mdsim::Boxd make_box(mdsim::Vec3d a, mdsim::Vec3d b, mdsim::Vec3d c) {
  mdsim::Boxd box;
  box.a = a;
  box.b = b;
  box.c = c;
  return box;
}

}  // namespace mdsim_test
