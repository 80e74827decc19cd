// The CUDA Context (kernels/cuda/cuda_context) against the CPU reference context (the oracle), on
// alanine dipeptide in water (PME, HBonds + rigid water: SETTLE and CCMA together), in vacuum (CCMA
// only) and with rigid water alone (SETTLE only):
//  - double precision follows the CPU step for step (LangevinMiddle, Verlet, Monte Carlo barostat):
//    positions to 1e-8 nm after 20 steps with constraints converged to 1e-10; with the default
//    tolerance 1e-6 a CCMA convergence test that falls the other way on one platform (the residual
//    error is ~tolerance x bond length) bounds the difference by 1e-7 nm;
//  - mixed precision (float pair forces) stays within 1e-4 nm of the CPU after 20 steps;
//  - initial velocities and apply_constraints agree with the CPU to round-off, also on DHFR (CCMA
//    over many thread blocks), and 5 DHFR steps of 4 fs agree to 1e-8 nm;
//  - constraints hold to the tolerance after steps, in both precisions;
//  - NVE (Verlet 2 fs) drift and total-energy fluctuation consistent with the CPU's;
//  - a run resumed at a restart point (a marked step, a multiple of 100) is bit-identical to the
//    uninterrupted run (also with a barostat);
//  - capture_frame's asynchronous copy into pinned memory equals state();
//  - step(100) makes no host<->device copy;
//  - minimisation reaches the CPU's final energy within 1%;
//  - the device minimiser (kernels/cuda/cuda_minimizer) reaches the force tolerance with the
//    constraints held, the CPU minimiser's final energy within 0.1% (double; mixed 1%), bit-identical
//    positions in two runs, and moves no per-particle vector between host and device while it
//    iterates (one double per reduction the driver needs on the host); also on ala2_vacuum with and
//    without constraints; DHFR minimisation time per iteration printed;
//  - DHFR speed (OpenMM's benchmark settings, and amber14 at 2 fs) printed as ns/day.
// Figures are printed with the prefix [figure].
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "common/errors.hpp"
#include "engine/model.hpp"
#include "io/config.hpp"
#include "kernels/cpu/cpu_constraints.hpp"
#include "kernels/cpu/cpu_context.hpp"
#include "kernels/cuda/cuda_check.hpp"
#include "kernels/cuda/cuda_context.hpp"
#include "kernels/cuda/cuda_forces.hpp"
#include "kernels/cuda/cuda_minimizer.hpp"
#include "physics/integrator_steps.hpp"
#include "platform/constraint_plan.hpp"
#include "platform/context.hpp"
#include "support/catch.hpp"
#include "support/dynamics_settings.hpp"
#include "support/energy_series.hpp"
#include "support/reference_systems.hpp"
#include "support/statistics.hpp"
#include "support/vectors.hpp"

using namespace mdsim;
using mdsim::test::system_model;
using mdsim_test::bitwise_equal;
using mdsim_test::max_difference;

namespace {

const Model& water_model() {  // ala2_water, PME 1.0 nm, HBonds + rigid water
  static const Model m = system_model("ala2_water", "  cutoff: 1.0 nm\n  constraints: hbonds\n  rigid_water: true\n");
  return m;
}

DynamicsSettings dynamics(IntegratorType type, std::uint64_t seed, double tolerance, double dt = 0.002) {
  DynamicsSettings s = mdsim_test::langevin(seed, dt, tolerance);
  s.integrator.type = type;
  return s;
}

CudaOptions precision(bool double_precision) {
  CudaOptions o;
  o.double_precision = double_precision;
  return o;
}

const char* name_of(IntegratorType t) { return t == IntegratorType::Verlet ? "Verlet" : "LangevinMiddle"; }

StateRequest everything() { return StateRequest{true, true, true, true}; }

double rms_difference(const std::vector<Vec3d>& a, const std::vector<Vec3d>& b) {
  double sum = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i) sum += norm2(a[i] - b[i]);
  return std::sqrt(sum / static_cast<double>(a.size()));
}

double relative(double a, double b) { return std::fabs(a - b) / std::max(std::fabs(b), 1e-30); }

struct Start {
  std::vector<Vec3d> positions, velocities;
};

// Constrained positions (to 1e-12) and 300 K velocities, made by the CPU context.
Start start_state(const Model& m, std::uint64_t seed) {
  auto cpu = make_cpu_context(m.system, dynamics(IntegratorType::LangevinMiddle, seed, 1e-12));
  cpu->set_positions(m.positions_nm);
  if (!m.system.constraints.empty()) cpu->apply_constraints(1e-12);
  cpu->set_velocities_to_temperature(300.0, 0);
  const SimulationState s = cpu->state(StateRequest{true, true, false, false});
  return {s.positions_nm, s.velocities_nm_per_ps};
}

void load(Context& ctx, const Start& s) {
  ctx.set_positions(s.positions);
  ctx.set_velocities(s.velocities);
}

// The CPU context's minimised ala2_water (tolerance 10 kJ/mol/nm), shared by two tests.
struct Minimised {
  MinimizationResult result;
  std::vector<Vec3d> positions;
};
const Minimised& cpu_minimised() {
  static const Minimised m = [] {
    const Model& model = water_model();
    auto cpu = make_cpu_context(model.system, dynamics(IntegratorType::LangevinMiddle, 3, 1e-6));
    cpu->set_positions(model.positions_nm);
    cpu->apply_constraints(1e-6);
    const auto t0 = std::chrono::steady_clock::now();
    Minimised out;
    out.result = cpu->minimize(10.0, 0);
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("[figure] CPU minimisation of ala2_water: %.3f -> %.3f kJ/mol, %d iterations, max force %.2f, %.1f s\n",
                out.result.initial_energy, out.result.final_energy, out.result.iterations,
                out.result.max_force_kj_per_mol_nm, s);
    out.positions = cpu->state(StateRequest{}).positions_nm;
    return out;
  }();
  return m;
}

}  // namespace

