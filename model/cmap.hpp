// CMAP's shared table: the bicubic patch coefficients of every map of a System (System::cmap_maps), computed
// once on the host and read by both platforms (the CPU evaluator from host memory, the CUDA evaluator from a
// device copy) through BondedTables (physics/bonded.hpp). As OpenMM's CMAPTorsionForce: the derivatives at
// the grid points come from periodic cubic splines through the grid (dE/dphi along phi, dE/dpsi along psi,
// d2E/dphi dpsi as the phi-derivative of the psi-derivatives), then each cell is the bicubic patch that
// takes those values and derivatives at its four corners.
#pragma once

#include <vector>

#include "model/system.hpp"
#include "physics/cmap.hpp"

namespace mdsim {

struct CmapTable {
  // Map m's patch (s, t) starts at coefficients[offsets[m] + 16 (s + sizes[m] t)] (layout: CmapMapView).
  std::vector<double> coefficients;
  std::vector<int> offsets, sizes;

  // One view per map over a copy of `coefficients` (converted to T) that starts at base: host or device memory.
  template <typename T>
  std::vector<CmapMapView<T>> views(const T* base) const {
    std::vector<CmapMapView<T>> out;
    out.reserve(sizes.size());
    for (std::size_t m = 0; m < sizes.size(); ++m) out.push_back({base + offsets[m], sizes[m]});
    return out;
  }
  // The coefficients in T, to upload.
  template <typename T>
  std::vector<T> coefficients_as() const {
    return std::vector<T>(coefficients.begin(), coefficients.end());
  }
};

// The patches of every map, in map order. RuntimeError for a map smaller than 2 x 2 or whose energy count is
// not size * size (validate_system refuses such Systems first).
CmapTable make_cmap_table(const std::vector<CmapMap>& maps);

// The derivatives at the knots of the periodic cubic spline through y (knots 2pi/n apart, n = y.size() >= 2),
// d y / d angle at each knot.
std::vector<double> periodic_spline_slopes(const std::vector<double>& y);

}  // namespace mdsim
