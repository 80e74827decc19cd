#include "platform/dispersion_correction.hpp"

#include <cmath>
#include <map>
#include <vector>
#include <utility>

#include "common/errors.hpp"
#include "physics/nonbonded.hpp"

namespace mdsim {

namespace {

constexpr double kPi = 3.14159265358979323846;

// Nodes and weights of n-point Gauss-Legendre quadrature on [-1, 1] (Newton on P_n).
struct GaussLegendre {
  static constexpr int n = 10;
  double x[n], w[n];
  // (P_{n-1}(z), P_n(z)) by the three-term recurrence.
  static std::pair<double, double> legendre(double z) {
    double p0 = 1.0, p1 = z;
    for (int k = 2; k <= n; ++k) {
      const double p2 = ((2.0 * k - 1.0) * z * p1 - (k - 1.0) * p0) / k;
      p0 = p1;
      p1 = p2;
    }
    return {p0, p1};
  }
  GaussLegendre() {
    for (int i = 0; i < n; ++i) {
      double z = std::cos(kPi * (i + 0.75) / (n + 0.5));
      double dp = 1.0;
      for (int iter = 0; iter < 100; ++iter) {
        const auto [p0, p1] = legendre(z);
        dp = n * (z * p1 - p0) / (z * z - 1.0);
        const double dz = p1 / dp;
        z -= dz;
        if (std::fabs(dz) < 1e-16) break;
      }
      // recompute the derivative at the converged node
      const auto [p0, p1] = legendre(z);
      dp = n * (z * p1 - p0) / (z * z - 1.0);
      x[i] = z;
      w[i] = 2.0 / ((1.0 - z * z) * dp * dp);
    }
  }
};

}  // namespace

// int_{rs}^{rc} f(r) (1 - S(r)) dr. The integrand's only singularity is at r = 0: panels whose width grows with
// r keep every panel's width a small, fixed fraction of its distance from it.
template <typename F>
static double switch_region_integral(F&& f, double r_switch_nm, double r_cut_nm) {
  if (!(r_switch_nm > 0.0) || !(r_switch_nm < r_cut_nm))
    throw InputError("nonbonded: switching distance must satisfy 0 < r_switch < r_cutoff");
  static const GaussLegendre gl;
  const int panels = 64;
  const double ratio = std::pow(r_cut_nm / r_switch_nm, 1.0 / panels);
  double sum = 0.0;
  double lo = r_switch_nm;
  for (int p = 0; p < panels; ++p) {
    const double hi = (p == panels - 1) ? r_cut_nm : lo * ratio;
    const double half = 0.5 * (hi - lo), mid = 0.5 * (hi + lo);
    double panel = 0.0;
    for (int k = 0; k < GaussLegendre::n; ++k) {
      const double r = mid + half * gl.x[k];
      panel += gl.w[k] * f(r) * (1.0 - switching_function(r, r_switch_nm, r_cut_nm).s);
    }
    sum += half * panel;
    lo = hi;
  }
  return sum;
}

double dispersion_switch_integral(double sigma_nm, double r_switch_nm, double r_cut_nm) {
  const double s6 = std::pow(sigma_nm, 6);
  const double s12 = s6 * s6;
  const auto f = [&](double r) {
    const double r2 = r * r, r4 = r2 * r2;
    return s12 / (r4 * r4 * r2) - s6 / r4;
  };
  return switch_region_integral(f, r_switch_nm, r_cut_nm);
}

DispersionSwitchIntegrals dispersion_switch_integrals(double r_switch_nm, double r_cut_nm) {
  const auto r10 = [](double r) { return 1.0 / std::pow(r, 10); };
  const auto r4 = [](double r) { return 1.0 / std::pow(r, 4); };
  return {switch_region_integral(r10, r_switch_nm, r_cut_nm), switch_region_integral(r4, r_switch_nm, r_cut_nm)};
}

namespace {

// With a type table (System::lj_types): 2 pi N^2 <c12/(9 rc^9) - c6/(3 rc^3) + c12 J12 - c6 J6> over the
// N(N+1)/2 pairs i <= j, counted by type pair (OpenMM's CustomNonbondedForce long-range correction for
// c12/r^12 - c6/r^6, whose particle classes are the types), J the switching integrals.
double table_dispersion_coefficient(const System& system) {
  const NonbondedSettings& nb = system.nonbonded;
  const LjTypeTable& t = *system.lj_types;
  const std::size_t nt = std::size_t(t.num_types);
  std::vector<double> count(nt, 0.0);
  for (const int type : t.particle_type) count[std::size_t(type)] += 1.0;
  const double rc = nb.cutoff_nm;
  DispersionSwitchIntegrals j{0.0, 0.0};
  if (nb.switch_distance_nm) j = dispersion_switch_integrals(*nb.switch_distance_nm, rc);
  const double w12 = 1.0 / (9.0 * std::pow(rc, 9)) + j.r10, w6 = 1.0 / (3.0 * std::pow(rc, 3)) + j.r4;
  double sum = 0.0;
  for (std::size_t a = 0; a < nt; ++a)
    for (std::size_t b = a; b < nt; ++b) {
      const double pairs = a == b ? count[a] * (count[a] + 1.0) / 2.0 : count[a] * count[b];
      sum += pairs * (t.c12_kj_per_mol_nm12[a * nt + b] * w12 - t.c6_kj_per_mol_nm6[a * nt + b] * w6);
    }
  const double nd = double(system.num_particles());
  return 2.0 * kPi * nd * nd * sum / (nd * (nd + 1.0) / 2.0);
}

}  // namespace

double dispersion_correction_coefficient(const System& system) {
  const NonbondedSettings& nb = system.nonbonded;
  if (!nb.dispersion_correction) return 0.0;
  if (nb.method == NonbondedMethod::NoCutoff || nb.method == NonbondedMethod::CutoffNonPeriodic) return 0.0;
  const int n = system.num_particles();
  if (n == 0) return 0.0;
  if (system.lj_types) return table_dispersion_coefficient(system);

  // Classes of particles with identical (sigma, epsilon), counted.
  std::map<std::pair<double, double>, long> classes;
  for (int i = 0; i < n; ++i) ++classes[{system.sigma_nm[static_cast<size_t>(i)], system.epsilon_kj_per_mol[static_cast<size_t>(i)]}];

  const double rc = nb.cutoff_nm;
  const bool use_switch = nb.switch_distance_nm.has_value();
  const double rs = use_switch ? *nb.switch_distance_nm : 0.0;
  double sum12 = 0.0, sum6 = 0.0, sum_switch = 0.0;
  auto add_pairs = [&](double pairs, double sigma, double epsilon) {
    const double s6 = std::pow(sigma, 6);
    sum12 += pairs * epsilon * s6 * s6;
    sum6 += pairs * epsilon * s6;
    if (use_switch && epsilon != 0.0) sum_switch += pairs * epsilon * dispersion_switch_integral(sigma, rs, rc);
  };
  for (auto a = classes.begin(); a != classes.end(); ++a) {
    const double count = double(a->second);
    add_pairs(count * (count + 1.0) / 2.0, a->first.first, a->first.second);  // pairs within the class, i <= j
    for (auto b = classes.begin(); b != a; ++b)
      add_pairs(count * double(b->second), combine_sigma(a->first.first, b->first.first),
                combine_epsilon(a->first.second, b->first.second));
  }
  const double nd = double(n);
  const double pair_count = nd * (nd + 1.0) / 2.0;
  sum12 /= pair_count;
  sum6 /= pair_count;
  sum_switch /= pair_count;
  return 8.0 * kPi * nd * nd * (sum12 / (9.0 * std::pow(rc, 9)) - sum6 / (3.0 * std::pow(rc, 3)) + sum_switch);
}

}  // namespace mdsim