TEST_CASE("CUDA initial velocities and apply_constraints agree with the CPU context") {
  const Model& m = water_model();
  for (const bool dbl : {true, false}) {
    const DynamicsSettings s = dynamics(IntegratorType::LangevinMiddle, 4242, 1e-6);
    auto cpu = make_cpu_context(m.system, s);
    auto gpu = make_cuda_context(m.system, s, precision(dbl));
    for (Context* c : {cpu.get(), gpu.get()}) {
      c->set_positions(m.positions_nm);
      c->apply_constraints(1e-6);
      c->set_velocities_to_temperature(300.0, 0);
    }
    const SimulationState a = cpu->state(StateRequest{true, true, false, false});
    const SimulationState b = gpu->state(StateRequest{true, true, false, false});
    const double dx = max_difference(a.positions_nm, b.positions_nm);
    const double dv = max_difference(a.velocities_nm_per_ps, b.velocities_nm_per_ps);
    std::printf("[figure] apply_constraints + initial velocities (%s): max |dx| %.2e nm, max |dv| %.2e nm/ps\n",
                dbl ? "double" : "mixed", dx, dv);
    CHECK(dx < 1e-12);
    CHECK(dv < 1e-10);
    CHECK(gpu->seed() == 4242);
    CHECK(b.degrees_of_freedom == 4545);
  }
}

TEST_CASE("CUDA double precision follows the CPU context step for step") {
  struct Case {
    std::string label;
    const Model* model;
    IntegratorType type;
    double tolerance;
    double bound_nm;
    int cm_interval = 1;  // remove_cm_motion_interval: the COM kernel skips the steps it does not divide
  };
  static const Model vacuum = system_model("ala2_vacuum", "  constraints: hbonds\n");
  static const Model settle_only =
      system_model("ala2_water", "  cutoff: 1.0 nm\n  constraints: none\n  rigid_water: true\n");
  const std::vector<Case> cases{
      {"ala2_water hbonds+rigid", &water_model(), IntegratorType::LangevinMiddle, 1e-10, 1e-8},
      {"ala2_water hbonds+rigid", &water_model(), IntegratorType::Verlet, 1e-10, 1e-8},
      {"ala2_water hbonds+rigid", &water_model(), IntegratorType::LangevinMiddle, 1e-6, 1e-7},
      {"ala2_water hbonds+rigid", &water_model(), IntegratorType::Verlet, 1e-6, 1e-7},
      {"ala2_vacuum hbonds (CCMA only)", &vacuum, IntegratorType::LangevinMiddle, 1e-10, 1e-8},
      {"ala2_water rigid water only (SETTLE only)", &settle_only, IntegratorType::LangevinMiddle, 1e-10, 1e-8},
      {"ala2_water hbonds+rigid, COM every 3 steps", &water_model(), IntegratorType::LangevinMiddle, 1e-10, 1e-8, 3},
      {"ala2_water hbonds+rigid, COM every 3 steps", &water_model(), IntegratorType::Verlet, 1e-10, 1e-8, 3},
  };
  for (const Case& c : cases) {
    const Start start = start_state(*c.model, 17);
    DynamicsSettings s = dynamics(c.type, 2024, c.tolerance);
    s.remove_cm_motion_interval = c.cm_interval;
    auto cpu = make_cpu_context(c.model->system, s);
    auto gpu = make_cuda_context(c.model->system, s, precision(true));
    load(*cpu, start);
    load(*gpu, start);
    cpu->step(20);
    gpu->step(20);
    const SimulationState a = cpu->state(everything());
    const SimulationState b = gpu->state(everything());
    const double dx = max_difference(a.positions_nm, b.positions_nm);
    const double dv = max_difference(a.velocities_nm_per_ps, b.velocities_nm_per_ps);
    std::printf("[figure] double vs CPU, %s, %s, tolerance %.0e, 20 steps: max |dx| %.2e nm (rms %.2e), max |dv| "
                "%.2e nm/ps, potential %.9f vs %.9f, kinetic %.9f vs %.9f kJ/mol\n",
                c.label.c_str(), name_of(c.type), c.tolerance, dx, rms_difference(a.positions_nm, b.positions_nm), dv,
                b.potential.total, a.potential.total, b.kinetic_kj_per_mol, a.kinetic_kj_per_mol);
    INFO(c.label << " " << name_of(c.type) << " tolerance " << c.tolerance);
    CHECK(b.step == 20);
    CHECK(b.time_ps == a.time_ps);
    CHECK(dx < c.bound_nm);
    CHECK(dv < 1e3 * c.bound_nm);  // velocities carry (x' - x)/dt: 1/dt = 500 per ps
    if (c.tolerance <= 1e-10) {
      CHECK(relative(b.potential.total, a.potential.total) < 1e-8);
      CHECK(relative(b.kinetic_kj_per_mol, a.kinetic_kj_per_mol) < 1e-8);
    }
  }
}

