// Position restraints on the CUDA platform (restraint_kernels.cuh through physics/restraint.hpp)
// against the CPU platform (tests/kernels/cpu/test_cpu_restraints.cpp checks the CPU against OpenMM and finite
// differences), in mixed and double precision (the restraint itself is double in both):
//  - energy and forces equal the CPU's in ala2_water's box and in a triclinic box, atoms across the
//    boundary and more than half a box from their reference (tests/data/restraint_reference.json),
//    energy to 1e-9 relative, forces to the fixed-point resolution;
//  - force constants per axis (GROMACS's [position_restraints]) and an atom in two entries: the same;
//  - restraints set, replaced and removed between evaluations and between steps take effect (the
//    captured graphs are recaptured); a step launches one kernel more with restraints and the same
//    kernels as before once they are removed;
//  - 20 restrained steps with Monte Carlo barostat moves follow the CPU step for step (double), and
//    stay close to it in mixed precision;
//  - a minimisation reaches the analytic minimum of a bond between two restrained atoms across the
//    box, and on ala2_water the CPU's restrained minimum;
//  - the restraint validation: a restrained 100 ps NVT of DHFR keeps the restrained heavy atoms within
//    0.05 nm RMS of their reference (k = 2500 kJ/mol/nm², see tests/validation/test_restrained_nvt.cpp
//    for why not 1000; the RMS at 1000 is printed too).
// Figures are printed with the prefix [figure].
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "engine/model.hpp"
#include "io/atom_selection.hpp"
#include "io/config.hpp"
#include "kernels/cpu/cpu_context.hpp"
#include "kernels/cpu/cpu_forces.hpp"
#include "kernels/cuda/cuda_context.hpp"
#include "physics/integrator_steps.hpp"
#include "platform/context.hpp"
#include "support/catch.hpp"
#include "support/dynamics_settings.hpp"
#include "support/reference_data.hpp"
#include "support/reference_systems.hpp"
#include "support/restraint_fixtures.hpp"
#include "support/vectors.hpp"

using namespace mdsim;
using mdsim_test::langevin;
using mdsim_test::box_from;
using mdsim_test::Json;
using mdsim_test::max_difference;
using mdsim::test::system_model;

namespace {

const Model& flexible_water() {  // the shared reference settings: PME 1.0 nm, no constraints
  static const Model m = test::reference_model("ala2_water");
  return m;
}

const Model& rigid_water() {  // PME 1.0 nm, HBonds + rigid water
  static const Model m = system_model("ala2_water", "  cutoff: 1.0 nm\n  constraints: hbonds\n  rigid_water: true\n");
  return m;
}

CudaOptions precision(bool double_precision) {
  CudaOptions o;
  o.double_precision = double_precision;
  return o;
}

const char* label(bool dbl) { return dbl ? "double" : "mixed"; }

double relative(double a, double b) { return std::fabs(a - b) / std::max(std::fabs(b), 1e-30); }

// A periodic case of the reference file with the roles swapped for a context at the PDB positions: the
// restrained atoms' references are where the file moved them (across the boundary, more than half a box).
struct Case {
  std::string name;
  Boxd box{};
  PositionRestraints restraints;
};

std::vector<Case> periodic_cases() {
  static const Json j = mdsim_test::read_json(std::string(MDSIM_SOURCE_DIR) + "/tests/data/restraint_reference.json");
  std::vector<Case> out;
  for (const Json& c : j["cases"].array) {
    if (c["box"].is_null()) continue;
    Case k;
    k.name = c["name"].string;
    k.box = box_from(c["box"]);
    for (const Json& a : c["atoms"].array) k.restraints.atoms.push_back(static_cast<int>(a.num()));
    k.restraints.reference_nm = mdsim_test::json_vec3_list(c["positions"]);
    k.restraints.set_isotropic_k(c["k"].num());
    out.push_back(k);
  }
  return out;
}

// The restraint term alone on the CPU platform at `x` in `box` (energy; forces into f).
double cpu_restraint(const System& system, const PositionRestraints& r, const std::vector<Vec3d>& x, const Boxd& box,
                     std::vector<Vec3d>* f) {
  CpuForceEvaluator evaluator(system);
  evaluator.set_box(box);
  evaluator.set_position_restraints(r);
  return evaluator.compute(x, f, kTermRestraint).restraint;
}

// Heavy atoms of the protein restrained to `positions` moved by a deterministic pattern of up to 0.03 nm.
PositionRestraints heavy_atom_restraints(const Model& m, const std::vector<Vec3d>& positions, double k) {
  PositionRestraints r;
  r.atoms = select_atoms(m.topology, "protein and heavy");
  for (int a : r.atoms)
    r.reference_nm.push_back(positions[static_cast<std::size_t>(a)] +
                             Vec3d(0.03 * std::sin(1.3 * a), 0.03 * std::cos(0.7 * a), 0.03 * std::sin(2.1 * a + 0.5)));
  r.set_isotropic_k(k);
  return r;
}

StateRequest energy_and_forces() { return StateRequest{true, false, true, true}; }

}  // namespace

