// Virtual sites on the CUDA platform against the CPU reference, on alanine dipeptide in TIP4P-Ew water (749
// ThreeParticleAverageSites; tests/data/make_system_xml_tip4pew.py): energies by term within 1e-5 relative and forces
// within 1e-5 relative RMS in both precision modes (getState's convention on both: a site's row keeps the force on the
// site), the sites placed by the evaluation itself; a few CUDA Verlet steps keep the sites placed and the energy, and
// agree with the CPU's; with rigid waters, the fused LangevinMiddle step (which places the waters' sites and spreads
// their forces itself) follows the stage-by-stage kernels.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "kernels/cpu/cpu_context.hpp"
#include "kernels/cpu/cpu_forces.hpp"
#include "kernels/cuda/cuda_context.hpp"
#include "kernels/cuda/cuda_forces.hpp"
#include "platform/virtual_sites.hpp"
#include "support/catch.hpp"
#include "support/dynamics_settings.hpp"
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

// The TIP4P-Ew case with rigid waters: each site's three parents (the heaviest the oxygen) constrained to
// TIP4P-Ew's geometry and made a SETTLE water.
System rigid_tip4pew(System s) {
  for (const VirtualSite& v : s.virtual_sites) {
    int o = v.parents[0], h1 = v.parents[1], h2 = v.parents[2];
    if (s.mass_amu[static_cast<std::size_t>(h1)] > s.mass_amu[static_cast<std::size_t>(o)]) std::swap(o, h1);
    if (s.mass_amu[static_cast<std::size_t>(h2)] > s.mass_amu[static_cast<std::size_t>(o)]) std::swap(o, h2);
    const double oh = 0.09572, hh = 0.15139;  // nm, amber14/tip4pew.xml
    s.constraints.push_back({o, h1, oh});
    s.constraints.push_back({o, h2, oh});
    s.constraints.push_back({h1, h2, hh});
    s.rigid_waters.push_back({o, std::min(h1, h2), std::max(h1, h2), oh, hh});
  }
  return s;
}

}  // namespace