TEST_CASE("CUDA constraints and dynamics on DHFR (CCMA over many thread blocks) follow the CPU") {
  // OpenMM's benchmark settings (HBonds, rigid water, HMR, LangevinMiddle 4 fs): 1221 CCMA
  // constraints in 20 thread blocks that converge after different numbers of iterations, and 7023
  // SETTLE waters.
  const RunConfig cfg = load_config(std::string(MDSIM_SOURCE_DIR) + "/configs/dhfr_benchmark.yaml");
  const Model model = build_model(cfg);
  DynamicsSettings s = dynamics_settings(cfg);
  s.integrator.seed = 7;
  s.integrator.constraint_tolerance = 1e-10;
  auto cpu = make_cpu_context(model.system, s);
  auto gpu = make_cuda_context(model.system, s, precision(true));
  for (Context* c : {cpu.get(), gpu.get()}) {
    c->set_positions(model.positions_nm);
    c->apply_constraints(1e-10);
    c->set_velocities_to_temperature(300.0, 0);
  }
  const SimulationState a0 = cpu->state(StateRequest{true, true, false, false});
  const SimulationState b0 = gpu->state(StateRequest{true, true, false, false});
  const double dx0 = max_difference(a0.positions_nm, b0.positions_nm);
  const double dv0 = max_difference(a0.velocities_nm_per_ps, b0.velocities_nm_per_ps);
  cpu->step(5);
  gpu->step(5);
  const SimulationState a = cpu->state(StateRequest{true, true, false, false});
  const SimulationState b = gpu->state(StateRequest{true, true, false, false});
  const double dx = max_difference(a.positions_nm, b.positions_nm);
  std::printf("[figure] DHFR double vs CPU: apply_constraints max |dx| %.2e nm, initial velocities max |dv| %.2e nm/ps; "
              "after 5 steps of 4 fs max |dx| %.2e nm (rms %.2e)\n",
              dx0, dv0, dx, rms_difference(a.positions_nm, b.positions_nm));
  CHECK(dx0 < 1e-12);
  CHECK(dv0 < 1e-10);
  CHECK(dx < 1e-8);
}

TEST_CASE("CUDA Monte Carlo barostat makes the CPU's moves (double precision)") {
  const Model& m = water_model();
  const Start start = start_state(m, 23);
  DynamicsSettings s = dynamics(IntegratorType::LangevinMiddle, 99, 1e-10);
  s.barostat = BarostatConfig{1.0, 300.0, 5};
  auto cpu = make_cpu_context(m.system, s);
  auto gpu = make_cuda_context(m.system, s, precision(true));
  load(*cpu, start);
  load(*gpu, start);
  cpu->step(40);
  gpu->step(40);
  const SimulationState a = cpu->state(everything());
  const SimulationState b = gpu->state(everything());
  const std::vector<double> sa = cpu->barostat_state(), sb = gpu->barostat_state();
  REQUIRE(sa.size() == 5);
  REQUIRE(sb.size() == 5);
  std::printf("[figure] barostat double vs CPU, 40 steps (7 moves): volume %.12f vs %.12f nm^3, accepted %g vs %g, "
              "max |dx| %.2e nm\n",
              b.box.volume(), a.box.volume(), sb[4], sa[4], max_difference(a.positions_nm, b.positions_nm));
  CHECK(sb[3] == 7.0);
  CHECK(sa[4] == sb[4]);
  CHECK(sa[4] > 0.0);  // some move was accepted
  CHECK(relative(b.box.volume(), a.box.volume()) < 1e-12);
  CHECK(max_difference(a.positions_nm, b.positions_nm) < 1e-8);
}

TEST_CASE("CUDA mixed precision stays close to the CPU context") {
  const Model& m = water_model();
  const Start start = start_state(m, 17);
  for (const IntegratorType type : {IntegratorType::LangevinMiddle, IntegratorType::Verlet}) {
    const DynamicsSettings s = dynamics(type, 2024, 1e-6);
    auto cpu = make_cpu_context(m.system, s);
    auto gpu = make_cuda_context(m.system, s, precision(false));
    load(*cpu, start);
    load(*gpu, start);
    cpu->step(20);
    gpu->step(20);
    const SimulationState a = cpu->state(everything());
    const SimulationState b = gpu->state(everything());
    const double dx = max_difference(a.positions_nm, b.positions_nm);
    std::printf("[figure] mixed vs CPU, %s, 20 steps: max |dx| %.2e nm (rms %.2e), potential %.4f vs %.4f, "
                "kinetic %.4f vs %.4f kJ/mol\n",
                name_of(type), dx, rms_difference(a.positions_nm, b.positions_nm), b.potential.total,
                a.potential.total, b.kinetic_kj_per_mol, a.kinetic_kj_per_mol);
    INFO(name_of(type));
    CHECK(dx < 1e-4);
    CHECK(relative(b.potential.total, a.potential.total) < 1e-5);
    CHECK(relative(b.kinetic_kj_per_mol, a.kinetic_kj_per_mol) < 1e-4);
  }
}

// Longest row of a plan's inverse coupling matrix: HBonds groups (a heavy atom and its hydrogens) stay
// within the warp CCMA kernel's 8 register slots, a whole molecule's bonds do not (the block kernel).
std::size_t longest_coupling_row(const System& system) {
  const ConstraintPlan plan(system, system.mass_amu);
  std::size_t longest = 0;
  for (const auto& row : plan.inverse_coupling()) longest = std::max(longest, row.size());
  return longest;
}

