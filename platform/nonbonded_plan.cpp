#include "platform/nonbonded_plan.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>
#include <sstream>
#include <string>
#include <utility>

#include "common/errors.hpp"
#include "physics/bspline.hpp"
#include "platform/dispersion_correction.hpp"

namespace mdsim {

namespace {

std::string fmt_nm(double v) {
  std::ostringstream s;
  s << v;
  return s.str();
}

void check_index(int index, int n, const char* what, size_t term) {
  if (index < 0 || index >= n)
    throw RuntimeError(std::string("system: ") + what + " " + std::to_string(term) + " refers to particle " +
                       std::to_string(index) + ", but the system has " + std::to_string(n) + " particles");
}

// About 17 GiB for the CPU solver's complex grid (16 B per point), 30 GiB for the CUDA solver's grids.
constexpr double kMaxPmeGridPoints = 1073741824.0;  // 2^30

void check_pme_grid_size(const PmeParameters& p, const NonbondedSettings& nb) {
  const double points = double(p.grid[0]) * double(p.grid[1]) * double(p.grid[2]);
  if (points <= kMaxPmeGridPoints) return;
  throw InputError("nonbonded: the PME grid for ewald_tolerance " + fmt_nm(nb.ewald_tolerance) + " and cutoff " +
                   fmt_nm(nb.cutoff_nm) + " nm in this box would be " + std::to_string(p.grid[0]) + " x " +
                   std::to_string(p.grid[1]) + " x " + std::to_string(p.grid[2]) + " points (" + fmt_nm(points) +
                   ", at most " + fmt_nm(kMaxPmeGridPoints) + "); raise system.ewald_tolerance (typical 5e-4)");
}

void check_settings(const System& s) {
  const NonbondedSettings& nb = s.nonbonded;
  if (nb.method != NonbondedMethod::NoCutoff) {
    if (!(nb.cutoff_nm > 0.0)) throw InputError("nonbonded: the cutoff must be positive (got " + fmt_nm(nb.cutoff_nm) + " nm)");
    if (nb.switch_distance_nm && (*nb.switch_distance_nm < 0.0 || *nb.switch_distance_nm >= nb.cutoff_nm))
      throw InputError("nonbonded: the switching distance must satisfy 0 <= r_switch < cutoff (got " +
                       fmt_nm(*nb.switch_distance_nm) + " nm with cutoff " + fmt_nm(nb.cutoff_nm) + " nm)");
  }
  if (is_periodic(nb.method)) {
    if (!s.box) throw InputError("nonbonded: a periodic nonbonded method needs a periodic box");
    check_periodic_box(nb, *s.box);
  }
  if (nb.method == NonbondedMethod::PME && !(nb.ewald_tolerance > 0.0 && nb.ewald_tolerance < 0.5))
    throw InputError("nonbonded: the Ewald error tolerance must lie in (0, 0.5) (got " + fmt_nm(nb.ewald_tolerance) + ")");
}

constexpr double kPi = 3.14159265358979323846;

// CMAP: every map at least 2 x 2 (as OpenMM's spline fit needs) with size * size finite energies, every
// torsion's map among them.
void check_cmap(const System& s) {
  for (size_t m = 0; m < s.cmap_maps.size(); ++m) {
    const CmapMap& map = s.cmap_maps[m];
    const std::string name = "system: CMAP map " + std::to_string(m);
    if (map.size < 2) throw RuntimeError(name + " has size " + std::to_string(map.size) + "; at least 2 is needed");
    if (map.energy_kj_per_mol.size() != size_t(map.size) * size_t(map.size))
      throw RuntimeError(name + " of size " + std::to_string(map.size) + " has " +
                         std::to_string(map.energy_kj_per_mol.size()) + " energies, not " +
                         std::to_string(map.size * map.size));
    for (const double e : map.energy_kj_per_mol)
      if (!std::isfinite(e)) throw RuntimeError(name + " has a non-finite energy");
  }
  for (size_t t = 0; t < s.cmap_torsions.size(); ++t) {
    const int map = s.cmap_torsions[t].map;
    if (map < 0 || size_t(map) >= s.cmap_maps.size())
      throw RuntimeError("system: CMAP torsion " + std::to_string(t) + " refers to map " + std::to_string(map) +
                         ", but the system has " + std::to_string(s.cmap_maps.size()) + " maps");
  }
}

// The LJ type table (System::lj_types): one type in range per particle, num_types^2 finite entries, symmetric.
void check_lj_types(const System& s) {
  if (!s.lj_types) return;
  const LjTypeTable& t = *s.lj_types;
  const size_t nt = size_t(std::max(t.num_types, 0));
  if (t.num_types <= 0 || t.particle_type.size() != size_t(s.num_particles()) || t.c12_kj_per_mol_nm12.size() != nt * nt ||
      t.c6_kj_per_mol_nm6.size() != nt * nt)
    throw RuntimeError("system: the LJ type table has " + std::to_string(t.num_types) + " types, " +
                       std::to_string(t.particle_type.size()) + " particle types for " +
                       std::to_string(s.num_particles()) + " particles and " +
                       std::to_string(t.c12_kj_per_mol_nm12.size()) + "/" + std::to_string(t.c6_kj_per_mol_nm6.size()) +
                       " c12/c6 entries; it needs one type per particle and num_types^2 entries of each");
  for (size_t i = 0; i < t.particle_type.size(); ++i)
    if (t.particle_type[i] < 0 || t.particle_type[i] >= t.num_types)
      throw RuntimeError("system: particle " + std::to_string(i) + " has LJ type " + std::to_string(t.particle_type[i]) +
                         ", outside 0 .. " + std::to_string(t.num_types - 1));
  for (size_t a = 0; a < nt; ++a)
    for (size_t b = 0; b < nt; ++b) {
      const double c12 = t.c12_kj_per_mol_nm12[a * nt + b], c6 = t.c6_kj_per_mol_nm6[a * nt + b];
      if (!std::isfinite(c12) || !std::isfinite(c6) || c12 != t.c12_kj_per_mol_nm12[b * nt + a] ||
          c6 != t.c6_kj_per_mol_nm6[b * nt + a])
        throw RuntimeError("system: the LJ type table's entry for types " + std::to_string(a) + " and " +
                           std::to_string(b) + " is not finite or not symmetric");
    }
}

}  // namespace

// |sum_j M(j+1) exp(2 pi i m j / n)|^2 for m = 0..n-1. Where it vanishes (m = n/2 for even n and
// even-degree splines) it is replaced by the mean of its neighbours, as OpenMM's reference PME does,
// so that the influence function stays finite.
std::vector<double> pme_bspline_moduli(int n) {
  double values[kPmeOrder];
  bspline_integer_values<kPmeOrder, double>(values);
  std::vector<double> moduli(static_cast<size_t>(n));
  for (int m = 0; m < n; ++m) {
    double re = 0.0, im = 0.0;
    for (int j = 0; j < kPmeOrder; ++j) {  // callers ensure n >= kPmeOrder
      const double arg = 2.0 * kPi * double(m) * double(j) / double(n);
      re += values[j] * std::cos(arg);
      im += values[j] * std::sin(arg);
    }
    moduli[static_cast<size_t>(m)] = re * re + im * im;
  }
  for (int m = 0; m < n; ++m) {
    if (moduli[static_cast<size_t>(m)] < 1.0e-7)
      moduli[static_cast<size_t>(m)] =
          0.5 * (moduli[static_cast<size_t>((m - 1 + n) % n)] + moduli[static_cast<size_t>((m + 1) % n)]);
  }
  return moduli;
}

CoulombMethod coulomb_method(NonbondedMethod m) {
  switch (m) {
    case NonbondedMethod::NoCutoff: return CoulombMethod::Plain;
    case NonbondedMethod::CutoffNonPeriodic:
    case NonbondedMethod::CutoffPeriodic: return CoulombMethod::ReactionField;
    case NonbondedMethod::PME: return CoulombMethod::Ewald;
  }
  return CoulombMethod::Plain;
}

void validate_system(const System& s) {
  const int n = s.num_particles();
  if (s.charge_e.size() != size_t(n) || s.sigma_nm.size() != size_t(n) || s.epsilon_kj_per_mol.size() != size_t(n))
    throw RuntimeError("system: per-particle arrays (mass, charge, sigma, epsilon) differ in length");
  s.for_each_bonded([&](const auto& terms) {
    for (size_t t = 0; t < terms.size(); ++t)
      for (const int atom : terms[t].atoms()) check_index(atom, n, terms[t].kName, t);
  });
  check_cmap(s);
  check_lj_types(s);
  for (int i = 0; i < n; ++i) {
    if (s.sigma_nm[size_t(i)] < 0.0 || s.epsilon_kj_per_mol[size_t(i)] < 0.0)
      throw RuntimeError("system: particle " + std::to_string(i) + " has a negative sigma or epsilon");
  }
  // Exceptions: each pair at most once; every one removes the normal pair interaction.
  std::set<std::pair<int, int>> seen;
  for (size_t t = 0; t < s.exceptions.size(); ++t) {
    const NonbondedException& e = s.exceptions[t];
    check_index(e.i, n, "exception", t);
    check_index(e.j, n, "exception", t);
    if (e.i == e.j) throw RuntimeError("system: exception " + std::to_string(t) + " pairs particle " + std::to_string(e.i) + " with itself");
    if (!seen.insert({std::min(e.i, e.j), std::max(e.i, e.j)}).second)
      throw RuntimeError("system: more than one exception for particles " + std::to_string(e.i) + " and " + std::to_string(e.j));
  }
}

void check_periodic_box(const NonbondedSettings& settings, const Boxd& box) {
  const double cutoff = settings.cutoff_nm;
  if (!(box.a.x > 0.0 && box.b.y > 0.0 && box.c.z > 0.0))
    throw InputError("nonbonded: periodic box vectors must have positive diagonal elements");
  const double half_min = 0.5 * box.smallest_height();
  if (is_periodic(settings.method) && cutoff > half_min)
    throw InputError("nonbonded: the cutoff " + fmt_nm(cutoff) + " nm exceeds half the periodic box size (" +
                     fmt_nm(half_min) + " nm)");
}

NonbondedPlan plan_nonbonded(const System& s) {
  validate_system(s);
  check_settings(s);
  const NonbondedSettings& nb = s.nonbonded;
  const int n = s.num_particles();
  NonbondedPlan plan;
  plan.method = nb.method;
  plan.coulomb = coulomb_method(nb.method);
  plan.periodic = is_periodic(nb.method);
  plan.pme = nb.method == NonbondedMethod::PME;
  plan.cutoff_nm = nb.method == NonbondedMethod::NoCutoff ? std::numeric_limits<double>::infinity() : nb.cutoff_nm;
  plan.switching = nb.switch_distance_nm.has_value() && nb.method != NonbondedMethod::NoCutoff;
  plan.pair.cutoff_nm = plan.cutoff_nm;
  plan.pair.switch_distance_nm = nb.switch_distance_nm.value_or(0.0);
  plan.pair.rf = {0.0, 0.0};
  if (nb.method != NonbondedMethod::NoCutoff) plan.pair.rf = reaction_field_constants(nb.cutoff_nm, nb.reaction_field_dielectric);
  if (plan.pme) {
    plan.pme_parameters = choose_pme_parameters(*s.box, nb);  // follows nb.pme_grid
    check_pme_grid_size(plan.pme_parameters, nb);
    plan.pair.ewald = pmath::scaled_erfc<double>(plan.pme_parameters.alpha_per_nm);
    for (double q : s.charge_e) plan.self_energy_kj_per_mol += ewald_self_energy(q, plan.pme_parameters.alpha_per_nm);
  } else {
    plan.pair.ewald = pmath::scaled_erfc<double>(0.0);
  }
  plan.dispersion_coefficient = dispersion_correction_coefficient(s);

  std::vector<std::vector<int>> partners(static_cast<size_t>(n));
  for (const NonbondedException& e : s.exceptions) {
    partners[size_t(e.i)].push_back(e.j);
    partners[size_t(e.j)].push_back(e.i);
  }
  plan.exclusion_start.assign(size_t(n) + 1, 0);
  for (int i = 0; i < n; ++i)
    plan.exclusion_start[size_t(i) + 1] = plan.exclusion_start[size_t(i)] + int(partners[size_t(i)].size());
  plan.exclusion_partner.reserve(size_t(plan.exclusion_start[size_t(n)]));
  for (int i = 0; i < n; ++i)
    plan.exclusion_partner.insert(plan.exclusion_partner.end(), partners[size_t(i)].begin(), partners[size_t(i)].end());
  return plan;
}

}  // namespace mdsim
