// Overlapping atoms: two atoms closer than any real pair of atoms can be (a duplicated record, or a
// clash left by a bad conversion). Their pair forces are infinite or enormous, so every platform's
// first force evaluation or minimisation would fail; engine/model refuses such a structure up front.
// Units: nm.
#pragma once

#include <optional>
#include <vector>

#include "physics/pbc.hpp"
#include "physics/vec3.hpp"

namespace mdsim {

// Closer than this is an overlap: the shortest real interatomic distance (H2, 0.074 nm; O-H in water
// 0.096 nm) is well above it.
inline constexpr double kOverlapDistanceNm = 0.05;

struct AtomPair {
  int i = -1, j = -1;   // i < j
  double distance_nm = 0;
};

// The closest pair of atoms nearer than threshold_nm (by minimum image when box is given; the box in
// OpenMM's reduced form), or none. Among pairs at equal distance, the one with the smallest (i, j).
// Grid hashing with cells of threshold_nm: O(N). Positions must be finite.
std::optional<AtomPair> find_closest_pair(const std::vector<Vec3d>& positions_nm, const std::optional<Boxd>& box,
                                          double threshold_nm = kOverlapDistanceNm);

}  // namespace mdsim