TEST_CASE("the fused LangevinMiddle step follows the stage-by-stage kernels to rounding") {
  // ala2_water (SETTLE, CCMA and unconstrained atoms) and DHFR (CCMA over many blocks), HBonds: the
  // fused step's CCMA runs one warp per block (ccma_warp.cuh); ala2_water with every bond constrained:
  // one thread block per CCMA block (ccma_block.cuh). Mixed precision, centre-of-mass motion removed: the
  // same arithmetic in fewer kernels (the compiler may contract a multiply-add differently in each, so
  // the last bits may differ); after 30 steps positions and velocities agree to rounding. A missing or
  // doubled stage would show as 1e-4 nm or more.
  const Model dhfr = system_model("dhfr", "");
  const Model all_bonds =
      system_model("ala2_water", "  cutoff: 1.0 nm\n  constraints: allbonds\n  rigid_water: true\n");
  CHECK(longest_coupling_row(water_model().system) <= 8);
  CHECK(longest_coupling_row(all_bonds.system) > 8);
  for (const char* name : {"ala2_water", "dhfr", "ala2_water allbonds"}) {
    const std::string which = name;
    const Model& m = which == "dhfr" ? dhfr : which == "ala2_water" ? water_model() : all_bonds;
    const Start start = start_state(m, 5);
    DynamicsSettings s = dynamics(IntegratorType::LangevinMiddle, 77, 1e-6);
    s.remove_cm_motion = true;
    CudaOptions staged = precision(false);
    staged.fuse_langevin_step = false;
    auto fused = make_cuda_context(m.system, s, precision(false));
    auto reference = make_cuda_context(m.system, s, staged);
    load(*fused, start);
    load(*reference, start);
    fused->step(30);
    reference->step(30);
    const SimulationState a = fused->state(everything());
    const SimulationState b = reference->state(everything());
    const double dx = max_difference(a.positions_nm, b.positions_nm);
    const double dv = max_difference(a.velocities_nm_per_ps, b.velocities_nm_per_ps);
    std::printf("[figure] fused vs stage-by-stage LangevinMiddle, %s, 30 steps: max |dx| %.2e nm, max |dv| %.2e nm/ps\n",
                name, dx, dv);
    INFO(name);
    CHECK(dx < 1e-10);
    CHECK(dv < 1e-7);
    CHECK(cuda_step_launches(*fused).kernels < cuda_step_launches(*reference).kernels);
  }
}

TEST_CASE("constraints hold to the tolerance after CUDA steps") {
  const Model& m = water_model();
  const Start start = start_state(m, 31);
  CpuConstraints check(m.system, m.system.mass_amu);
  for (const bool dbl : {true, false}) {
    for (const IntegratorType type : {IntegratorType::LangevinMiddle, IntegratorType::Verlet}) {
      const double tolerance = 1e-6;
      auto gpu = make_cuda_context(m.system, dynamics(type, 5, tolerance), precision(dbl));
      load(*gpu, start);
      gpu->step(50);
      const SimulationState st = gpu->state(StateRequest{true, false, false, true});
      const double deviation = check.max_relative_deviation(st.positions_nm);
      std::printf("[figure] %s %s after 50 steps: max relative constraint deviation %.2e (tolerance %.0e), T %.1f K\n",
                  dbl ? "double" : "mixed", name_of(type), deviation, tolerance, st.temperature_k);
      INFO((dbl ? "double " : "mixed ") << name_of(type));
      CHECK(deviation <= tolerance * (1.0 + 1e-9));
      CHECK(std::isfinite(st.potential.total));
    }
  }
}

TEST_CASE("a CUDA run resumed at a restart point continues bit for bit as the uninterrupted run") {
  const Model& m = water_model();
  const Start start = start_state(m, 41);
  for (const bool barostat : {false, true}) {
    // Restart at step 30 (marked, as `mdsim run` marks checkpoint steps) and at step 100 (every
    // multiple of kRestartIntervalSteps is a restart point); 120 steps after it, crossing the next
    // automatic re-sort.
    for (const int restart_at : {30, kRestartIntervalSteps}) {
      DynamicsSettings s = dynamics(IntegratorType::LangevinMiddle, 77, 1e-6);
      if (barostat) s.barostat = BarostatConfig{1.0, 300.0, 10};
      auto a = make_cuda_context(m.system, s, precision(false));
      load(*a, start);
      a->step(restart_at);
      if (restart_at % kRestartIntervalSteps != 0) a->mark_restart_point();
      const SimulationState mid = a->state(StateRequest{true, true, false, false});
      const std::vector<double> baro_mid = a->barostat_state();
      a->step(120);
      const SimulationState end_a = a->state(everything());
      const std::vector<double> baro_a = a->barostat_state();
      // Two runs resumed from that state, as from a checkpoint.
      auto restart = [&] {
        auto c = make_cuda_context(m.system, s, precision(false));
        c->set_box(mid.box);
        c->set_positions(mid.positions_nm);
        c->set_velocities(mid.velocities_nm_per_ps);
        c->set_step(mid.step, mid.time_ps);
        c->set_barostat_state(baro_mid);
        c->step(120);
        return std::make_pair(c->state(everything()), c->barostat_state());
      };
      const auto [end_b, baro_b] = restart();
      const auto [end_c, baro_c] = restart();
      std::printf("[figure] restart at step %d (%s): resumed vs uninterrupted after 120 more steps: max |dx| %.2e nm, "
                  "bit-identical: %s\n",
                  restart_at, barostat ? "with barostat" : "no barostat",
                  max_difference(end_a.positions_nm, end_b.positions_nm),
                  bitwise_equal(end_a.positions_nm, end_b.positions_nm) ? "yes" : "NO");
      INFO((barostat ? "with barostat" : "without barostat") << ", restart at step " << restart_at);
      CHECK(end_b.step == restart_at + 120);
      CHECK(bitwise_equal(end_b.positions_nm, end_c.positions_nm));
      CHECK(bitwise_equal(end_a.positions_nm, end_b.positions_nm));
      CHECK(bitwise_equal(end_a.velocities_nm_per_ps, end_b.velocities_nm_per_ps));
      CHECK(bitwise_equal(end_a.forces_kj_per_mol_nm, end_b.forces_kj_per_mol_nm));
      CHECK(end_a.potential.total == end_b.potential.total);
      CHECK(std::memcmp(&end_a.box, &end_b.box, sizeof(Boxd)) == 0);
      CHECK(baro_a == baro_b);
      CHECK(baro_b == baro_c);
      if (barostat) CHECK(baro_b[3] == static_cast<double>((restart_at + 119) / 10));  // a move every 10 steps
    }
  }
}

