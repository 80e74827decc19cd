#include "kernels/cpu/cpu_minimizer.hpp"

#include <algorithm>
#include <cmath>
#include <deque>
#include <limits>
#include <string>

#include "engine/errors.hpp"

namespace mdsim {

namespace {

using Coords = std::vector<Vec3d>;

// Positions are projected onto the constraint surface to this relative accuracy (tighter than any
// integrator tolerance), gradients to |f . r| / r^2 below kGradientProjectionTolerance.
constexpr double kManifoldTolerance = 1e-10;
constexpr double kGradientProjectionTolerance = 1e-9;

double dot_all(const Coords& a, const Coords& b) {
  double s = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i) s += dot(a[i], b[i]);
  return s;
}

// Potential energy on the constraint manifold: positions are kept on it by `retract`, gradients are
// projected onto its tangent space.
class ManifoldObjective {
 public:
  ManifoldObjective(const EnergyAndForces& energy_and_forces, CpuConstraints* projector)
      : energy_and_forces_(energy_and_forces), projector_(projector) {}

  // Energy (kJ/mol) at x, gradient (= minus the projected force) overwritten.
  double evaluate(const Coords& x, Coords& gradient) {
    ++evaluations_;
    const double e = energy_and_forces_(x, gradient);
    if (projector_) project_out_constraint_forces(*projector_, x, gradient);
    for (auto& g : gradient) g = -g;
    return std::isfinite(e) ? e : std::numeric_limits<double>::infinity();
  }

  // Moves x (= reference + step) back onto the constraint surface along the constraint vectors of
  // reference (a retraction).
  void retract(const Coords& reference, Coords& x) {
    if (projector_) projector_->apply_positions(reference, x, kManifoldTolerance);
  }

  // Tangent component of a direction at x.
  void project(const Coords& x, Coords& direction) {
    if (projector_) projector_->apply_velocities(x, direction, kGradientProjectionTolerance);
  }

  long evaluations() const { return evaluations_; }

