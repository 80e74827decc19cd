#include "kernels/cpu/cpu_minimizer.hpp"

#include <algorithm>
#include <cmath>
#include <deque>
#include <string>
#include <utility>

#include "common/errors.hpp"
#include "platform/virtual_sites.hpp"

namespace mdsim {

namespace {

using Coords = std::vector<Vec3d>;
using Vector = MinimizerBackend::Vector;

double dot_all(const Coords& a, const Coords& b) {
  double s = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i) s += dot(a[i], b[i]);
  return s;
}

// ---------------------------------------------------------------------------------------------
// The CPU backend: host arrays, the given source of energies and forces, CpuConstraints.

class CpuMinimizerBackend final : public MinimizerBackend {
 public:
  // constraints: the system's masses (start positions, final check); projector: unit masses (the
  // retraction and the tangent projections), null when the system has no constraints.
  CpuMinimizerBackend(const EnergyAndForces& energy_and_forces, const System& system, CpuConstraints& constraints,
                      CpuConstraints* projector, std::size_t particles)
      : energy_and_forces_(energy_and_forces), system_(system), constraints_(constraints), projector_(projector),
        n_(particles) {}

  Coords& operator[](Vector v) { return vectors_[static_cast<std::size_t>(v)]; }

  std::size_t particles() const override { return n_; }
  Vector new_vector() override {
    vectors_.emplace_back(n_);
    return static_cast<Vector>(vectors_.size() - 1);
  }
  void reserve_coefficients(std::size_t slots) override { coefficients_.assign(slots, 0.0); }

  void copy(Vector to, Vector from) override { (*this)[to] = (*this)[from]; }
  void negate(Vector to, Vector from) override {
    Coords& t = (*this)[to];
    const Coords& f = (*this)[from];
    for (std::size_t i = 0; i < n_; ++i) t[i] = -f[i];
  }
  void scale(Vector v, double a) override {
    for (auto& e : (*this)[v]) e *= a;
  }
  void add_scaled(Vector to, Vector x, Vector p, double a) override {
    Coords& t = (*this)[to];
    const Coords& xs = (*this)[x];
    const Coords& ps = (*this)[p];
    for (std::size_t i = 0; i < n_; ++i) t[i] = xs[i] + ps[i] * a;
  }
  void subtract(Vector to, Vector a, Vector b) override {
    Coords& t = (*this)[to];
    const Coords& as = (*this)[a];
    const Coords& bs = (*this)[b];
    for (std::size_t i = 0; i < n_; ++i) t[i] = as[i] - bs[i];
  }
  void add_multiple(Vector v, Vector x, std::size_t slot) override {
    Coords& vs = (*this)[v];
    const Coords& xs = (*this)[x];
    for (std::size_t j = 0; j < n_; ++j) vs[j] += xs[j] * coefficients_[slot];
  }
  void subtract_multiple(Vector v, Vector x, std::size_t slot) override {
    Coords& vs = (*this)[v];
    const Coords& xs = (*this)[x];
    for (std::size_t j = 0; j < n_; ++j) vs[j] -= xs[j] * coefficients_[slot];
  }
  void set_coefficient(std::size_t slot, double factor, Vector a, Vector b) override {
    coefficients_[slot] = factor * dot_all((*this)[a], (*this)[b]);
  }
  void reduce_coefficient(std::size_t slot, double factor, Vector a, Vector b) override {
    coefficients_[slot] = coefficients_[slot] - factor * dot_all((*this)[a], (*this)[b]);
  }
  double dot(Vector a, Vector b) override { return dot_all((*this)[a], (*this)[b]); }
  double max_norm(Vector v) override { return mdsim::max_norm((*this)[v]); }

  bool constrained() const override { return projector_ != nullptr; }
  // Virtual sites are re-placed at every point evaluated and have gradient 0: the minimiser never moves them.
  double energy(Vector x) override {
    place_virtual_sites(system_, (*this)[x]);
    return energy_and_forces_((*this)[x], scratch_forces_);
  }
  double evaluate(Vector x, Vector gradient) override {
    Coords& g = (*this)[gradient];
    place_virtual_sites(system_, (*this)[x]);
    const double e = energy_and_forces_((*this)[x], g);
    zero_virtual_site_rows(system_, g);
    if (projector_) project_out_constraint_forces(*projector_, (*this)[x], g);
    for (auto& v : g) v = -v;
    return e;
  }
  void retract(Vector reference, Vector x) override {
    if (projector_) projector_->apply_positions((*this)[reference], (*this)[x], kMinimizerManifoldTolerance);
  }
  void project(Vector x, Vector direction) override {
    if (projector_) projector_->apply_velocities((*this)[x], (*this)[direction], kMinimizerProjectionTolerance);
  }
  void constrain(Vector x, double tolerance) override {
    const Coords reference = (*this)[x];
    constraints_.apply_positions(reference, (*this)[x], tolerance);
  }
  double max_relative_deviation(Vector x) override { return constraints_.max_relative_deviation((*this)[x]); }

 private:
  const EnergyAndForces& energy_and_forces_;
  const System& system_;
  CpuConstraints& constraints_;
  CpuConstraints* projector_;
  std::size_t n_;
  std::deque<Coords> vectors_;  // handle = index; a deque keeps references valid as it grows
  std::vector<double> coefficients_;
  Coords scratch_forces_;
};

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
  projector.apply_velocities(positions, forces, kMinimizerProjectionTolerance);
}

MinimizationResult minimize_on_manifold(const EnergyAndForces& energy_and_forces, const System& system,
                                        CpuConstraints& constraints, std::vector<Vec3d>& positions, double tolerance,
                                        int max_iterations, double constraint_tolerance, ForceCriterion criterion) {
  check_minimizer_arguments(tolerance, max_iterations);
  if (static_cast<int>(positions.size()) != system.num_particles())
    throw RuntimeError("minimize: positions for " + std::to_string(positions.size()) + " particles, system has " +
                       std::to_string(system.num_particles()));
  CpuConstraints projector(system, std::vector<double>(static_cast<std::size_t>(system.num_particles()), 1.0));
  CpuMinimizerBackend backend(energy_and_forces, system, constraints, constraints.empty() ? nullptr : &projector,
                              positions.size());
  const Vector x = backend.new_vector();
  backend[x] = positions;
  const MinimizationResult result =
      minimize_with_backend(backend, x, tolerance, max_iterations, constraint_tolerance, criterion);
  const std::vector<Vec3d>& final_positions = backend[x];
  std::copy(final_positions.begin(), final_positions.end(), positions.begin());  // in place: the caller's storage stays
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