TEST_CASE("CUDA steps run as multi-step graphs equal single steps bit for bit") {
  // step(n) runs several steps a graph where it can (CudaIntegrator::kStepsPerGraph, with the fused
  // LangevinMiddle step); step(1) never does. 103 steps cross a periodic re-sort (step 100) and, with the barostat,
  // moves every 10 steps, and leave a remainder of single-step graphs. Without the barostat the centre-of-mass
  // motion is removed every third step (the COM kernel reads the step count on the device, in the graphs too).
  const Model& m = water_model();
  const Start start = start_state(m, 43);
  for (const bool barostat : {false, true}) {
    DynamicsSettings s = dynamics(IntegratorType::LangevinMiddle, 79, 1e-6);
    s.remove_cm_motion = true;
    s.remove_cm_motion_interval = barostat ? 1 : 3;
    if (barostat) s.barostat = BarostatConfig{1.0, 300.0, 10};
    auto merged = make_cuda_context(m.system, s, precision(false));
    auto single = make_cuda_context(m.system, s, precision(false));
    load(*merged, start);
    load(*single, start);
    merged->step(103);
    for (int k = 0; k < 103; ++k) single->step(1);
    const SimulationState a = merged->state(everything());
    const SimulationState b = single->state(everything());
    INFO((barostat ? "with barostat" : "without barostat"));
    CHECK(a.step == 103);
    CHECK(bitwise_equal(a.positions_nm, b.positions_nm));
    CHECK(bitwise_equal(a.velocities_nm_per_ps, b.velocities_nm_per_ps));
    CHECK(bitwise_equal(a.forces_kj_per_mol_nm, b.forces_kj_per_mol_nm));
    CHECK(std::memcmp(&a.box, &b.box, sizeof(Boxd)) == 0);
    CHECK(merged->barostat_state() == single->barostat_state());
    CHECK(cuda_step_launches(*single).steps_per_graph == 1);
    if (!barostat) {  // (with it, the move at step 110 makes the last of these steps a two-part one)
      merged->step(8);  // the first after state() reuses its forces (two-part); then 4 steps a graph
      CHECK(cuda_step_launches(*merged).steps_per_graph > 1);
      CHECK(cuda_step_launches(*merged).kernels == cuda_step_launches(*single).kernels);
    }
  }
}

TEST_CASE("capture_frame copies the frame asynchronously into pinned memory, exactly as state() reads it") {
  const Model& m = water_model();
  const Start start = start_state(m, 47);
  for (const IntegratorType type : {IntegratorType::LangevinMiddle, IntegratorType::Verlet}) {
    auto gpu = make_cuda_context(m.system, dynamics(type, 5, 1e-6), precision(false));
    load(*gpu, start);
    gpu->step(7);
    const std::shared_ptr<HostBufferAllocator> pinned = gpu->frame_allocator();
    REQUIRE(pinned != nullptr);
    const std::size_t floats = 3 * m.system.mass_amu.size();
    float* host = static_cast<float*>(pinned->allocate(3 * floats * sizeof(float)));
    Context::FrameTarget target;
    target.positions_nm = host;
    target.velocities_nm_per_ps = host + floats;
    target.forces_kj_per_mol_nm = host + 2 * floats;
    const std::size_t before = cuda::transfer_count();
    const std::function<void()> wait = gpu->capture_frame(target);
    REQUIRE(wait);
    const SimulationState st = gpu->state(StateRequest{true, true, true, false});  // also synchronises
    gpu->step(50);  // the capture must not be disturbed by later steps
    wait();
    CHECK(cuda::transfer_count() - before >= 3);
    std::size_t differing = 0;
    for (std::size_t i = 0; i < st.positions_nm.size(); ++i)
      for (int d = 0; d < 3; ++d) {
        differing += host[3 * i + d] != static_cast<float>(st.positions_nm[i][d]);
        differing += host[floats + 3 * i + d] != static_cast<float>(st.velocities_nm_per_ps[i][d]);
        differing += host[2 * floats + 3 * i + d] != static_cast<float>(st.forces_kj_per_mol_nm[i][d]);
      }
    INFO(name_of(type));
    CHECK(differing == 0);
    // Positions only, while steps are queued behind it.
    Context::FrameTarget positions_only;
    positions_only.positions_nm = host;
    const std::function<void()> wait2 = gpu->capture_frame(positions_only);
    const SimulationState st2 = gpu->state(StateRequest{true, false, false, false});
    gpu->step(10);
    wait2();
    differing = 0;
    for (std::size_t i = 0; i < st2.positions_nm.size(); ++i)
      for (int d = 0; d < 3; ++d) differing += host[3 * i + d] != static_cast<float>(st2.positions_nm[i][d]);
    CHECK(differing == 0);
    pinned->deallocate(host, 3 * floats * sizeof(float));
  }
}

TEST_CASE("step(100) on the CUDA context makes no host<->device copy") {
  const Model& m = water_model();
  const Start start = start_state(m, 53);
  for (const IntegratorType type : {IntegratorType::LangevinMiddle, IntegratorType::Verlet}) {
    auto gpu = make_cuda_context(m.system, dynamics(type, 8, 1e-6), precision(false));
    load(*gpu, start);
    gpu->step(1);  // first evaluation (sort, list build) and graph capture
    const std::size_t before = cuda::transfer_count();
    gpu->step(100);
    const std::size_t after = cuda::transfer_count();
    const SimulationState st = gpu->state(StateRequest{false, false, false, true});
    std::printf("[figure] %s step(100): %zu host<->device copies; then T %.1f K\n", name_of(type), after - before,
                st.temperature_k);
    CHECK(after == before);
    CHECK(st.step == 101);
    CHECK(std::isfinite(st.temperature_k));
  }
}

