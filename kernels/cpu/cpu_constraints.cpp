#include "kernels/cpu/cpu_constraints.hpp"

#include <cmath>

#include "physics/ccma.hpp"
#include "physics/settle.hpp"

namespace mdsim {

CpuConstraints::CpuConstraints(const System& system, const std::vector<double>& masses_amu)
    : plan_(system, masses_amu) {
  const std::size_t nc = plan_.ccma_constraints().size();
  r_ref_.resize(nc);
  r_ref2_.resize(nc);
  delta_.resize(nc);
  delta_tmp_.resize(nc);
}

template <typename Linearise>
void CpuConstraints::run_ccma(const std::vector<Vec3d>& reference, std::vector<Vec3d>& x, Linearise&& linearise) {
  const std::vector<ConstraintPlan::Ccma>& ccma = plan_.ccma_constraints();
  const std::vector<double>& inverse_mass = plan_.inverse_masses();
  last_iterations_ = 0;
  last_converged_ = true;
  const std::size_t nc = ccma.size();
  if (nc == 0) return;
  for (std::size_t c = 0; c < nc; ++c) {
    r_ref_[c] = reference[static_cast<std::size_t>(ccma[c].a)] - reference[static_cast<std::size_t>(ccma[c].b)];
    r_ref2_[c] = dot(r_ref_[c], r_ref_[c]);
  }
  last_converged_ = false;
  for (int iteration = 0; iteration < ConstraintPlan::kMaxIterations; ++iteration) {
    std::size_t converged = 0;
    for (std::size_t c = 0; c < nc; ++c)
      if (linearise(c)) ++converged;
    if (converged == nc) {
      last_converged_ = true;
      break;
    }
    ++last_iterations_;
    for (std::size_t c = 0; c < nc; ++c) {
      double sum = 0.0;
      for (const auto& [col, value] : plan_.inverse_coupling()[c]) sum += value * delta_[static_cast<std::size_t>(col)];
      delta_tmp_[c] = sum;
    }
    for (std::size_t c = 0; c < nc; ++c) {
      const ConstraintPlan::Ccma& k = ccma[c];
      const Vec3d dx = r_ref_[c] * delta_tmp_[c];
      x[static_cast<std::size_t>(k.a)] += dx * inverse_mass[static_cast<std::size_t>(k.a)];
      x[static_cast<std::size_t>(k.b)] -= dx * inverse_mass[static_cast<std::size_t>(k.b)];
    }
  }
}

void CpuConstraints::apply_positions(const std::vector<Vec3d>& reference, std::vector<Vec3d>& positions,
                                     double tolerance) {
  const std::vector<double>& inverse_mass = plan_.inverse_masses();
  for (const ConstraintPlan::Settle& s : plan_.settle_waters()) {
    const double mo = 1.0 / inverse_mass[static_cast<std::size_t>(s.o)];
    const double mh = 1.0 / inverse_mass[static_cast<std::size_t>(s.h1)];
    settle_positions(reference[static_cast<std::size_t>(s.o)], reference[static_cast<std::size_t>(s.h1)],
                     reference[static_cast<std::size_t>(s.h2)], positions[static_cast<std::size_t>(s.o)],
                     positions[static_cast<std::size_t>(s.h1)], positions[static_cast<std::size_t>(s.h2)], mo, mh, s.oh,
                     s.hh);
  }
  const CcmaBounds bounds = ccma_bounds(tolerance);
  run_ccma(reference, positions, [&](std::size_t c) {
    const ConstraintPlan::Ccma& k = plan_.ccma_constraints()[c];
    const Vec3d rp = positions[static_cast<std::size_t>(k.a)] - positions[static_cast<std::size_t>(k.b)];
    bool converged = false;
    delta_[c] = ccma_position_delta(rp, r_ref_[c], k.distance, k.reduced_mass, bounds, converged);
    return converged;
  });
}

void CpuConstraints::apply_velocities(const std::vector<Vec3d>& positions, std::vector<Vec3d>& velocities,
                                      double tolerance) {
  const std::vector<double>& inverse_mass = plan_.inverse_masses();
  for (const ConstraintPlan::Settle& s : plan_.settle_waters()) {
    settle_velocities(positions[static_cast<std::size_t>(s.o)], positions[static_cast<std::size_t>(s.h1)],
                      positions[static_cast<std::size_t>(s.h2)], velocities[static_cast<std::size_t>(s.o)],
                      velocities[static_cast<std::size_t>(s.h1)], velocities[static_cast<std::size_t>(s.h2)],
                      inverse_mass[static_cast<std::size_t>(s.o)], inverse_mass[static_cast<std::size_t>(s.h1)],
                      inverse_mass[static_cast<std::size_t>(s.h2)]);
  }
  run_ccma(positions, velocities, [&](std::size_t c) {
    const ConstraintPlan::Ccma& k = plan_.ccma_constraints()[c];
    const Vec3d vr = velocities[static_cast<std::size_t>(k.a)] - velocities[static_cast<std::size_t>(k.b)];
    bool converged = false;
    delta_[c] = ccma_velocity_delta(vr, r_ref_[c], r_ref2_[c], k.reduced_mass, tolerance, converged);
    return converged;
  });
}

}  // namespace mdsim