TEST_CASE("CUDA restraint energy and forces equal the CPU platform's") {
  const Model& m = flexible_water();
  for (const Case& c : periodic_cases()) {
    std::vector<Vec3d> f_cpu;
    const double e_cpu = cpu_restraint(m.system, c.restraints, m.positions_nm, c.box, &f_cpu);
    for (const bool dbl : {false, true}) {
      INFO(c.name << ", " << label(dbl));
      auto gpu = make_cuda_context(m.system, langevin(5, 0.001, 1e-6), precision(dbl));
      gpu->set_positions(m.positions_nm);
      gpu->set_box(c.box);
      const SimulationState plain = gpu->state(energy_and_forces());
      gpu->set_position_restraints(c.restraints);
      const SimulationState restrained = gpu->state(energy_and_forces());
      // The restraint forces are what the restraints add to the others: the fixed-point sums resolve 2.3e-10
      // kJ/mol/nm, and a total above 2^53 of those units (the PDB positions in the triclinic box bring
      // images within 0.1 nm) converts to double with a spacing of 2^-52 of itself.
      double worst = 0.0;
      for (std::size_t i = 0; i < f_cpu.size(); ++i) {
        const double resolution = std::max(norm(f_cpu[i]), 1.0) + 1e-5 * norm(plain.forces_kj_per_mol_nm[i]);
        worst = std::max(worst, norm(restrained.forces_kj_per_mol_nm[i] - plain.forces_kj_per_mol_nm[i] - f_cpu[i]) /
                                    resolution);
      }
      std::printf("[figure] CUDA %s restraint, %s box: energy %.6f vs CPU %.6f kJ/mol (relative %.1e), worst force "
                  "error %.1e relative\n",
                  label(dbl), c.name.c_str(), restrained.potential.restraint, e_cpu,
                  relative(restrained.potential.restraint, e_cpu), worst);
      CHECK(plain.potential.restraint == 0.0);
      CHECK(relative(restrained.potential.restraint, e_cpu) < 1e-9);
      CHECK(worst < 1e-9);  // fixed point: 2.3e-10 kJ/mol/nm per sum
      CHECK(restrained.potential.nonbonded == plain.potential.nonbonded);
      CHECK(relative(restrained.potential.total, plain.potential.total + restrained.potential.restraint) < 1e-12);
    }
  }
}