TEST_CASE("CUDA minimisation reaches the CPU's final energy") {
  const Model& m = water_model();
  const Minimised& ref = cpu_minimised();
  CHECK(ref.result.converged);
  for (const bool dbl : {false, true}) {
    auto gpu = make_cuda_context(m.system, dynamics(IntegratorType::LangevinMiddle, 3, 1e-6), precision(dbl));
    gpu->set_positions(m.positions_nm);
    gpu->apply_constraints(1e-6);
    const auto t0 = std::chrono::steady_clock::now();
    const MinimizationResult r = gpu->minimize(10.0, 0);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("[figure] CUDA %s minimisation: %.3f -> %.3f kJ/mol (CPU %.3f), %d iterations (CPU %d), max force "
                "%.2f, %.1f s\n",
                dbl ? "double" : "mixed", r.initial_energy, r.final_energy, ref.result.final_energy, r.iterations,
                ref.result.iterations, r.max_force_kj_per_mol_nm, seconds);
    INFO((dbl ? "double" : "mixed"));
    CHECK(r.converged);
    CHECK(r.max_force_kj_per_mol_nm < 10.0);
    CHECK(relative(r.initial_energy, ref.result.initial_energy) < 1e-5);
    CHECK(relative(r.final_energy, ref.result.final_energy) < 0.01);
    // The minimised positions are the context's, constraints held.
    CpuConstraints check(m.system, m.system.mass_amu);
    const SimulationState st = gpu->state(StateRequest{true, false, false, true});
    CHECK(check.max_relative_deviation(st.positions_nm) <= 1e-6);
    CHECK(st.potential.total == Catch::Approx(r.final_energy).epsilon(1e-9));
  }
}

TEST_CASE("CUDA device minimiser: tolerance, constraints, CPU energy, bit-reproducible, no vector transfers") {
  const Model& m = water_model();
  const Minimised& ref = cpu_minimised();
  const double tolerance = 10.0;  // kJ/mol/nm
  CpuConstraints check(m.system, m.system.mass_amu);
  for (const bool dbl : {false, true}) {
    INFO((dbl ? "double" : "mixed"));
    std::vector<Vec3d> first_positions;
    MinimizationResult first{};
    for (int run = 0; run < 2; ++run) {
      auto gpu = make_cuda_context(m.system, dynamics(IntegratorType::LangevinMiddle, 3, 1e-6), precision(dbl));
      gpu->set_positions(m.positions_nm);
      gpu->apply_constraints(1e-6);
      const std::size_t before = cuda::transfer_count();
      const auto t0 = std::chrono::steady_clock::now();
      const MinimizationResult r = gpu->minimize(tolerance, 0);
      const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      const long transfers = static_cast<long>(cuda::transfer_count() - before);
      const CudaMinimizationStats stats = cuda_minimization_stats(*gpu);
      const std::vector<Vec3d> x = gpu->state(StateRequest{}).positions_nm;
      const double deviation = check.max_relative_deviation(x);
      std::printf("[figure] CUDA device minimiser (%s, run %d): %.3f -> %.3f kJ/mol (CPU %.3f), %d iterations (CPU "
                  "%d), %ld evaluations, max force %.2f, constraint deviation %.1e, %.2f s; %ld host<->device copies "
                  "(%ld scalar downloads of the minimiser, %ld vector transfers), %.1f per iteration\n",
                  dbl ? "double" : "mixed", run, r.initial_energy, r.final_energy, ref.result.final_energy,
                  r.iterations, ref.result.iterations, stats.evaluations, r.max_force_kj_per_mol_nm, deviation, seconds,
                  transfers, stats.scalar_downloads, stats.vector_transfers,
                  static_cast<double>(transfers) / std::max(r.iterations, 1));
      CHECK(r.converged);
      CHECK(r.max_force_kj_per_mol_nm < tolerance);
      CHECK(relative(r.initial_energy, ref.result.initial_energy) < 1e-5);
      // Double precision follows the CPU minimiser's path (iterations within a few, energy to ~1e-5);
      // mixed precision's float pair forces send it elsewhere after some hundred iterations, into
      // another local minimum of the solvated system that meets the tolerance (0.3% higher, seen).
      CHECK(relative(r.final_energy, ref.result.final_energy) < (dbl ? 1e-3 : 1e-2));
      CHECK(deviation <= 1e-9);  // trial points are retracted to 1e-10
      // Every host<->device copy accounted for: two per evaluation (CudaForceEvaluator::energies():
      // the tile-list overflow check and the energies), the minimiser's one-double downloads, and the
      // final constraint check's download of the positions; a few more when a tile-list overflow is
      // redone. A per-evaluation vector copy (forces, positions) would add `evaluations` more.
      const long accounted = 2 * stats.evaluations + stats.scalar_downloads + stats.vector_transfers;
      CHECK(stats.vector_transfers == 1);
      CHECK(transfers >= accounted);
      CHECK(transfers <= accounted + 16);
      // The minimiser's own downloads: g . p per line-search evaluation, and a few per iteration
      // (max |g_i|, |p|_max, g . p at the start, s . y, s . s, y . y).
      CHECK(stats.scalar_downloads <= stats.evaluations + 8L * r.iterations + 16);
      CHECK(transfers <= 3L * stats.evaluations + 8L * r.iterations + 32);
      if (run == 0) {
        first = r;
        first_positions = x;
      } else {
        CHECK(bitwise_equal(x, first_positions));
        CHECK(r.iterations == first.iterations);
        CHECK(r.final_energy == first.final_energy);
        CHECK(r.max_force_kj_per_mol_nm == first.max_force_kj_per_mol_nm);
      }
    }
  }
}