 private:
  const EnergyAndForces& energy_and_forces_;
  CpuConstraints* projector_;
  long evaluations_ = 0;
};

struct Point {
  Coords x, g;
  double f = 0.0;
};

// Line search along p from `start`, driven by the directional derivative phi'(a) ~ g(x_a) . p.
//
// The potential energy of a cutoff method jumps by ~0.01 kJ/mol whenever a pair crosses the cutoff
// (OpenMM's energy function, no switching), and close to a minimum of a solvated system thousands of
// pairs cross per step: energy differences become noise while the gradient stays accurate (forces
// at the cutoff are tiny). So a step is accepted on the strong-Wolfe curvature condition
// |phi'(a)| <= c2 |phi'(0)| (for a quadratic this alone implies sufficient decrease), with the
// energy only guarding against real uphill moves: f(a) <= f(0) + c1 a phi'(0) + noise. Brackets are
// refined by safeguarded secant steps on phi'. On success `out` holds the accepted point.
bool line_search(ManifoldObjective& objective, const Point& start, const Coords& p, double alpha_initial,
                 double alpha_max, double energy_noise, Point& out) {
  constexpr double c1 = 1e-4, c2 = 0.9;
  constexpr int kMaxEvaluations = 20;
  const double d0 = dot_all(start.g, p);
  if (!(d0 < 0.0)) return false;
  Point trial;
  trial.x.resize(start.x.size());
  double lo = 0.0, d_lo = d0;    // last step known to be downhill with acceptable energy
  double hi = -1.0, d_hi = 0.0;  // first step past the minimum (or uphill in energy); -1 = none yet
  double a = std::min(alpha_initial, alpha_max);
  for (int evaluation = 0; evaluation < kMaxEvaluations; ++evaluation) {
    for (std::size_t i = 0; i < start.x.size(); ++i) trial.x[i] = start.x[i] + p[i] * a;
    objective.retract(start.x, trial.x);
    trial.f = objective.evaluate(trial.x, trial.g);
    const double da = dot_all(trial.g, p);
    const bool energy_ok = std::isfinite(trial.f) && trial.f <= start.f + c1 * a * d0 + energy_noise;
    if (energy_ok && std::fabs(da) <= -c2 * d0) {
      out = std::move(trial);
      return true;
    }
    if (energy_ok && da < 0.0) {
      if (hi < 0.0 && a >= alpha_max) {  // still descending steeply at the step limit: take it
        out = std::move(trial);
        return true;
      }
      lo = a;
      d_lo = da;
    } else {
      hi = a;
      d_hi = energy_ok ? da : std::numeric_limits<double>::quiet_NaN();
    }
    if (hi < 0.0) {
      a = std::min(2.0 * a, alpha_max);
      continue;
    }
    const double width = hi - lo;
    if (width <= 1e-14 * hi) break;
    double next = 0.5 * (lo + hi);
    if (std::isfinite(d_hi) && d_hi > d_lo) next = lo - d_lo * width / (d_hi - d_lo);  // secant on phi'
    if (!(next >= lo + 0.1 * width && next <= hi - 0.1 * width)) next = 0.5 * (lo + hi);
    a = next;
  }
  return false;
}

struct LbfgsResult {
  bool converged = false;  // max per-atom (projected) force below the tolerance
  int iterations = 0;
};

double force_measure(const Coords& g, ForceCriterion criterion) {
  if (criterion == ForceCriterion::MaxAtom) return max_norm(g);
  return g.empty() ? 0.0 : std::sqrt(dot_all(g, g) / static_cast<double>(g.size()));
}

// L-BFGS from x (in/out, on the manifold) until the force measure falls below the tolerance, the
// iteration budget (negative = none) is spent, or two line searches in a row fail.
LbfgsResult lbfgs(ManifoldObjective& objective, Coords& x, double tolerance, ForceCriterion criterion, long budget) {
  // Correction pairs: 64 (a long memory pays off on the many soft modes of a solvated system;
  // ala2_water needs ~1000 iterations with 64 pairs, ~2400 with 8), fewer when that would take
  // more than ~256 MB.
  const std::size_t per_pair_bytes = 2 * x.size() * sizeof(Vec3d);
  const std::size_t kHistory = std::clamp<std::size_t>((std::size_t(256) << 20) / std::max<std::size_t>(per_pair_bytes, 1), 8, 64);
  constexpr double kMaxStepNm = 0.05;     // largest per-atom displacement of one line-search step
  constexpr double kFirstStepNm = 0.005;  // per-atom displacement of a steepest-descent step
  LbfgsResult result;
  Point current;
  current.x = x;
  current.f = objective.evaluate(current.x, current.g);
  // Energy changes below this are indistinguishable from cutoff-crossing jumps (see line_search).
  const double energy_noise = 1e-5 * std::fabs(current.f) + 1e-3;
  std::deque<Coords> s_hist, y_hist;
  std::deque<double> rho_hist;
  Coords p(x.size());
  std::vector<double> alpha_coef(kHistory);
  int failures = 0;
  while (true) {
    if (force_measure(current.g, criterion) < tolerance) {
      result.converged = true;
      break;
    }
    if (budget >= 0 && result.iterations >= budget) break;
    // Two-loop recursion: p = -H g, H from the stored pairs (initial scaling s.y / y.y).
    for (std::size_t i = 0; i < p.size(); ++i) p[i] = -current.g[i];
    const std::size_t m = s_hist.size();
    for (std::size_t k = m; k-- > 0;) {
      alpha_coef[k] = rho_hist[k] * dot_all(s_hist[k], p);
      for (std::size_t j = 0; j < p.size(); ++j) p[j] -= y_hist[k][j] * alpha_coef[k];
    }
    double alpha_initial = 1.0;
    if (m > 0) {
      const double gamma = dot_all(s_hist.back(), y_hist.back()) / dot_all(y_hist.back(), y_hist.back());
      for (auto& v : p) v *= gamma;
      for (std::size_t k = 0; k < m; ++k) {
        const double c = alpha_coef[k] - rho_hist[k] * dot_all(y_hist[k], p);
        for (std::size_t j = 0; j < p.size(); ++j) p[j] += s_hist[k][j] * c;
      }
      objective.project(current.x, p);
    } else {
      alpha_initial = kFirstStepNm / max_norm(p);
    }
    const double p_max = max_norm(p);
    Point next;
    if (!(p_max > 0.0) || !std::isfinite(p_max) ||
        !line_search(objective, current, p, alpha_initial, kMaxStepNm / p_max, energy_noise, next)) {
      s_hist.clear();
      y_hist.clear();
      rho_hist.clear();
      if (++failures >= 2) break;
      continue;
    }
    failures = 0;
    ++result.iterations;
    Coords s(x.size()), y(x.size());
    for (std::size_t i = 0; i < x.size(); ++i) {
      s[i] = next.x[i] - current.x[i];
      y[i] = next.g[i] - current.g[i];
    }
    const double sy = dot_all(s, y);
    if (sy > 1e-12 * std::sqrt(dot_all(s, s) * dot_all(y, y))) {
      if (s_hist.size() == kHistory) {
        s_hist.pop_front();
        y_hist.pop_front();
        rho_hist.pop_front();
      }
      s_hist.push_back(std::move(s));
      y_hist.push_back(std::move(y));
      rho_hist.push_back(1.0 / sy);
    }
    current = std::move(next);
  }
  x = current.x;
  return result;
}

}  // namespace

