// Virtual sites on the host, the same for every platform: the System's VirtualSite as the physics functions take it
// (physics/virtual_sites.hpp), the checks every platform makes, and the placement and force spreading over all
// sites (the CPU platform's loops; tests). Units: nm, kJ/mol/nm.
//
// Forces follow OpenMM's getState(getForces=True) convention: after spreading, a parent's row includes the share
// spread onto it, and the site's own row keeps the force on the site itself (the integrators ignore it: mass 0).
#pragma once

#include <array>
#include <functional>
#include <vector>

#include "model/system.hpp"
#include "physics/virtual_sites.hpp"

namespace mdsim {

template <typename T>
VirtualSiteParams<T> virtual_site_params(const VirtualSite& s) {
  VirtualSiteParams<T> p{};
  switch (s.type) {
    case VirtualSiteType::TwoParticleAverage: p.geometry = SiteGeometry::TwoParticleAverage; break;
    case VirtualSiteType::ThreeParticleAverage: p.geometry = SiteGeometry::ThreeParticleAverage; break;
    case VirtualSiteType::OutOfPlane: p.geometry = SiteGeometry::OutOfPlane; break;
    case VirtualSiteType::LocalCoordinates: p.geometry = SiteGeometry::LocalCoordinates; break;
  }
  p.num_parents = s.num_parents;
  for (int i = 0; i < 3; ++i) {
    const auto k = static_cast<std::size_t>(i);
    p.w[i] = T(s.weights[k]);
    p.wo[i] = T(s.origin_weights[k]);
    p.wx[i] = T(s.x_weights[k]);
    p.wy[i] = T(s.y_weights[k]);
  }
  p.local_nm = Vec3<T>(s.local_position_nm);
  return p;
}

// InputError unless every site is a distinct particle of mass 0 whose parents (2 for TwoParticleAverage, else 3)
// are distinct particles in range with mass that are not sites themselves.
void check_virtual_sites(const System& system);

// Sets each site's row of `positions_nm` from its parents' rows.
void place_virtual_sites(const System& system, std::vector<Vec3d>& positions_nm);

// Adds each site's force (its row of `forces`, kept) onto its parents' rows, by the chain rule at `positions_nm`
// (sites placed).
void spread_virtual_site_forces(const System& system, const std::vector<Vec3d>& positions_nm,
                                std::vector<Vec3d>& forces);

// For each water (its three atoms), the index in system.virtual_sites of the one site `accept` takes whose parents
// are all atoms of that water (a 4-site water's M); -1 where there is none, or more than one.
std::vector<int> water_sites(const System& system, const std::vector<std::array<int, 3>>& waters,
                             const std::function<bool(const VirtualSite&)>& accept);

// Zeroes the sites' rows (a minimiser's gradient: a site is no coordinate of its own).
void zero_virtual_site_rows(const System& system, std::vector<Vec3d>& rows);

}  // namespace mdsim