TEST_CASE("CUDA device minimiser on ala2_vacuum (CCMA only, and unconstrained) reaches the CPU's minimum") {
  for (const std::string constraints : {"hbonds", "none"}) {
    const Model m = system_model("ala2_vacuum", "  constraints: " + constraints + "\n");
    DynamicsSettings s = dynamics(IntegratorType::LangevinMiddle, 5, 1e-8);
    auto cpu = make_cpu_context(m.system, s);
    cpu->set_positions(m.positions_nm);
    const MinimizationResult a = cpu->minimize(1.0, 0);
    for (const bool dbl : {false, true}) {
      INFO(constraints << (dbl ? " double" : " mixed"));
      auto gpu = make_cuda_context(m.system, s, precision(dbl));
      gpu->set_positions(m.positions_nm);
      const MinimizationResult b = gpu->minimize(1.0, 0);
      const std::vector<Vec3d> x = gpu->state(StateRequest{}).positions_nm;
      CpuConstraints check(m.system, m.system.mass_amu);
      std::printf("[figure] ala2_vacuum (%s) minimisation, CUDA %s: %.4f -> %.4f kJ/mol (CPU %.4f), %d iterations (CPU "
                  "%d), max force %.3f\n",
                  constraints.c_str(), dbl ? "double" : "mixed", b.initial_energy, b.final_energy, a.final_energy,
                  b.iterations, a.iterations, b.max_force_kj_per_mol_nm);
      CHECK(a.converged);
      CHECK(b.converged);
      CHECK(b.max_force_kj_per_mol_nm < 1.0);
      CHECK(std::fabs(b.final_energy - a.final_energy) < 1e-3 * std::fabs(a.final_energy));
      CHECK(check.max_relative_deviation(x) <= 1e-8);
    }
  }
}

TEST_CASE("CUDA device minimiser on DHFR: time per iteration") {
  const RunConfig cfg = load_config(std::string(MDSIM_SOURCE_DIR) + "/configs/dhfr_benchmark.yaml");
  const Model model = build_model(cfg);
  const DynamicsSettings s = dynamics_settings(cfg);
  auto gpu = make_cuda_context(model.system, s, precision(false));
  gpu->set_positions(model.positions_nm);
  gpu->apply_constraints(s.integrator.constraint_tolerance);
  gpu->minimize(10.0, 5);  // warm-up: graph captures, allocations
  gpu->set_positions(model.positions_nm);
  gpu->apply_constraints(s.integrator.constraint_tolerance);
  const std::size_t before = cuda::transfer_count();
  const auto t0 = std::chrono::steady_clock::now();
  const MinimizationResult r = gpu->minimize(10.0, 100);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const long transfers = static_cast<long>(cuda::transfer_count() - before);
  const CudaMinimizationStats stats = cuda_minimization_stats(*gpu);
  std::printf("[figure] DHFR device minimisation (mixed): %.1f -> %.1f kJ/mol in %d iterations, %ld evaluations, "
              "%.2f ms per iteration, %ld host<->device copies\n",
              r.initial_energy, r.final_energy, r.iterations, stats.evaluations,
              1e3 * seconds / std::max(r.iterations, 1), transfers);
  CHECK(r.iterations > 0);
  CHECK(r.final_energy < r.initial_energy);
  CHECK(transfers <= 3L * stats.evaluations + 8L * r.iterations + 32);
}

TEST_CASE("NVE energy conservation on the CUDA context versus the CPU (Verlet 2 fs, HBonds + rigid water)") {
  const Model& m = water_model();
  const Minimised& minimised = cpu_minimised();
  Start start;
  {
    auto cpu = make_cpu_context(m.system, dynamics(IntegratorType::LangevinMiddle, 61, 1e-6));
    cpu->set_positions(minimised.positions);
    cpu->set_velocities_to_temperature(300.0, 0);
    const SimulationState st = cpu->state(StateRequest{true, true, false, false});
    start = {st.positions_nm, st.velocities_nm_per_ps};
  }
  const int steps = 1000, every = 5;  // 2 ps
  struct Run {
    double drift = 0, drift_error = 0, std_total = 0, mean_t = 0;
  };
  auto run = [&](Context& ctx) {
    load(ctx, start);
    const mdsim_test::EnergySeries r = mdsim_test::sample_total_energy(ctx, steps, every, 10);
    return Run{r.drift_kj_per_mol_ns, r.drift_error, r.std_total_kj_per_mol, r.mean_temperature_k};
  };
  const DynamicsSettings s = dynamics(IntegratorType::Verlet, 1, 1e-6);
  auto cpu_ctx = make_cpu_context(m.system, s);
  const Run cpu = run(*cpu_ctx);
  std::printf("[figure] NVE 2 ps CPU:          drift %8.1f +- %6.1f kJ/mol/ns, total-energy std %.3f kJ/mol, mean T %.1f K\n",
              cpu.drift, cpu.drift_error, cpu.std_total, cpu.mean_t);
  for (const bool dbl : {true, false}) {
    auto gpu_ctx = make_cuda_context(m.system, s, precision(dbl));
    const Run gpu = run(*gpu_ctx);
    std::printf("[figure] NVE 2 ps CUDA %-6s: drift %8.1f +- %6.1f kJ/mol/ns, total-energy std %.3f kJ/mol, mean T %.1f K\n",
                dbl ? "double" : "mixed", gpu.drift, gpu.drift_error, gpu.std_total, gpu.mean_t);
    INFO((dbl ? "double" : "mixed"));
    CHECK(std::fabs(gpu.drift - cpu.drift) <= 3.0 * std::hypot(gpu.drift_error, cpu.drift_error));
    CHECK(gpu.std_total < 2.0 * cpu.std_total);
    CHECK(gpu.std_total > 0.5 * cpu.std_total);
  }
}