double max_norm(const std::vector<Vec3d>& vectors) {
  double worst = 0.0;
  for (const auto& v : vectors) worst = std::max(worst, dot(v, v));
  return std::sqrt(worst);
}

void project_out_constraint_forces(CpuConstraints& projector, const std::vector<Vec3d>& positions,
                                   std::vector<Vec3d>& forces) {
  if (projector.empty()) return;
  // With unit masses the velocity constraint is the Euclidean projection onto the tangent space.
  projector.apply_velocities(positions, forces, kGradientProjectionTolerance);
}

MinimizationResult minimize_on_manifold(const EnergyAndForces& energy_and_forces, const System& system,
                                        CpuConstraints& constraints, std::vector<Vec3d>& positions, double tolerance,
                                        int max_iterations, double constraint_tolerance, ForceCriterion criterion) {
  if (!(tolerance > 0.0)) throw InputError("minimize: tolerance must be positive (kJ/mol/nm)");
  if (max_iterations < 0) throw InputError("minimize: max_iterations must be 0 (until converged) or positive");
  if (static_cast<int>(positions.size()) != system.num_particles())
    throw RuntimeError("minimize: positions for " + std::to_string(positions.size()) + " particles, system has " +
                       std::to_string(system.num_particles()));
  MinimizationResult result{};
  std::vector<Vec3d> forces;
  result.initial_energy = energy_and_forces(positions, forces);

  const bool constrained = !constraints.empty();
  CpuConstraints projector(system, std::vector<double>(static_cast<std::size_t>(system.num_particles()), 1.0));
  if (constrained) {
    // Onto the constraint surface first, as OpenMM's minimiser does (with the system's masses).
    const std::vector<Vec3d> reference = positions;
    constraints.apply_positions(reference, positions, std::min(constraint_tolerance, kManifoldTolerance));
  }
  ManifoldObjective objective(energy_and_forces, constrained ? &projector : nullptr);
  const long budget = max_iterations > 0 ? max_iterations : -1;
  const LbfgsResult r = lbfgs(objective, positions, tolerance, criterion, budget);

  result.final_energy = energy_and_forces(positions, forces);
  project_out_constraint_forces(projector, positions, forces);
  result.max_force_kj_per_mol_nm = max_norm(forces);
  result.iterations = r.iterations;
  result.converged = force_measure(forces, criterion) < tolerance &&
                     (!constrained || constraints.max_relative_deviation(positions) <= constraint_tolerance);
  return result;
}

MinimizationResult cpu_minimize(CpuForceEvaluator& evaluator, const System& system, CpuConstraints& constraints,
                                std::vector<Vec3d>& positions, double tolerance, int max_iterations,
                                double constraint_tolerance, ForceCriterion criterion) {
  const EnergyAndForces energy_and_forces = [&evaluator](const std::vector<Vec3d>& x, std::vector<Vec3d>& f) {
    return evaluator.compute(x, &f).total;
  };
  return minimize_on_manifold(energy_and_forces, system, constraints, positions, tolerance, max_iterations,
                              constraint_tolerance, criterion);
}

}  // namespace mdsim
