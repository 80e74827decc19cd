// CMAP's shared table: the bicubic patch coefficients of every map of a System (System::cmap_maps), computed
// once on the host and read by both platforms (the CPU evaluator from host memory, the CUDA evaluator from a
// device copy) through BondedTables (physics/bonded.hpp). As OpenMM's CMAPTorsionForce: the derivatives at
// the grid points come from periodic cubic splines through the grid (dE/dphi along phi, dE/dpsi along psi,
// d2E/dphi dpsi as the phi-derivative of the psi-derivatives), then each cell is the bicubic patch that
// takes those values and derivatives at its four corners.
#pragma once

#include <cstddef>
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

// A map as CHARMM parameter files, AMBER prmtops and GROMACS [cmaptypes] tabulate it (from -180 degrees, phi the
// slow index): value(k) is the file's k-th grid value (k = size phi_index + psi_index), times `scale` (to kJ/mol).
// CmapMap's index 0 is at 0 degrees and phi is the fast index, so each index is shifted by size/2.
template <typename Value>
CmapMap cmap_map_from_minus_180(int size, Value&& value, double scale) {
  CmapMap map;
  map.size = size;
  const auto n = static_cast<std::size_t>(size), h = n / 2;
  map.energy_kj_per_mol.resize(n * n);
  for (std::size_t phi = 0; phi < n; ++phi)
    for (std::size_t psi = 0; psi < n; ++psi)
      map.energy_kj_per_mol[phi + n * psi] = value(n * ((phi + h) % n) + (psi + h) % n) * scale;
  return map;
}

// The derivatives at the knots of the periodic cubic spline through y (knots 2pi/n apart, n = y.size() >= 2),
// d y / d angle at each knot.
std::vector<double> periodic_spline_slopes(const std::vector<double>& y);

}  // namespace mdsim