TEST_CASE("CUDA per-axis restraints and an atom in two entries equal the CPU platform's") {
  const Model& m = flexible_water();
  for (const Case& base : periodic_cases()) {
    PositionRestraints r = base.restraints;
    for (std::size_t e = 0; e < r.atoms.size(); ++e)
      r.k_kj_per_mol_nm2[e] = Vec3d(300.0 + 10.0 * static_cast<double>(e), 1700.0, 50.0 * static_cast<double>(e % 3));
    r.add(r.atoms[0], r.reference_nm[0] + Vec3d(0.05, -0.1, 0.02), Vec3d(400.0, 0.0, 900.0));  // a second spring
    std::vector<Vec3d> f_cpu;
    const double e_cpu = cpu_restraint(m.system, r, m.positions_nm, base.box, &f_cpu);
    for (const bool dbl : {false, true}) {
      INFO(base.name << ", " << label(dbl));
      auto gpu = make_cuda_context(m.system, langevin(5, 0.001, 1e-6), precision(dbl));
      gpu->set_positions(m.positions_nm);
      gpu->set_box(base.box);
      const SimulationState plain = gpu->state(energy_and_forces());
      gpu->set_position_restraints(r);
      const SimulationState restrained = gpu->state(energy_and_forces());
      double worst = 0.0;  // as in the isotropic case above: relative to the fixed-point resolution
      for (std::size_t i = 0; i < f_cpu.size(); ++i) {
        const double resolution = std::max(norm(f_cpu[i]), 1.0) + 1e-5 * norm(plain.forces_kj_per_mol_nm[i]);
        worst = std::max(worst, norm(restrained.forces_kj_per_mol_nm[i] - plain.forces_kj_per_mol_nm[i] - f_cpu[i]) /
                                    resolution);
      }
      std::printf("[figure] CUDA %s per-axis restraint, %s box: energy %.6f vs CPU %.6f kJ/mol, worst force error "
                  "%.1e relative\n",
                  label(dbl), base.name.c_str(), restrained.potential.restraint, e_cpu, worst);
      CHECK(relative(restrained.potential.restraint, e_cpu) < 1e-9);
      CHECK(worst < 1e-9);
    }
  }
}

TEST_CASE("CUDA restraints set, replaced and removed between evaluations and steps take effect") {
  const Model& m = rigid_water();
  for (const bool dbl : {false, true}) {
    INFO(label(dbl));
    auto gpu = make_cuda_context(m.system, langevin(11, 0.002, 1e-6), precision(dbl));
    gpu->set_positions(m.positions_nm);
    gpu->apply_constraints(1e-6);
    gpu->set_velocities_to_temperature(300.0, 0);
    gpu->step(5);  // the graphs captured without restraints
    const CudaStepLaunches without = cuda_step_launches(*gpu);
    const SimulationState s0 = gpu->state(energy_and_forces());
    const Boxd box = *m.system.box;

    // A: the protein's heavy atoms.
    const PositionRestraints a = heavy_atom_restraints(m, s0.positions_nm, 2500.0);
    gpu->set_position_restraints(a);
    const SimulationState s1 = gpu->state(energy_and_forces());
    std::vector<Vec3d> fa;
    CHECK(relative(s1.potential.restraint, cpu_restraint(m.system, a, s1.positions_nm, box, &fa)) < 1e-9);
    CHECK(max_difference(s1.positions_nm, s0.positions_nm) == 0.0);
    for (std::size_t i = 0; i < fa.size(); ++i)
      CHECK(norm(s1.forces_kj_per_mol_nm[i] - s0.forces_kj_per_mol_nm[i] - fa[i]) < 1e-8 * std::max(norm(fa[i]), 1.0));
    gpu->step(5);
    const CudaStepLaunches with_a = cuda_step_launches(*gpu);
    CHECK(with_a.kernels == without.kernels + 1);
    const SimulationState s2 = gpu->state(energy_and_forces());
    CHECK(relative(s2.potential.restraint, cpu_restraint(m.system, a, s2.positions_nm, box, nullptr)) < 1e-9);

    // B: other atoms (every fifth water oxygen too), another k, at the same positions.
    PositionRestraints b = heavy_atom_restraints(m, s2.positions_nm, 700.0);
    for (int i = 22; i < m.system.num_particles(); i += 15)
      b.add(i, s2.positions_nm[static_cast<std::size_t>(i)] + Vec3d(0.05, -0.02, 0.01), Vec3d(700.0, 700.0, 700.0));
    gpu->set_position_restraints(b);
    const SimulationState s3 = gpu->state(energy_and_forces());
    std::vector<Vec3d> fb;
    CHECK(relative(s3.potential.restraint, cpu_restraint(m.system, b, s3.positions_nm, box, &fb)) < 1e-9);
    std::vector<Vec3d> fa_here;
    cpu_restraint(m.system, a, s2.positions_nm, box, &fa_here);
    for (std::size_t i = 0; i < fb.size(); ++i) {
      const Vec3d expected = fb[i] - fa_here[i];  // B's restraint forces replace A's
      CHECK(norm(s3.forces_kj_per_mol_nm[i] - s2.forces_kj_per_mol_nm[i] - expected) <
            1e-8 * std::max(norm(expected), 1.0));
    }
    gpu->step(5);
    const SimulationState s4 = gpu->state(energy_and_forces());
    CHECK(relative(s4.potential.restraint, cpu_restraint(m.system, b, s4.positions_nm, box, nullptr)) < 1e-9);
    CHECK(cuda_step_launches(*gpu).kernels == without.kernels + 1);

    // Removed: no restraint energy, and a step launches what it did before restraints were set.
    gpu->set_position_restraints(PositionRestraints{});
    CHECK(gpu->state(energy_and_forces()).potential.restraint == 0.0);
    gpu->step(5);
    const CudaStepLaunches removed = cuda_step_launches(*gpu);
    CHECK(removed.kernels == without.kernels);
    CHECK(removed.graphs == without.graphs);
    CHECK(removed.separate_kernels == without.separate_kernels);
    CHECK(gpu->state(energy_and_forces()).potential.restraint == 0.0);
    std::printf("[figure] CUDA %s step kernels: %d without restraints, %d with, %d after removing them\n", label(dbl),
                without.kernels, with_a.kernels, removed.kernels);
  }
}