TEST_CASE("TIP4P-Ew with virtual sites: CUDA energies and forces equal the CPU's") {
  // Flexible waters as serialized, and the same made rigid: with PME the CUDA exceptions kernel then takes each
  // water's charged triple (site, H1, H2: the oxygen has no charge) in its water blocks, and leaves out the oxygen's
  // exclusions, which add nothing.
  for (const bool rigid : {false, true}) {
    const System s = rigid ? rigid_tip4pew(mdsim_test::tip4pew_system()) : mdsim_test::tip4pew_system();
    const std::vector<Vec3d> x = mdsim_test::with_sites_displaced(s, mdsim_test::tip4pew_positions());
    std::vector<Vec3d> cpu_forces;
    const EnergyTerms cpu = cpu_compute(s, x, &cpu_forces);
    for (const bool double_precision : {false, true}) {
      INFO((rigid ? "rigid" : "flexible") << " waters, " << (double_precision ? "double" : "mixed") << " precision");
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
}

TEST_CASE("TIP4P-Ew's class-sorted tile list (oxygens in blocks of their own) has fewer tiles and the same sums") {
  // The oxygens (uncharged, LJ only) get blocks of their own, and the list leaves out their pairs with the hydrogens
  // and charge sites (no LJ): exactly zero terms. What may differ is how the sums are grouped into tiles (below).
  // Both searches (the all-pairs block scan, and the column search with the oxygens' coarser columns), from OpenMM's
  // positions and after moves that take blocks out of their columns.
  const System s = mdsim_test::tip4pew_system();
  const std::vector<Vec3d> x = mdsim_test::tip4pew_positions();
  const Boxd box = *s.box;
  for (const bool double_precision : {false, true}) {
    for (const int column_search_min_blocks : {2048, 0}) {
      const char* search = column_search_min_blocks == 0 ? "column search" : "block scan";
      INFO((double_precision ? "double" : "mixed") << " precision, " << search);
      CudaOptions sorted;
      sorted.double_precision = double_precision;
      sorted.column_search_min_blocks = column_search_min_blocks;
      sorted.reorder_interval = 1000000;  // the moves below drift the atoms out of their columns
      CudaOptions plain = sorted;
      plain.pair_classes = false;
      CudaForceEvaluator a(s, plain), b(s, sorted);
      // The first evaluation sorts; later ones see positions as an integrator would leave them (no re-sort).
      const auto evaluate = [](CudaForceEvaluator& e, const std::vector<Vec3d>& y, bool first, std::vector<Vec3d>& f) {
        if (first) e.set_positions(y);
        else e.update_positions(y);
        e.compute(true);
        f = e.forces();
        return e.energies();
      };
      std::vector<Vec3d> y = x;
      for (int move = 0; move < 3; ++move) {
        INFO("move " << move);
        std::vector<Vec3d> fa, fb;
        const EnergyTerms ea = evaluate(a, y, move == 0, fa), eb = evaluate(b, y, move == 0, fb);
        const double rms = mdsim_test::relative_rms_difference(fb, fa);
        const double direct_difference = std::fabs(eb.nonbonded_direct - ea.nonbonded_direct);
        std::printf("TIP4P-Ew %s, %s, move %d: %d tiles class-sorted against %d; direct energy %.3e kJ/mol apart "
                    "(total rel %.1e), forces rel RMS %.1e\n",
                    double_precision ? "double" : "mixed", search, move, b.num_tiles(), a.num_tiles(),
                    direct_difference, std::fabs(eb.total - ea.total) / std::fabs(ea.total), rms);
        CHECK(b.num_tiles() < a.num_tiles() * 0.9);
        // Double: the pair terms are the same; each tile's energy goes to 64-bit fixed point (2^-32 kJ/mol) on its
        // own, and each tile's share of an atom's force too, and those roundings differ between the lists. Mixed:
        // also a tile imaged once next to its block's centre rounds the shifted float coordinates again, which
        // depends on the blocks (docs/PERFORMANCE.md, issue 38's third session: ~1e-9 relative at most).
        const double fixed_point_bound = (a.num_tiles() + b.num_tiles()) * std::ldexp(1.0, -32);
        const double pair_bound = (double_precision ? 1e-12 : 1e-9) * std::fabs(ea.nonbonded_direct);
        CHECK(direct_difference <= fixed_point_bound + pair_bound);
        CHECK(rms <= (double_precision ? 1e-10 : 1e-6));
        // A translation plus a shear of up to 0.25 nm (one wave per box length), a new phase each move.
        for (Vec3d& p : y) {
          const double phase = 1.3 * move;
          const Vec3d shear(std::sin(2.0 * M_PI * p.y / box.b.y + phase), std::sin(2.0 * M_PI * p.z / box.c.z + phase),
                            std::sin(2.0 * M_PI * p.x / box.a.x + phase));
          p += Vec3d(0.05, 0.1, 0.15) + shear * 0.1;
        }
        place_virtual_sites(s, y);
      }
    }
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

TEST_CASE("TIP4P-Ew rigid waters: the fused LangevinMiddle step places and spreads the sites as the staged kernels do") {
  // The fused step's SETTLE kernel places each water's site after the step and, after a steady evaluation (which
  // leaves those sites to it), spreads the site's force onto the water (CudaForceEvaluator::leave_sites_to_steps);
  // the stage-by-stage kernels leave both to every evaluation. Mixed precision, 2 fs, from OpenMM's positions with
  // the constraints applied: after 40 steps (steady evaluations and list rebuilds both) positions and velocities
  // agree to rounding, as in test_cuda_context's fused-step test. A spread missed or made twice would move the
  // waters by 1e-4 nm or more; a site left unplaced shows in its row.
  const System s = rigid_tip4pew(mdsim_test::tip4pew_system());
  const DynamicsSettings settings = mdsim_test::langevin(21);
  CudaOptions staged;
  staged.fuse_langevin_step = false;
  auto fused = make_cuda_context(s, settings, CudaOptions{});
  auto reference = make_cuda_context(s, settings, staged);
  for (auto* ctx : {fused.get(), reference.get()}) {
    ctx->set_positions(mdsim_test::tip4pew_positions());
    ctx->apply_constraints(1e-6);
    ctx->set_velocities_to_temperature(300.0, 5);
  }
  const StateRequest all{true, true, true, true};
  for (int block = 0; block < 4; ++block) {
    fused->step(10);
    reference->step(10);
    const SimulationState a = fused->state(all), b = reference->state(all);
    const double dx = mdsim_test::max_abs_difference(a.positions_nm, b.positions_nm);
    const double dv = mdsim_test::max_abs_difference(a.velocities_nm_per_ps, b.velocities_nm_per_ps);
    std::printf("[figure] TIP4P-Ew fused vs stage-by-stage LangevinMiddle, %d steps: max |dx| %.2e nm, max |dv| %.2e "
                "nm/ps\n",
                10 * (block + 1), dx, dv);
    INFO("after " << 10 * (block + 1) << " steps");
    CHECK(max_site_misplacement(s, a.positions_nm) <= 1e-12);
    for (const VirtualSite& v : s.virtual_sites) CHECK(norm(a.velocities_nm_per_ps[static_cast<std::size_t>(v.particle)]) == 0.0);
    CHECK(dx < 1e-10);
    CHECK(dv < 1e-7);
    CHECK(std::fabs(a.potential.total - b.potential.total) <= 1e-6 * std::fabs(b.potential.total));
  }
  CHECK(cuda_step_launches(*fused).steps_per_graph > 1);  // steady evaluations in the step graphs
}
