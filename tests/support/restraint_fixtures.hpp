// A restrained system with an analytic minimum, for the CPU (tests/kernels/cpu/test_cpu_restraints.cpp) and CUDA
// (tests/kernels/cuda/test_cuda_restraints.cpp) minimisation tests: two uncharged atoms with a harmonic bond
// (r0 = 0.15 nm, kb), each restrained (k) to a reference; the references lie 0.2 nm apart by minimum image but
// on opposite faces of a 3 nm box, and the atoms start at the image of atom 0's reference that sits beside
// atom 1 (bonds are not imaged, as in OpenMM). By symmetry the minimum is a bond length r with
// kb (r − r0) = k (0.2 − r) / 2, centred on x = 0.
// Also restraint_force_fd, the finite-difference check of a restraint force both CPU restraint tests make.
#pragma once

#include <cstddef>
#include <vector>

#include "kernels/cpu/cpu_forces.hpp"
#include "platform/context.hpp"
#include "model/system.hpp"

namespace mdsim_test {

// -dE/dx of the evaluator's restraint term along axis a of atom i, by a central difference of step h (nm); x is
// left as it was.
inline double restraint_force_fd(mdsim::CpuForceEvaluator& evaluator, std::vector<mdsim::Vec3d>& x, std::size_t i,
                                 int a, double h) {
  const double keep = x[i][a];
  x[i][a] = keep + h;
  const double plus = evaluator.compute(x, nullptr, mdsim::kTermRestraint).restraint;
  x[i][a] = keep - h;
  const double minus = evaluator.compute(x, nullptr, mdsim::kTermRestraint).restraint;
  x[i][a] = keep;
  return -(plus - minus) / (2.0 * h);
}

struct RestrainedPair {
  static constexpr double kb = 2.0e4, k = 5.0e3, r0 = 0.15, L = 3.0;
  mdsim::System system;
  mdsim::PositionRestraints restraints;
  std::vector<mdsim::Vec3d> start{mdsim::Vec3d(-0.13, 1.02, 0.97), mdsim::Vec3d(0.05, 0.99, 1.01)};
  double r_min = (kb * r0 + 0.1 * k) / (kb + 0.5 * k);                       // bond length at the minimum
  double restraint_energy = k * (0.1 - 0.5 * r_min) * (0.1 - 0.5 * r_min);  // kJ/mol at the minimum

  RestrainedPair() {
    using mdsim::Vec3d;
    system.mass_amu = {12.0, 12.0};
    system.charge_e = {0.0, 0.0};
    system.sigma_nm = {0.3, 0.3};
    system.epsilon_kj_per_mol = {0.0, 0.0};
    system.bonds = {{0, 1, r0, kb}};
    system.exceptions = {{0, 1, 0.0, 0.3, 0.0}};
    system.nonbonded.method = mdsim::NonbondedMethod::CutoffPeriodic;
    system.nonbonded.cutoff_nm = 1.0;
    system.box = mdsim::Boxd{Vec3d(L, 0, 0), Vec3d(0, L, 0), Vec3d(0, 0, L)};
    restraints.atoms = {0, 1};
    restraints.reference_nm = {Vec3d(L - 0.1, 1.0, 1.0), Vec3d(0.1, 1.0, 1.0)};
    restraints.set_isotropic_k(k);
  }
};

}  // namespace mdsim_test
