#include "platform/minimizer.hpp"

#include <algorithm>
#include <cmath>
#include <deque>
#include <limits>
#include <string>
#include <utility>

#include "common/errors.hpp"
#include "common/stop_request.hpp"

namespace mdsim {

namespace {

using Vector = MinimizerBackend::Vector;

// ---------------------------------------------------------------------------------------------
// The driver (any backend).

// Potential energy on the constraint manifold: positions are kept on it by `retract`, gradients are
// projected onto its tangent space (by the backend's evaluate).
class ManifoldObjective {
 public:
  explicit ManifoldObjective(MinimizerBackend& backend) : backend_(backend), constrained_(backend.constrained()) {}

  // Energy (kJ/mol) at x, gradient (= minus the projected force) overwritten.
  double evaluate(Vector x, Vector gradient) {
    const double e = backend_.evaluate(x, gradient);
    return std::isfinite(e) ? e : std::numeric_limits<double>::infinity();
  }

  // Moves x (= reference + step) back onto the constraint surface along the constraint vectors of
  // reference (a retraction).
  void retract(Vector reference, Vector x) {
    if (constrained_) backend_.retract(reference, x);
  }

  // Tangent component of a direction at x.
  void project(Vector x, Vector direction) {
    if (constrained_) backend_.project(x, direction);
  }