TEST_CASE("DHFR speed on the CUDA context (ns/day)") {
  struct Bench {
    std::string label;
    RunConfig config;
  };
  const std::string dir = MDSIM_TEST_DATA_DIR;
  std::vector<Bench> benches;
  benches.push_back({"DHFR OpenMM benchmark (amber99sb/tip3p, PME 0.9, HBonds, HMR 1.5, LangevinMiddle 4 fs)",
                     load_config(std::string(MDSIM_SOURCE_DIR) + "/configs/dhfr_benchmark.yaml")});
  benches.push_back({"DHFR amber14/tip3p, PME 1.0, HBonds, rigid water, LangevinMiddle 2 fs",
                     parse_config("system:\n  pdb: " + dir + "/systems/dhfr.pdb\n"
                                  "  forcefield: [amber14-all.xml, amber14/tip3p.xml]\n  nonbonded_method: pme\n"
                                  "  cutoff: 1.0 nm\n  ewald_tolerance: 5.0e-4\n  constraints: hbonds\n"
                                  "  rigid_water: true\n"
                                  "integrator: {type: langevin_middle, temperature: 300 K, friction: 1/ps, "
                                  "timestep: 2 fs}\n",
                                  "dhfr_amber14.yaml", dir)});
  for (const Bench& b : benches) {
    const Model model = build_model(b.config);
    for (const bool dbl : {false, true}) {
      DynamicsSettings s = dynamics_settings(b.config);
      s.integrator.seed = 12345;
      auto gpu = make_cuda_context(model.system, s, precision(dbl));
      gpu->set_positions(model.positions_nm);
      gpu->apply_constraints(s.integrator.constraint_tolerance);
      gpu->set_velocities_to_temperature(300.0, 0);
      gpu->step(300);  // warm-up: sorts, list builds, graph captures
      gpu->state(StateRequest{true, false, false, false});
      const int steps = dbl ? 1000 : 3000;
      const auto t0 = std::chrono::steady_clock::now();
      gpu->step(steps);
      const SimulationState st = gpu->state(StateRequest{true, false, false, false});  // synchronises
      const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      const double ns_per_day = steps * s.integrator.timestep_ps * 1e-3 * 86400.0 / seconds;
      const SimulationState e = gpu->state(StateRequest{false, false, false, true});
      CpuConstraints check(model.system, model.system.mass_amu);
      const double deviation = check.max_relative_deviation(st.positions_nm);
      std::printf("[figure] %s, %s: %.1f ns/day (%.1f us/step over %d steps), T %.1f K, max constraint deviation "
                  "%.1e\n",
                  b.label.c_str(), dbl ? "double" : "mixed", ns_per_day, 1e6 * seconds / steps, steps,
                  e.temperature_k, deviation);
      INFO(b.label << (dbl ? " double" : " mixed"));
      CHECK(deviation <= s.integrator.constraint_tolerance * (1.0 + 1e-9));
      CHECK(e.temperature_k > 250.0);
      CHECK(e.temperature_k < 350.0);
    }
    // The force evaluation alone, for the split between forces and integration.
    CudaForceEvaluator evaluator(model.system, precision(false));
    evaluator.set_positions(model.positions_nm);
    const CudaTimings t = evaluator.benchmark(200);
    std::printf("[figure] %s: force evaluation alone (mixed) %.1f us\n", b.label.c_str(), t.total_us);
  }
}

TEST_CASE("CUDA: a blown-up simulation ends in the instability error at the next synchronisation, not a crash") {
  // One water oxygen of ala2_water (PME) given 1e10 or 1e300 nm/ps: its next position is ~1e7 or ~1e297 nm
  // away (the latter infinite in float). The neighbour list flags it (physics/stability.hpp) and
  // state() throws, as the CPU platform does at the step; compute-sanitizer memcheck runs this too (no
  // out-of-range cell, tile or PME grid index).
  const Model m = system_model("ala2_water", "  cutoff: 1.0 nm\n  constraints: none\n  rigid_water: false\n");
  for (const auto& [dbl, speed] : {std::pair{false, 1e10}, std::pair{false, 1e300}, std::pair{true, 1e10},
                                   std::pair{true, 1e300}}) {
    INFO((dbl ? "double " : "mixed ") << speed);
    auto gpu = make_cuda_context(m.system, dynamics(IntegratorType::LangevinMiddle, 5, 1e-6), precision(dbl));
    gpu->set_positions(m.positions_nm);
    std::vector<Vec3d> v(m.positions_nm.size(), Vec3d(0, 0, 0));
    v[40] = Vec3d(speed, -speed, speed);
    gpu->set_velocities(v);
    std::string message;
    try {
      gpu->step(20);
      StateRequest energy;
      energy.energy = true;
      gpu->state(energy);
    } catch (const RuntimeError& e) {
      message = e.what();
    }
    CHECK(message.find("the simulation became unstable") != std::string::npos);
  }
}

TEST_CASE("CUDA: overlapping atoms (a structure not minimised) end in the instability error, not a crash") {
  // A water hydrogen of ala2_water put 1e-4 nm from another water's oxygen, with HBonds and rigid water (SETTLE and
  // CCMA): the force is ~1e15 kJ/mol/nm and the next positions are NaN. Before the fix, PME's gather read the grid at
  // a negative index (NaN converted to INT_MIN) and the run died of cudaErrorIllegalAddress.
  const Model m = system_model("ala2_water", "  cutoff: 1.0 nm\n  constraints: hbonds\n  rigid_water: true\n");
  for (const bool dbl : {false, true}) {
    INFO((dbl ? "double" : "mixed") << " precision");
    auto gpu = make_cuda_context(m.system, dynamics(IntegratorType::LangevinMiddle, 5, 1e-6), precision(dbl));
    std::vector<Vec3d> x = m.positions_nm;
    x[23] = x[25] + Vec3d(1e-4, 0, 0);  // atom 23: the first water's H1; atom 25: the second water's O
    gpu->set_positions(x);
    std::string message;
    try {
      for (int k = 0; k < 10; ++k) gpu->step(10);
      StateRequest energy;
      energy.energy = true;
      gpu->state(energy);
    } catch (const RuntimeError& e) {
      message = e.what();
    }
    CHECK(message.find("the simulation became unstable") != std::string::npos);
  }
}