TEST_CASE("CUDA restrained steps with barostat moves follow the CPU context") {
  // Double: step for step with the CPU (moves every step at 1000 bar: the restraint energy enters every
  // acceptance, the references stay unscaled); mixed: within 1e-4 nm after 20 steps, as the
  // unrestrained dynamics test allows.
  const Model& m = rigid_water();
  auto start = make_cpu_context(m.system, langevin(23, 0.002, 1e-12));
  start->set_positions(m.positions_nm);
  start->apply_constraints(1e-12);
  start->set_velocities_to_temperature(300.0, 0);
  const SimulationState s0 = start->state(StateRequest{true, true, false, false});
  const PositionRestraints r = heavy_atom_restraints(m, s0.positions_nm, 2500.0);
  for (const bool dbl : {true, false}) {
    INFO(label(dbl));
    DynamicsSettings s = langevin(77, 0.002, dbl ? 1e-10 : 1e-6);
    if (dbl) s.barostat = BarostatConfig{1000.0, 300.0, 1};
    auto cpu = make_cpu_context(m.system, s);
    auto gpu = make_cuda_context(m.system, s, precision(dbl));
    for (Context* c : {cpu.get(), gpu.get()}) {
      c->set_positions(s0.positions_nm);
      c->set_velocities(s0.velocities_nm_per_ps);
      c->set_position_restraints(r);
      c->step(20);
    }
    const SimulationState a = cpu->state(StateRequest{true, false, false, true});
    const SimulationState b = gpu->state(StateRequest{true, false, false, true});
    const double dx = max_difference(a.positions_nm, b.positions_nm);
    std::printf("[figure] CUDA %s restrained dynamics vs CPU, 20 steps%s: max |dx| %.2e nm, restraint %.9f vs %.9f "
                "kJ/mol, volume %.9f vs %.9f nm^3\n",
                label(dbl), dbl ? " with a move every step" : "", dx, b.potential.restraint, a.potential.restraint,
                b.box.volume(), a.box.volume());
    if (dbl) {
      const std::vector<double> ba = cpu->barostat_state(), bb = gpu->barostat_state();
      REQUIRE(ba.size() == 5);
      REQUIRE(bb.size() == 5);
      CHECK(ba[4] > 0.0);  // some move was accepted
      CHECK(ba[4] == bb[4]);
      CHECK(relative(b.box.volume(), a.box.volume()) < 1e-12);
      CHECK(dx < 1e-8);
      CHECK(relative(b.potential.restraint, a.potential.restraint) < 1e-7);
    } else {
      CHECK(dx < 1e-4);
    }
  }
}

