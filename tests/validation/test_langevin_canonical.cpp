// Validation: LangevinMiddle samples the canonical ensemble. Alanine dipeptide in vacuum (22 atoms,
// HBonds, COM motion removed: 51 degrees of freedom), 300 K, friction 5/ps, 1 fs, 500 ps.
//
// In the canonical ensemble the kinetic energy of d quadratic degrees of freedom is Gamma
// distributed with shape d/2 and scale kT: mean d kT/2, variance d (kT)^2/2. The test compares
//  - the mean temperature with 300 K,
//  - the variance of the kinetic energy with d (kT)^2 / 2,
// each within 4 standard errors estimated from block averages (blocks of 10 ps, much longer than the
// ~0.1 ps velocity correlation time at this friction), and
//  - the distribution of the kinetic energy, sampled every 0.5 ps (independent samples), with the
//    Gamma distribution by a Kolmogorov-Smirnov test at the 0.1% level.
// The time-step bias of LangevinMiddle at 1 fs with constrained hydrogens is far below these
// resolutions.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "engine/model.hpp"
#include "io/config.hpp"
#include "kernels/cpu/cpu_context.hpp"
#include "physics/integrator_steps.hpp"
#include "platform/context.hpp"
#include "support/catch.hpp"

using namespace mdsim;

namespace {

// Regularised lower incomplete gamma function P(a, x) (series for x < a + 1, continued fraction
// for the complement otherwise).
double gamma_p(double a, double x) {
  if (x <= 0) return 0.0;
  const double log_prefactor = a * std::log(x) - x - std::lgamma(a);
  if (x < a + 1) {
    double term = 1.0 / a, sum = term;
    for (int n = 1; n < 1000; ++n) {
      term *= x / (a + n);
      sum += term;
      if (term < sum * 1e-16) break;
    }
    return sum * std::exp(log_prefactor);
  }
  // Lentz's method for the continued fraction of Q(a, x).
  const double tiny = 1e-300;
  double b = x + 1 - a, c = 1 / tiny, d = 1 / b, h = d;
  for (int i = 1; i < 1000; ++i) {
    const double an = -i * (i - a);
    b += 2;
    d = an * d + b;
    if (std::fabs(d) < tiny) d = tiny;
    c = b + an / c;
    if (std::fabs(c) < tiny) c = tiny;
    d = 1 / d;
    const double delta = d * c;
    h *= delta;
    if (std::fabs(delta - 1) < 1e-16) break;
  }
  return 1.0 - std::exp(log_prefactor) * h;
}

struct MeanError {
  double mean = 0, error = 0;
};

MeanError block_mean(const std::vector<double>& x, int blocks) {
  const std::size_t per = x.size() / static_cast<std::size_t>(blocks);
  std::vector<double> means;
  for (int b = 0; b < blocks; ++b) {
    double s = 0;
    for (std::size_t i = b * per; i < (b + 1) * per; ++i) s += x[i];
    means.push_back(s / per);
  }
  MeanError r;
  for (double m : means) r.mean += m / blocks;
  double var = 0;
  for (double m : means) var += (m - r.mean) * (m - r.mean) / (blocks - 1);
  r.error = std::sqrt(var / blocks);
  return r;
}

}  // namespace

TEST_CASE("LangevinMiddle kinetic energy is canonically distributed (ala2 in vacuum)") {
  const std::string dir = MDSIM_TEST_DATA_DIR;
  const Model model = build_model(parse_config("system:\n  pdb: " + dir + "/systems/ala2_vacuum.pdb\n"
                                               "  nonbonded_method: no_cutoff\n  constraints: hbonds\n",
                                               "ala2_vacuum.yaml", dir));
  const double temperature = 300.0;
  DynamicsSettings s;
  s.integrator.temperature_k = temperature;
  s.integrator.friction_per_ps = 5.0;
  s.integrator.timestep_ps = 0.001;
  s.integrator.seed = 31415;
  auto ctx = make_cpu_context(model.system, s);
  ctx->set_positions(model.positions_nm);
  ctx->apply_constraints(1e-6);
  ctx->minimize(10.0, 200);
  ctx->set_velocities_to_temperature(temperature, 0);
  ctx->step(20000);  // 20 ps equilibration

  const int production = 500000, every = 10;  // 500 ps, a sample every 10 fs
  std::vector<double> ke;
  int dof = 0;
  for (int i = 0; i < production / every; ++i) {
    ctx->step(every);
    const SimulationState st = ctx->state(StateRequest{false, false, false, true});
    ke.push_back(st.kinetic_kj_per_mol);
    dof = st.degrees_of_freedom;
  }
  REQUIRE(dof == 3 * 22 - 12 - 3);
  const double kt = kBoltzmannKjPerMolK * temperature;
  const int blocks = 50;  // 10 ps each

  std::vector<double> temperatures, squared_deviation;
  for (double k : ke) temperatures.push_back(2 * k / (dof * kBoltzmannKjPerMolK));
  const MeanError t = block_mean(temperatures, blocks);
  const MeanError k_mean = block_mean(ke, blocks);
  for (double k : ke) squared_deviation.push_back((k - k_mean.mean) * (k - k_mean.mean));
  const MeanError k_var = block_mean(squared_deviation, blocks);
  const double expected_var = 0.5 * dof * kt * kt;

  // Kolmogorov-Smirnov on every 50th sample (0.5 ps apart) against Gamma(dof/2, kT).
  std::vector<double> sparse;
  for (std::size_t i = 0; i < ke.size(); i += 50) sparse.push_back(ke[i]);
  std::sort(sparse.begin(), sparse.end());
  const double n = static_cast<double>(sparse.size());
  double d_max = 0;
  for (std::size_t i = 0; i < sparse.size(); ++i) {
    const double cdf = gamma_p(0.5 * dof, sparse[i] / kt);
    d_max = std::max({d_max, std::fabs(cdf - i / n), std::fabs((i + 1) / n - cdf)});
  }
  const double ks_critical = 1.949 / std::sqrt(n);  // alpha = 0.001

  std::printf("[figure] Langevin ala2_vacuum 300 K, 500 ps: mean T %.2f +- %.2f K; KE variance %.3f +- %.3f "
              "(canonical %.3f) (kJ/mol)^2; KS D %.4f (critical %.4f, n %d)\n",
              t.mean, t.error, k_var.mean, k_var.error, expected_var, d_max, ks_critical, static_cast<int>(n));
  CHECK(std::fabs(t.mean - temperature) < 4 * t.error);
  CHECK(std::fabs(k_var.mean - expected_var) < 4 * k_var.error);
  CHECK(d_max < ks_critical);
  // The block errors are meaningful (a stuck run would make them zero).
  CHECK(t.error > 0.05);
  CHECK(t.error < 3.0);
}
