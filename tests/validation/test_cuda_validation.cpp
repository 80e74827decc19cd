// Validation on the CUDA platform (mixed precision) against OpenMM 7.7's reference runs of ala2_water
// (shared/reference/ala2_water.dynamics.json: OpenMM CPU platform, HBonds + rigid water, PME 1.0 nm,
// no centre-of-mass motion remover), long enough on the GPU for tight statistics:
//  - NVE, Verlet 2 fs, constraint tolerance 1e-6, 100 ps: the drift is no larger than OpenMM's
//    (|drift| <= |OpenMM's| + 3 standard errors of ours) and the total-energy fluctuation is within a
//    factor 2 of OpenMM's;
//  - LangevinMiddle 300 K, 1/ps, 2 fs, 200 ps after 10 ps of equilibration: the mean potential
//    energy is within 3 combined standard errors of OpenMM's (OpenMM's standard error from its
//    standard deviation, its 200 samples and the statistical inefficiency measured here), the mean
//    temperature within 1% of 300 K.
// Both start from tests/data/dyn_ala2_water_equilibrated.h5 (see test_nve_drift.cpp). Figures are
// printed with the prefix [figure].
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "engine/model.hpp"
#include "io/config.hpp"
#include "io/hdf5_arrays.hpp"
#include "kernels/cuda/cuda_context.hpp"
#include "physics/integrator_steps.hpp"
#include "platform/context.hpp"
#include "support/catch.hpp"
#include "support/dynamics_settings.hpp"
#include "support/energy_series.hpp"
#include "support/statistics.hpp"

using namespace mdsim;
using mdsim_test::json_number;

namespace {

const std::string kDir = MDSIM_TEST_DATA_DIR;

const Model& water_model() {  // as OpenMM's reference run: no COM motion remover
  static const Model m = build_model(parse_config("system:\n  pdb: " + kDir + "/systems/ala2_water.pdb\n"
                                                  "  constraints: hbonds\n  rigid_water: true\n  cutoff: 1.0 nm\n"
                                                  "  remove_cm_motion: false\n",
                                                  "ala2_water.yaml", kDir));
  return m;
}

std::unique_ptr<Context> equilibrated_context(const DynamicsSettings& settings) {
  const Model& m = water_model();
  const std::string file = std::string(MDSIM_SOURCE_DIR) + "/tests/data/dyn_ala2_water_equilibrated.h5";
  auto ctx = make_cuda_context(m.system, settings, CudaOptions{});
  ctx->set_positions(read_vec3_dataset_h5(file, "positions_nm"));
  ctx->set_velocities(read_vec3_dataset_h5(file, "velocities_nm_per_ps"));
  ctx->apply_constraints(1e-10);  // the file holds float32 values
  return ctx;
}

}  // namespace

TEST_CASE("CUDA NVE drift of ala2_water over 100 ps is no larger than OpenMM's") {
  const std::string json = mdsim_test::read_text(kDir + "/reference/ala2_water.dynamics.json");
  const double openmm_drift = json_number(json, "nve_verlet_2fs", "drift_kj_per_mol_per_ns");
  const double openmm_std = json_number(json, "nve_verlet_2fs", "std_total_energy");

  DynamicsSettings nve;
  nve.integrator.type = IntegratorType::Verlet;
  nve.integrator.timestep_ps = 0.002;
  nve.integrator.constraint_tolerance = 1e-6;
  nve.remove_cm_motion = false;
  auto ctx = equilibrated_context(nve);
  const mdsim_test::EnergySeries run = mdsim_test::sample_total_energy(*ctx, 50000, 25, 20);  // 100 ps
  const double drift = run.drift_kj_per_mol_ns, drift_error = run.drift_error;
  const int dof = run.degrees_of_freedom;
  const double kt_dof = kBoltzmannKjPerMolK * 300.0 * dof;
  std::printf("[figure] CUDA mixed NVE ala2_water Verlet 2 fs, 100 ps: drift %.1f +- %.1f kJ/mol/ns (%.5f +- %.5f "
              "kT/ns/dof), total-energy std %.3f kJ/mol, mean T %.1f K; OpenMM CPU 20 ps: %.1f kJ/mol/ns (%.5f "
              "kT/ns/dof), std %.3f\n",
              drift, drift_error, drift / kt_dof, drift_error / kt_dof, run.std_total_kj_per_mol, run.mean_temperature_k,
              openmm_drift, openmm_drift / kt_dof, openmm_std);
  CHECK(dof == 4548);
  CHECK(std::fabs(drift) <= std::fabs(openmm_drift) + 3.0 * drift_error);
  CHECK(run.std_total_kj_per_mol < 2.0 * openmm_std);
  CHECK(run.std_total_kj_per_mol > 0.5 * openmm_std);
}

TEST_CASE("CUDA LangevinMiddle mean potential energy of ala2_water matches OpenMM's") {
  const std::string json = mdsim_test::read_text(kDir + "/reference/ala2_water.dynamics.json");
  const double openmm_mean = json_number(json, "langevin_middle", "mean_pe");
  const double openmm_std = json_number(json, "langevin_middle", "std_pe");
  const double openmm_prod_ps = json_number(json, "langevin_middle", "prod_ps");
  const double openmm_every = json_number(json, "langevin_middle", "sample_every_steps");
  const double openmm_samples = openmm_prod_ps / 0.002 / openmm_every;

  DynamicsSettings langevin = mdsim_test::langevin(2029);
  langevin.remove_cm_motion = false;
  auto ctx = equilibrated_context(langevin);
  ctx->step(5000);  // 10 ps, as OpenMM's equilibration
  const int every = static_cast<int>(openmm_every);  // samples as far apart as OpenMM's
  const int samples = 2000;                          // 200 ps
  std::vector<double> pe, temperature;
  for (int i = 0; i < samples; ++i) {
    ctx->step(every);
    const SimulationState st = ctx->state(StateRequest{false, false, false, true});
    pe.push_back(st.potential.total);
    temperature.push_back(st.temperature_k);
  }
  const mdsim_test::BlockMean ours = mdsim_test::block_mean(pe, 20);
  const mdsim_test::BlockMean t = mdsim_test::block_mean(temperature, 20);
  const double openmm_error = openmm_std * std::sqrt(ours.inefficiency / openmm_samples);
  const double combined = std::hypot(ours.standard_error, openmm_error);
  std::printf("[figure] CUDA mixed LangevinMiddle ala2_water, 200 ps: mean PE %.1f +- %.1f kJ/mol (std %.1f, "
              "inefficiency %.1f samples); OpenMM 20 ps: %.1f +- %.1f (std %.1f); difference %.1f = %.2f combined "
              "standard errors; mean T %.2f +- %.2f K\n",
              ours.mean, ours.standard_error, ours.std_dev, ours.inefficiency, openmm_mean, openmm_error, openmm_std,
              ours.mean - openmm_mean, (ours.mean - openmm_mean) / combined, t.mean, t.standard_error);
  CHECK(std::fabs(ours.mean - openmm_mean) <= 3.0 * combined);
  CHECK(std::fabs(t.mean - 300.0) <= 3.0);
  CHECK(ours.std_dev < 1.5 * openmm_std);
  CHECK(ours.std_dev > openmm_std / 1.5);
}
