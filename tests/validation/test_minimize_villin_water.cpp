// Validation: energy minimisation of villin_water (8867 atoms; HBonds, rigid water, PME 1.0 nm) from
// the PDB coordinates against tests/data/dyn_villin_water_minimize.json: OpenMM 7.7's
// LocalEnergyMinimizer (tolerance 10 kJ/mol/nm) with the settings the JSON lists, made by
// tests/data/dyn_make_villin_water_minimize.py (shared/reference has no villin_water.dynamics.json).
//
// Context::minimize (CPU platform, max_iterations 0) from the PDB coordinates must: start at OpenMM's
// initial energy to 1e-5 relative (same system, positions before constraints), end within 1% of
// OpenMM's final energy, converge (largest per-atom force, constraint components removed, below
// 10 kJ/mol/nm) and hold the constraints to the tolerance. OpenMM 7.7 stops on the RMS per-atom force
// (looser), mdsim on the largest one, so mdsim ends lower: about 0.8% below OpenMM here (ala2_water:
// about 1.2%, hence that test's two stages; one stage suffices here and costs less time).
// About 250 s on 2 cores (a machine like CI's; 1849 L-BFGS iterations): the longest CPU test.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <string>

#include "engine/model.hpp"
#include "io/config.hpp"
#include "kernels/cpu/cpu_constraints.hpp"
#include "kernels/cpu/cpu_context.hpp"
#include "platform/context.hpp"
#include "support/catch.hpp"
#include "support/statistics.hpp"

using namespace mdsim;

namespace {

using mdsim_test::json_number;

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

TEST_CASE("minimisation of villin_water matches OpenMM's final energy and converges to the max-force tolerance") {
  const std::string dir = MDSIM_TEST_DATA_DIR;
  const std::string json = mdsim_test::read_text(std::string(MDSIM_SOURCE_DIR) + "/tests/data/dyn_villin_water_minimize.json");
  const double openmm_initial = json_number(json, "minimize", "initial_pe");
  const double openmm_final = json_number(json, "minimize", "final_pe");
  const double openmm_max_force = json_number(json, "minimize", "final_max_force_norm_constraints_removed");
  const double openmm_seconds = json_number(json, "minimize", "seconds");
  const double tolerance = json_number(json, "minimize", "tolerance_kj_per_mol_nm");
  const double cutoff = json_number(json, "settings", "cutoff_nm");
  const double ewald_tolerance = json_number(json, "settings", "ewald_error_tolerance");
  // The settings the config below spells out.
  REQUIRE(json.find("\"nonbonded_method\": \"PME\"") != std::string::npos);
  REQUIRE(json.find("\"switching\": false") != std::string::npos);
  REQUIRE(json.find("\"dispersion_correction\": true") != std::string::npos);
  REQUIRE(json.find("\"constraints\": \"HBonds\"") != std::string::npos);
  REQUIRE(json.find("\"rigid_water\": true") != std::string::npos);

  char numbers[128];
  std::snprintf(numbers, sizeof numbers, "  cutoff: %.17g\n  ewald_tolerance: %.17g\n", cutoff, ewald_tolerance);
  const Model model = build_model(parse_config("system:\n  pdb: " + dir + "/systems/villin_water.pdb\n"
                                               "  forcefield: [amber14-all.xml, amber14/tip3p.xml]\n"
                                               "  nonbonded_method: pme\n" + std::string(numbers) +
                                               "  switch_distance: null\n  dispersion_correction: true\n"
                                               "  constraints: hbonds\n  rigid_water: true\n",
                                               "villin_water.yaml", dir));
  REQUIRE(model.system.num_particles() == static_cast<int>(json_number(json, "name", "atoms")));
  REQUIRE(static_cast<int>(model.system.constraints.size()) == static_cast<int>(json_number(json, "name", "constraints")));
  const double constraint_tolerance = 1e-6;

  // mdsim's criterion through the Context, from the PDB coordinates.
  DynamicsSettings settings;
  settings.integrator.constraint_tolerance = constraint_tolerance;
  auto ctx = make_cpu_context(model.system, settings);
  ctx->set_positions(model.positions_nm);
  const auto start = std::chrono::steady_clock::now();
  const MinimizationResult r = ctx->minimize(tolerance, 0);
  const double seconds = seconds_since(start);
  const SimulationState st = ctx->state(StateRequest{true, false, true, true});
  std::printf("[figure] villin_water minimisation, max-force criterion: %.3f -> %.3f kJ/mol in %d iterations, "
              "%.1f s, largest force %.3f kJ/mol/nm (tolerance %.1f); OpenMM %.3f -> %.3f in %.1f s, largest force "
              "%.3f; mdsim %.2f%% below OpenMM's final energy\n",
              r.initial_energy, r.final_energy, r.iterations, seconds, r.max_force_kj_per_mol_nm, tolerance,
              openmm_initial, openmm_final, openmm_seconds, openmm_max_force,
              100.0 * (openmm_final - r.final_energy) / std::fabs(openmm_final));
  CHECK(r.initial_energy == Catch::Approx(openmm_initial).epsilon(1e-5));
  CHECK(std::fabs(r.final_energy - openmm_final) <= 0.01 * std::fabs(openmm_final));
  CHECK(r.converged);
  CHECK(r.max_force_kj_per_mol_nm < tolerance);
  CHECK(st.potential.total == Catch::Approx(r.final_energy).epsilon(1e-12));
  CpuConstraints constraints(model.system, model.system.mass_amu);
  CHECK(constraints.max_relative_deviation(st.positions_nm) <= constraint_tolerance);
}
