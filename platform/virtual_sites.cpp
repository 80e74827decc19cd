#include "platform/virtual_sites.hpp"

#include <string>

#include "common/errors.hpp"

namespace mdsim {

namespace {

std::string site_name(const VirtualSite& s) { return "virtual site at particle " + std::to_string(s.particle); }

void check_parents(const System& system, const VirtualSite& s, const std::vector<char>& is_site) {
  const int n = system.num_particles();
  const int expected = s.type == VirtualSiteType::TwoParticleAverage ? 2 : 3;
  if (s.num_parents != expected)
    throw InputError(site_name(s) + ": " + std::to_string(s.num_parents) + " parent particles, its type takes " +
                     std::to_string(expected));
  for (int k = 0; k < s.num_parents; ++k) {
    const int p = s.parents[static_cast<std::size_t>(k)];
    if (p < 0 || p >= n)
      throw InputError(site_name(s) + ": parent particle " + std::to_string(p) + " is out of range (the system has " +
                       std::to_string(n) + " particles, indices from 0)");
    if (is_site[static_cast<std::size_t>(p)])
      throw InputError(site_name(s) + ": parent particle " + std::to_string(p) +
                       " is itself a virtual site; build every site from real atoms");
    if (!(system.mass_amu[static_cast<std::size_t>(p)] > 0.0))
      throw InputError(site_name(s) + ": parent particle " + std::to_string(p) +
                       " has mass 0; the force spread onto it would be lost");
    for (int l = 0; l < k; ++l)
      if (s.parents[static_cast<std::size_t>(l)] == p)
        throw InputError(site_name(s) + ": parent particle " + std::to_string(p) + " is given twice");
  }
}

}  // namespace

void check_virtual_sites(const System& system) {
  const int n = system.num_particles();
  std::vector<char> is_site(static_cast<std::size_t>(n), 0);
  for (const VirtualSite& s : system.virtual_sites) {
    if (s.particle < 0 || s.particle >= n)
      throw InputError(site_name(s) + ": the particle is out of range (the system has " + std::to_string(n) +
                       " particles, indices from 0)");
    char& flag = is_site[static_cast<std::size_t>(s.particle)];
    if (flag) throw InputError(site_name(s) + ": the particle is defined as a virtual site twice");
    flag = 1;
    if (system.mass_amu[static_cast<std::size_t>(s.particle)] != 0.0)
      throw InputError(site_name(s) + ": a virtual site must have mass 0, got " +
                       quoted_number(system.mass_amu[static_cast<std::size_t>(s.particle)]) + " amu");
  }
  for (const VirtualSite& s : system.virtual_sites) check_parents(system, s, is_site);
}

void place_virtual_sites(const System& system, std::vector<Vec3d>& x) {
  for (const VirtualSite& s : system.virtual_sites) {
    const Vec3d r[3] = {x[static_cast<std::size_t>(s.parents[0])], x[static_cast<std::size_t>(s.parents[1])],
                        s.num_parents > 2 ? x[static_cast<std::size_t>(s.parents[2])] : Vec3d(0, 0, 0)};
    x[static_cast<std::size_t>(s.particle)] = virtual_site_position(virtual_site_params<double>(s), r);
  }
}

void spread_virtual_site_forces(const System& system, const std::vector<Vec3d>& x, std::vector<Vec3d>& f) {
  for (const VirtualSite& s : system.virtual_sites) {
    const Vec3d r[3] = {x[static_cast<std::size_t>(s.parents[0])], x[static_cast<std::size_t>(s.parents[1])],
                        s.num_parents > 2 ? x[static_cast<std::size_t>(s.parents[2])] : Vec3d(0, 0, 0)};
    Vec3d share[3];
    spread_virtual_site_force(virtual_site_params<double>(s), r, f[static_cast<std::size_t>(s.particle)], share);
    for (int k = 0; k < s.num_parents; ++k) f[static_cast<std::size_t>(s.parents[static_cast<std::size_t>(k)])] += share[k];
  }
}

std::vector<int> water_sites(const System& system, const std::vector<std::array<int, 3>>& waters,
                             const std::function<bool(const VirtualSite&)>& accept) {
  std::vector<int> water_of(static_cast<std::size_t>(system.num_particles()), -1);
  for (std::size_t w = 0; w < waters.size(); ++w)
    for (int a : waters[w]) water_of[static_cast<std::size_t>(a)] = static_cast<int>(w);
  std::vector<int> site(waters.size(), -1), count(waters.size(), 0);
  for (std::size_t k = 0; k < system.virtual_sites.size(); ++k) {
    const VirtualSite& v = system.virtual_sites[k];
    if (!accept(v)) continue;
    const int w = water_of[static_cast<std::size_t>(v.parents[0])];
    bool in_water = w >= 0;
    for (int p = 1; p < v.num_parents; ++p)
      in_water = in_water && water_of[static_cast<std::size_t>(v.parents[static_cast<std::size_t>(p)])] == w;
    if (in_water && count[static_cast<std::size_t>(w)]++ == 0) site[static_cast<std::size_t>(w)] = static_cast<int>(k);
  }
  for (std::size_t w = 0; w < site.size(); ++w)
    if (count[w] > 1) site[w] = -1;
  return site;
}

void zero_virtual_site_rows(const System& system, std::vector<Vec3d>& rows) {
  for (const VirtualSite& s : system.virtual_sites) rows[static_cast<std::size_t>(s.particle)] = Vec3d(0, 0, 0);
}

}  // namespace mdsim