TEST_CASE("CUDA minimisation with restraints: the analytic minimum across the box, and the CPU's on ala2_water") {
  // As in tests/kernels/cpu/test_cpu_restraints.cpp (support/restraint_fixtures.hpp): the minimum is a bond of
  // r_min centred on x = 0.
  const mdsim_test::RestrainedPair pair;
  const double r_min = pair.r_min;
  for (const bool dbl : {true, false}) {
    INFO(label(dbl));
    DynamicsSettings settings = langevin(3, 0.001, 1e-6);
    settings.remove_cm_motion = false;
    auto gpu = make_cuda_context(pair.system, settings, precision(dbl));
    gpu->set_positions(pair.start);
    gpu->set_position_restraints(pair.restraints);
    // Mixed precision evaluates the bond in float: forces carry ~1e-4 kJ/mol/nm of rounding.
    const MinimizationResult result = gpu->minimize(dbl ? 1e-5 : 1e-2, 0);
    const SimulationState st = gpu->state(StateRequest{true, false, false, true});
    // Stopping at |F| < tolerance leaves the atoms up to tolerance / kb from the minimum: 5e-10 nm in
    // double, 5e-7 nm in mixed.
    const double bound = dbl ? 1e-8 : 2e-5;
    std::printf("[figure] CUDA %s restrained two-atom minimum: r %.10f nm (analytic %.10f), atom 0 at x = %.10f\n",
                label(dbl), norm(st.positions_nm[1] - st.positions_nm[0]), r_min, st.positions_nm[0].x);
    CHECK(result.converged);
    CHECK(norm(st.positions_nm[1] - st.positions_nm[0]) == Catch::Approx(r_min).epsilon(bound));
    CHECK(st.positions_nm[0].x == Catch::Approx(-0.5 * r_min).epsilon(bound));
    CHECK(st.potential.restraint == Catch::Approx(pair.restraint_energy).epsilon(100 * bound));
  }

  // ala2_water (HBonds + rigid water), the protein's heavy atoms restrained near the PDB positions.
  const Model& m = rigid_water();
  const PositionRestraints r = heavy_atom_restraints(m, m.positions_nm, 2500.0);
  auto cpu = make_cpu_context(m.system, langevin(3, 0.002, 1e-6));
  cpu->set_positions(m.positions_nm);
  cpu->apply_constraints(1e-6);
  cpu->set_position_restraints(r);
  const MinimizationResult ref = cpu->minimize(10.0, 0);
  const double ref_restraint = cpu->state(StateRequest{false, false, false, true}).potential.restraint;
  for (const bool dbl : {false, true}) {
    INFO(label(dbl));
    auto gpu = make_cuda_context(m.system, langevin(3, 0.002, 1e-6), precision(dbl));
    gpu->set_positions(m.positions_nm);
    gpu->apply_constraints(1e-6);
    gpu->set_position_restraints(r);
    const MinimizationResult res = gpu->minimize(10.0, 0);
    const SimulationState st = gpu->state(StateRequest{true, false, false, true});
    std::printf("[figure] CUDA %s restrained minimisation of ala2_water: %.3f -> %.3f kJ/mol (CPU %.3f -> %.3f), "
                "restraint %.3f (CPU %.3f), %d iterations (CPU %d)\n",
                label(dbl), res.initial_energy, res.final_energy, ref.initial_energy, ref.final_energy,
                st.potential.restraint, ref_restraint, res.iterations, ref.iterations);
    CHECK(res.converged);
    CHECK(relative(res.initial_energy, ref.initial_energy) < 1e-5);
    CHECK(relative(res.final_energy, ref.final_energy) < 0.01);
    CHECK(st.potential.total == Catch::Approx(res.final_energy).epsilon(1e-9));
    CHECK(st.potential.restraint > 0.0);
  }
}

