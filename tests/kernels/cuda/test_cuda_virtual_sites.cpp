// Virtual sites on the CUDA platform against the CPU reference, on alanine dipeptide in TIP4P-Ew water (749
// ThreeParticleAverageSites; tests/data/make_system_xml_tip4pew.py): energies by term within 1e-5 relative and forces
// within 1e-5 relative RMS in both precision modes (getState's convention on both: a site's row keeps the force on the
// site), the sites placed by the evaluation itself; a few CUDA Verlet steps keep the sites placed and the energy, and
// agree with the CPU's.
#include <cmath>
#include <string>
#include <vector>

#include "kernels/cpu/cpu_context.hpp"
#include "kernels/cpu/cpu_forces.hpp"
#include "kernels/cuda/cuda_context.hpp"
#include "kernels/cuda/cuda_forces.hpp"
#include "platform/virtual_sites.hpp"
#include "support/catch.hpp"
#include "support/tip4pew_case.hpp"

using namespace mdsim;

namespace {

void check_term(const char* name, double cuda, double cpu) {
  INFO(name << ": CUDA " << cuda << ", CPU " << cpu);
  if (std::fabs(cpu) < 1.0)
    CHECK(std::fabs(cuda - cpu) <= 1e-5);
  else
    CHECK(std::fabs(cuda - cpu) <= 1e-5 * std::fabs(cpu));
}

double max_site_misplacement(const System& s, const std::vector<Vec3d>& x) {
  std::vector<Vec3d> placed = x;
  place_virtual_sites(s, placed);
  return mdsim_test::max_abs_difference(placed, x);
}

DynamicsSettings verlet() {
  DynamicsSettings settings;
  settings.integrator.type = IntegratorType::Verlet;
  settings.integrator.timestep_ps = 0.0001;  // flexible O-H stretches: Verlet at 0.5 fs drifts ~0.5% of the kinetic energy in 50 steps
  settings.remove_cm_motion = false;
  return settings;
}

}  // namespace

TEST_CASE("TIP4P-Ew with virtual sites: CUDA energies and forces equal the CPU's") {
  const System s = mdsim_test::tip4pew_system();
  const std::vector<Vec3d> x = mdsim_test::with_sites_displaced(s, mdsim_test::tip4pew_positions());
  std::vector<Vec3d> cpu_forces;
  const EnergyTerms cpu = cpu_compute(s, x, &cpu_forces);
  for (const bool double_precision : {false, true}) {
    INFO((double_precision ? "double" : "mixed") << " precision");
    CudaOptions options;
    options.double_precision = double_precision;
    CudaForceEvaluator evaluator(s, options);
    std::vector<Vec3d> cuda_forces;
    const EnergyTerms cuda = evaluator.compute(x, &cuda_forces);
    check_term("bond", cuda.bond, cpu.bond);
    check_term("angle", cuda.angle, cpu.angle);
    check_term("torsion", cuda.torsion, cpu.torsion);
    check_term("nonbonded_direct", cuda.nonbonded_direct, cpu.nonbonded_direct);
    check_term("nonbonded_reciprocal", cuda.nonbonded_reciprocal, cpu.nonbonded_reciprocal);
    check_term("total", cuda.total, cpu.total);
    const double rms = mdsim_test::relative_rms_difference(cuda_forces, cpu_forces);
    INFO("forces: relative RMS difference " << rms);
    CHECK(rms <= 1e-5);
    const std::size_t site = static_cast<std::size_t>(s.virtual_sites.front().particle);
    CHECK(norm(cuda_forces[site] - cpu_forces[site]) <= 1e-4 * norm(cpu_forces[site]));
    CHECK(max_site_misplacement(s, evaluator.positions()) <= 1e-12);  // placed in the device positions
  }
}

TEST_CASE("TIP4P-Ew CUDA Verlet steps keep the sites placed and agree with the CPU's") {
  const System s = mdsim_test::tip4pew_system();
  const std::vector<Vec3d> x0 = mdsim_test::tip4pew_positions();
  CudaOptions options;
  options.double_precision = true;
  auto gpu = make_cuda_context(s, verlet(), options);
  auto cpu = make_cpu_context(s, verlet());
  for (auto* ctx : {gpu.get(), cpu.get()}) {
    ctx->set_positions(x0);
    ctx->set_velocities_to_temperature(300.0, 11);
  }
  const StateRequest all{true, true, true, true};
  const SimulationState g0 = gpu->state(all);
  CHECK(g0.degrees_of_freedom == 3 * (3018 - 749));
  const double e0 = g0.potential.total + g0.kinetic_kj_per_mol;
  for (int block = 0; block < 4; ++block) {
    gpu->step(10);
    cpu->step(10);
    const SimulationState g = gpu->state(all), c = cpu->state(all);
    CHECK(max_site_misplacement(s, g.positions_nm) <= 1e-12);
    for (const VirtualSite& v : s.virtual_sites) CHECK(norm(g.velocities_nm_per_ps[static_cast<std::size_t>(v.particle)]) == 0.0);
    const double drift = std::fabs(g.potential.total + g.kinetic_kj_per_mol - e0);
    INFO("energy change " << drift << " kJ/mol; kinetic " << g0.kinetic_kj_per_mol);
    CHECK(drift <= 1e-3 * g0.kinetic_kj_per_mol);  // as the CPU test at 0.1 fs
    const double dx = mdsim_test::max_abs_difference(g.positions_nm, c.positions_nm);
    INFO("largest CUDA-CPU position difference " << dx << " nm");
    CHECK(dx <= 1e-6);
  }
}