 private:
  MinimizerBackend& backend_;
  bool constrained_;
};

struct Point {
  Vector x = -1, g = -1;
  double f = 0.0;
};

void swap(Point& a, Point& b) {
  std::swap(a.x, b.x);
  std::swap(a.g, b.g);
  std::swap(a.f, b.f);
}

// Line search along p from `start`, driven by the directional derivative phi'(a) ~ g(x_a) . p.
//
// The potential energy of a cutoff method jumps by ~0.01 kJ/mol whenever a pair crosses the cutoff
// (OpenMM's energy function, no switching), and close to a minimum of a solvated system thousands of
// pairs cross per step: energy differences become noise while the gradient stays accurate (forces
// at the cutoff are tiny). So a step is accepted on the strong-Wolfe curvature condition
// |phi'(a)| <= c2 |phi'(0)| (for a quadratic this alone implies sufficient decrease), with the
// energy only guarding against real uphill moves: f(a) <= f(0) + c1 a phi'(0) + noise. Brackets are
// refined by safeguarded secant steps on phi'. On success `trial` holds the accepted point (its
// vectors are overwritten in any case). Host values per trial point: its energy and g . p.
bool line_search(MinimizerBackend& backend, ManifoldObjective& objective, const Point& start, Vector p,
                 double alpha_initial, double alpha_max, double energy_noise, Point& trial) {
  constexpr double c1 = 1e-4, c2 = 0.9;
  constexpr int kMaxEvaluations = 20;
  const double d0 = backend.dot(start.g, p);
  if (!(d0 < 0.0)) return false;
  double lo = 0.0, d_lo = d0;    // last step known to be downhill with acceptable energy
  double hi = -1.0, d_hi = 0.0;  // first step past the minimum (or uphill in energy); -1 = none yet
  double a = std::min(alpha_initial, alpha_max);
  for (int evaluation = 0; evaluation < kMaxEvaluations; ++evaluation) {
    backend.add_scaled(trial.x, start.x, p, a);
    objective.retract(start.x, trial.x);
    // The retraction can fail far from the constraint surface (SETTLE of a strongly distorted water gives
    // NaN): such a point counts as infinitely uphill, so the step shrinks, instead of being evaluated.
    double da = std::numeric_limits<double>::quiet_NaN();
    if (std::isfinite(backend.dot(trial.x, trial.x))) {
      trial.f = objective.evaluate(trial.x, trial.g);
      da = backend.dot(trial.g, p);
    } else {
      trial.f = std::numeric_limits<double>::infinity();
    }
    const bool energy_ok = std::isfinite(trial.f) && trial.f <= start.f + c1 * a * d0 + energy_noise;
    if (energy_ok && std::fabs(da) <= -c2 * d0) return true;
    if (energy_ok && da < 0.0) {
      if (hi < 0.0 && a >= alpha_max) return true;  // still descending steeply at the step limit: take it
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
  bool converged = false;    // max per-atom (projected) force below the tolerance
  bool interrupted = false;  // a stop request (common/stop_request) ended it
  int iterations = 0;
};

double force_measure(MinimizerBackend& backend, Vector g, ForceCriterion criterion) {
  if (criterion == ForceCriterion::MaxAtom) return backend.max_norm(g);
  const std::size_t n = backend.particles();
  return n == 0 ? 0.0 : std::sqrt(backend.dot(g, g) / static_cast<double>(n));
}

// L-BFGS from x (in/out, on the manifold) until the force measure falls below the tolerance, the
// iteration budget (negative = none) is spent, or two line searches in a row fail.
LbfgsResult lbfgs(MinimizerBackend& backend, Vector x, double tolerance, ForceCriterion criterion, long budget) {
  // Correction pairs: 64 (a long memory pays off on the many soft modes of a solvated system),
  // fewer when that would take more than ~256 MB.
  const std::size_t per_pair_bytes = 2 * backend.particles() * sizeof(Vec3d);
  const std::size_t kHistory = std::clamp<std::size_t>((std::size_t(256) << 20) / std::max<std::size_t>(per_pair_bytes, 1), 8, 64);
  constexpr double kMaxStepNm = 0.05;     // largest per-atom displacement of one line-search step
  constexpr double kFirstStepNm = 0.005;  // per-atom displacement of a steepest-descent step
  ManifoldObjective objective(backend);
  LbfgsResult result;
  Point current{backend.new_vector(), backend.new_vector()};
  backend.copy(current.x, x);
  current.f = objective.evaluate(current.x, current.g);
  // Energy changes below this are indistinguishable from cutoff-crossing jumps (see line_search).
  const double energy_noise = 1e-5 * std::fabs(current.f) + 1e-3;
  // Correction pairs, oldest first; rho = 1 / s.y. The newest pair's s.y and y.y give the initial
  // Hessian scaling. Vectors of dropped pairs are reused (`spare`).
  std::deque<Vector> s_hist, y_hist;
  std::deque<double> rho_hist;
  double newest_sy = 0.0, newest_yy = 0.0;
  std::vector<Vector> spare;
  const auto take = [&] {
    if (spare.empty()) return backend.new_vector();
    const Vector v = spare.back();
    spare.pop_back();
    return v;
  };
  const Vector p = backend.new_vector();
  Point trial{backend.new_vector(), backend.new_vector()};
  backend.reserve_coefficients(kHistory);  // alpha_k of the two-loop recursion, slot k
  int failures = 0;
  while (true) {
    if (force_measure(backend, current.g, criterion) < tolerance) {
      result.converged = true;
      break;
    }
    if (budget >= 0 && result.iterations >= budget) break;
    if (stop_requested().load()) {  // SIGINT/SIGTERM: end at the last accepted iterate (on the manifold)
      result.interrupted = true;
      break;
    }
    // Two-loop recursion: p = -H g, H from the stored pairs (initial scaling s.y / y.y).
    backend.negate(p, current.g);
    const std::size_t m = s_hist.size();
    for (std::size_t k = m; k-- > 0;) {
      backend.set_coefficient(k, rho_hist[k], s_hist[k], p);  // alpha_k = rho_k s_k . p
      backend.subtract_multiple(p, y_hist[k], k);            // p -= alpha_k y_k
    }
    double alpha_initial = 1.0;
    if (m > 0) {
      const double gamma = newest_sy / newest_yy;
      backend.scale(p, gamma);
      for (std::size_t k = 0; k < m; ++k) {
        backend.reduce_coefficient(k, rho_hist[k], y_hist[k], p);  // alpha_k - rho_k y_k . p
        backend.add_multiple(p, s_hist[k], k);
      }
      objective.project(current.x, p);
    } else {
      alpha_initial = kFirstStepNm / backend.max_norm(p);
    }
    const double p_max = backend.max_norm(p);
    if (!(p_max > 0.0) || !std::isfinite(p_max) ||
        !line_search(backend, objective, current, p, alpha_initial, kMaxStepNm / p_max, energy_noise, trial)) {
      spare.insert(spare.end(), s_hist.begin(), s_hist.end());
      spare.insert(spare.end(), y_hist.begin(), y_hist.end());
      s_hist.clear();
      y_hist.clear();
      rho_hist.clear();
      if (++failures >= 2) break;
      continue;
    }
    failures = 0;
    ++result.iterations;
    const Vector s = take(), y = take();
    backend.subtract(s, trial.x, current.x);
    backend.subtract(y, trial.g, current.g);
    const double sy = backend.dot(s, y);
    const double ss = backend.dot(s, s), yy = backend.dot(y, y);
    if (sy > 1e-12 * std::sqrt(ss * yy)) {
      if (s_hist.size() == kHistory) {
        spare.push_back(s_hist.front());
        spare.push_back(y_hist.front());
        s_hist.pop_front();
        y_hist.pop_front();
        rho_hist.pop_front();
      }
      s_hist.push_back(s);
      y_hist.push_back(y);
      rho_hist.push_back(1.0 / sy);
      newest_sy = sy;
      newest_yy = yy;
    } else {
      spare.push_back(s);
      spare.push_back(y);
    }
    swap(current, trial);
  }
  backend.copy(x, current.x);
  return result;
}

}  // namespace

void check_minimizer_arguments(double tolerance, int max_iterations) {
  if (!(tolerance > 0.0)) throw InputError("minimize: tolerance must be positive (kJ/mol/nm)");
  if (max_iterations < 0) throw InputError("minimize: max_iterations must be 0 (until converged) or positive");
}

MinimizationResult minimize_with_backend(MinimizerBackend& backend, MinimizerBackend::Vector positions,
                                         double tolerance, int max_iterations, double constraint_tolerance,
                                         ForceCriterion criterion) {
  check_minimizer_arguments(tolerance, max_iterations);
  MinimizationResult result{};
  result.initial_energy = backend.energy(positions);
  const bool constrained = backend.constrained();
  // Onto the constraint surface first, as OpenMM's minimiser does (with the system's masses).
  if (constrained) backend.constrain(positions, std::min(constraint_tolerance, kMinimizerManifoldTolerance));
  const long budget = max_iterations > 0 ? max_iterations : -1;
  const LbfgsResult r = lbfgs(backend, positions, tolerance, criterion, budget);

  const Vector gradient = backend.new_vector();
  result.final_energy = backend.evaluate(positions, gradient);  // minus the projected forces
  result.max_force_kj_per_mol_nm = backend.max_norm(gradient);
  result.iterations = r.iterations;
  result.interrupted = r.interrupted;
  result.converged = force_measure(backend, gradient, criterion) < tolerance &&
                     (!constrained || backend.max_relative_deviation(positions) <= constraint_tolerance);
  return result;
}

}  // namespace mdsim