TEST_CASE("a restrained 100 ps NVT of DHFR keeps the restrained heavy atoms within 0.05 nm RMS") {
  // DHFR (amber14/tip3p, PME 1.0 nm, HBonds + rigid water), mixed precision: the protein's heavy atoms
  // restrained to their PDB positions, minimised with the restraints, then LangevinMiddle 300 K, 1/ps,
  // 2 fs for 100 ps, the displacements sampled every 0.5 ps; RMS := sqrt(mean over samples and atoms of
  // |x − x0|²). k = 2500 kJ/mol/nm² must keep it below 0.05 nm; 1000 (the common equilibration value) is
  // run too and reported: with bonds and angles far stiffer than the restraints about one degree of
  // freedom per atom is left to them, RMS ≈ sqrt(kT / k) = 0.050 nm at 1000 before the static offset.
  const Model m = system_model("dhfr", "  forcefield: [amber14-all.xml, amber14/tip3p.xml]\n  cutoff: 1.0 nm\n"
                                     "  constraints: hbonds\n  rigid_water: true\n");
  PositionRestraints r;
  r.atoms = select_atoms(m.topology, "protein and heavy");
  for (int a : r.atoms) r.reference_nm.push_back(m.positions_nm[static_cast<std::size_t>(a)]);
  double rms_at[2] = {0.0, 0.0};
  const double stiffness[2] = {2500.0, 1000.0};
  for (int run = 0; run < 2; ++run) {
    r.set_isotropic_k(stiffness[run]);
    auto gpu = make_cuda_context(m.system, langevin(2024, 0.002, 1e-6), precision(false));
    gpu->set_positions(m.positions_nm);
    gpu->apply_constraints(1e-6);
    gpu->set_position_restraints(r);
    gpu->minimize(10.0, 0);
    gpu->set_velocities_to_temperature(300.0, 0);
    const auto t0 = std::chrono::steady_clock::now();
    double sum_squares = 0.0, worst = 0.0, temperature = 0.0;
    int samples = 0;
    for (int done = 0; done < 50000; done += 250) {
      gpu->step(250);
      const SimulationState s = gpu->state(StateRequest{true, false, false, true});
      double sum = 0.0;
      for (std::size_t k = 0; k < r.atoms.size(); ++k) {
        const Vec3d d = s.box.minimum_image(s.positions_nm[static_cast<std::size_t>(r.atoms[k])] - r.reference_nm[k]);
        sum += dot(d, d);
      }
      const double rms = std::sqrt(sum / static_cast<double>(r.atoms.size()));
      sum_squares += rms * rms;
      worst = std::max(worst, rms);
      temperature += s.temperature_k;
      ++samples;
    }
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    rms_at[run] = std::sqrt(sum_squares / samples);
    std::printf("[figure] restrained NVT, DHFR CUDA mixed, %zu heavy atoms, k = %.0f kJ/mol/nm^2, 100 ps: RMS "
                "displacement %.4f nm (largest sample %.4f), sqrt(kT/k) %.4f nm, mean T %.1f K (%.1f s)\n",
                r.atoms.size(), stiffness[run], rms_at[run], worst,
                std::sqrt(kBoltzmannKjPerMolK * 300.0 / stiffness[run]), temperature / samples, seconds);
    CHECK(temperature / samples > 290.0);
    CHECK(temperature / samples < 310.0);
  }
  CHECK(rms_at[0] < 0.05);
  CHECK(rms_at[1] > rms_at[0]);  // softer restraints, larger excursions
}
