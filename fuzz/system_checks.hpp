// What the fuzz targets of the topology readers (fuzz/system_xml.cpp, amber_prmtop.cpp, gromacs_top.cpp) check of an
// accepted System and Topology: std::abort() (a finding) when a term, constraint, exception, virtual site or
// LJ type names a particle out of range, a per-particle value is not finite, or the Topology's atoms, residues and
// bonds disagree with the System; and of coordinates: finite positions and velocities, one velocity per position.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdlib>

#include "io/topology_file.hpp"
#include "model/system.hpp"
#include "model/topology.hpp"

namespace mdsim_fuzz {

inline bool finite(const mdsim::Vec3d& v) { return std::isfinite(v.x) && std::isfinite(v.y) && std::isfinite(v.z); }

inline void check_system(const mdsim::System& s) {
  const int n = s.num_particles();
  const auto size = static_cast<std::size_t>(n);
  if (s.charge_e.size() != size || s.sigma_nm.size() != size || s.epsilon_kj_per_mol.size() != size) std::abort();
  for (std::size_t k = 0; k < size; ++k)
    if (!std::isfinite(s.mass_amu[k]) || !std::isfinite(s.charge_e[k]) || !std::isfinite(s.sigma_nm[k]) ||
        !std::isfinite(s.epsilon_kj_per_mol[k]))
      std::abort();
  auto in_range = [n](int a) { return a >= 0 && a < n; };
  s.for_each_bonded([&](const auto& terms) {
    for (const auto& term : terms)
      for (const int a : term.atoms())
        if (!in_range(a)) std::abort();
  });
  for (const auto& c : s.constraints)
    if (!in_range(c.i) || !in_range(c.j)) std::abort();
  for (const auto& e : s.exceptions)
    if (!in_range(e.i) || !in_range(e.j)) std::abort();
  for (const auto& w : s.rigid_waters)
    if (!in_range(w.oxygen) || !in_range(w.hydrogen1) || !in_range(w.hydrogen2)) std::abort();
  for (const auto& v : s.virtual_sites) {
    if (!in_range(v.particle) || v.num_parents < 2 || v.num_parents > 3) std::abort();
    for (int k = 0; k < v.num_parents; ++k)
      if (!in_range(v.parents[static_cast<std::size_t>(k)])) std::abort();
  }
  if (s.lj_types) {
    const mdsim::LjTypeTable& t = *s.lj_types;
    const auto pairs = static_cast<std::size_t>(t.num_types) * static_cast<std::size_t>(t.num_types);
    if (t.num_types < 0 || t.particle_type.size() != size || t.c12_kj_per_mol_nm12.size() != pairs ||
        t.c6_kj_per_mol_nm6.size() != pairs)
      std::abort();
    for (const int type : t.particle_type)
      if (type < 0 || type >= t.num_types) std::abort();
  }
}

// A topology file's model: the System as above, one Topology atom per particle, residues and bonds in range.
inline void check_topology_file_model(const mdsim::TopologyFileModel& m) {
  check_system(m.system);
  const int n = m.system.num_particles();
  if (static_cast<int>(m.topology.atoms.size()) != n) std::abort();
  for (const auto& chain : m.topology.chains)
    for (const int r : chain.residues)
      if (r < 0 || r >= static_cast<int>(m.topology.residues.size())) std::abort();
  for (const auto& residue : m.topology.residues)
    for (const int a : residue.atoms)
      if (a < 0 || a >= n) std::abort();
  for (const auto& [i, j] : m.topology.bonds)
    if (i < 0 || j < 0 || i >= n || j >= n) std::abort();
  for (const auto& r : m.position_restraints)
    if (r.atom < 0 || r.atom >= n) std::abort();
}

inline void check_coordinates(const mdsim::CoordinateFile& c) {
  if (!c.velocities_nm_per_ps.empty() && c.velocities_nm_per_ps.size() != c.positions_nm.size()) std::abort();
  for (const mdsim::Vec3d& x : c.positions_nm)
    if (!finite(x)) std::abort();
  for (const mdsim::Vec3d& v : c.velocities_nm_per_ps)
    if (!finite(v)) std::abort();
  if (c.box && (!finite(c.box->a) || !finite(c.box->b) || !finite(c.box->c))) std::abort();
}

}  // namespace mdsim_fuzz
