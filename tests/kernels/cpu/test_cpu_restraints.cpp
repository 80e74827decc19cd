// Position restraints on the CPU platform (physics/restraint.hpp, CpuForceEvaluator and
// CpuContext::set_position_restraints):
//  - equal to OpenMM 7.7's CustomExternalForce("0.5*k*periodicdistance(x,y,z,x0,y0,z0)^2") on its
//    Reference platform (tests/data/restraint_reference.json, made by make_restraint_reference.py) in
//    ala2_water's box and in a triclinic box, atoms pushed across the boundary and more than half a box
//    from their reference, and the plain-difference expression in vacuum: energy and forces to 1e-9
//    relative (the issue asks for 1e-6);
//  - forces equal minus the central finite-difference gradient of the energy, in both boxes;
//  - in the context: the restraint term adds to the total and its forces to the others'; replaced and
//    removed restraints take effect; a minimisation reaches the analytic minimum of a bond between two
//    restrained atoms whose references lie on opposite faces of the box; Monte Carlo barostat moves
//    leave the reference points where they were (as OpenMM);
//  - force constants per axis (GROMACS's [position_restraints]) and an atom in two entries: energy and forces
//    equal the sum of the springs written out, and minus the finite-difference gradient;
//  - every check of check_position_restraints refuses its input with a message naming the entry.
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "common/errors.hpp"
#include "engine/model.hpp"
#include "io/atom_selection.hpp"
#include "io/config.hpp"
#include "kernels/cpu/cpu_context.hpp"
#include "kernels/cpu/cpu_forces.hpp"
#include "physics/restraint.hpp"
#include "platform/context.hpp"
#include "support/catch.hpp"
#include "support/dynamics_settings.hpp"
#include "support/reference_data.hpp"
#include "support/reference_systems.hpp"
#include "support/restraint_fixtures.hpp"
#include "support/thrown.hpp"

using namespace mdsim;
using mdsim_test::box_from;
using mdsim_test::input_error_of;
using mdsim_test::Json;

namespace {

const Json& reference_data() {
  static const Json j = mdsim_test::read_json(std::string(MDSIM_SOURCE_DIR) + "/tests/data/restraint_reference.json");
  return j;
}

const Model& model_of(const std::string& name) {
  static const Model water = test::reference_model("ala2_water");
  static const Model vacuum = test::reference_model("ala2_vacuum");
  return name == "ala2_water" ? water : vacuum;
}

// One case of the reference file: its restraints, the positions (the PDB's, the restrained atoms moved
// as OpenMM had them) and OpenMM's energy and per-entry forces.
struct Case {
  std::string name, system;
  bool has_box = false;
  Boxd box{};
  PositionRestraints restraints;
  std::vector<Vec3d> positions, openmm_forces;
  double openmm_energy = 0.0;
};

Case load_case(const Json& c) {
  Case out;
  out.name = c["name"].string;
  out.system = c["system"].string;
  out.has_box = !c["box"].is_null();
  if (out.has_box) out.box = box_from(c["box"]);
  for (const Json& a : c["atoms"].array) out.restraints.atoms.push_back(static_cast<int>(a.num()));
  out.restraints.reference_nm = mdsim_test::json_vec3_list(c["reference"]);
  out.restraints.set_isotropic_k(c["k"].num());
  out.positions = model_of(out.system).positions_nm;
  const std::vector<Vec3d> moved = mdsim_test::json_vec3_list(c["positions"]);
  for (std::size_t e = 0; e < moved.size(); ++e) out.positions[static_cast<std::size_t>(out.restraints.atoms[e])] = moved[e];
  out.openmm_forces = mdsim_test::json_vec3_list(c["forces"]);
  out.openmm_energy = c["energy"].num();
  return out;
}

std::vector<Case> cases() {
  std::vector<Case> out;
  for (const Json& c : reference_data()["cases"].array) out.push_back(load_case(c));
  return out;
}

// An evaluator of the case's system in the case's box, with its restraints.
struct CaseEvaluator {
  CpuForceEvaluator evaluator;
  explicit CaseEvaluator(const Case& c) : evaluator(model_of(c.system).system) {
    if (c.has_box) evaluator.set_box(c.box);
    evaluator.set_position_restraints(c.restraints);
  }
};

}  // namespace

TEST_CASE("position restraints equal OpenMM's CustomExternalForce on the Reference platform", "[cpu]") {
  const std::vector<Case> all = cases();
  REQUIRE(all.size() == 3);
  for (const Case& c : all) {
    INFO("case " << c.name);
    CaseEvaluator ce(c);
    std::vector<Vec3d> f;
    const EnergyTerms e = ce.evaluator.compute(c.positions, &f, kTermRestraint);
    CHECK(e.total == e.restraint);
    CHECK(e.bond == 0.0);
    CHECK(e.nonbonded == 0.0);
    const double energy_error = mdsim_test::relative_difference(e.restraint, c.openmm_energy);
    std::vector<Vec3d> restrained(c.openmm_forces.size());
    for (std::size_t k = 0; k < restrained.size(); ++k) restrained[k] = f[static_cast<std::size_t>(c.restraints.atoms[k])];
    double worst = 0.0;  // per entry, relative to that force (or to 1 kJ/mol/nm where it is smaller)
    for (std::size_t k = 0; k < restrained.size(); ++k)
      worst = std::max(worst, norm(restrained[k] - c.openmm_forces[k]) / std::max(norm(c.openmm_forces[k]), 1.0));
    std::printf("[figure] restraint vs OpenMM CustomExternalForce, %s (%zu atoms): energy %.6f kJ/mol, relative "
                "error %.2e; worst force error %.2e relative\n",
                c.name.c_str(), restrained.size(), e.restraint, energy_error, worst);
    CHECK(energy_error < 1e-9);
    CHECK(worst < 1e-9);
    CHECK(norm(restrained[1]) == 0.0);  // the entry on its reference
    // Every other atom feels nothing.
    std::vector<char> is_restrained(f.size(), 0);
    for (int a : c.restraints.atoms) is_restrained[static_cast<std::size_t>(a)] = 1;
    double others = 0.0;
    for (std::size_t i = 0; i < f.size(); ++i)
      if (!is_restrained[i]) others = std::max(others, norm(f[i]));
    CHECK(others == 0.0);
  }
}

TEST_CASE("restraint forces are minus the finite-difference gradient of the energy", "[cpu]") {
  // Atoms across the periodic boundary and more than half a box from their reference (minimum image),
  // in the orthorhombic and the triclinic box, and in vacuum. E is quadratic between the image jumps,
  // which lie at least 0.05 nm away, so central differences with h = 1e-4 nm are exact up to rounding.
  for (const Case& c : cases()) {
    INFO("case " << c.name);
    CaseEvaluator ce(c);
    std::vector<Vec3d> x = c.positions, f;
    ce.evaluator.compute(x, &f, kTermRestraint);
    const double h = 1e-4;
    double worst = 0.0, largest = 0.0;
    for (int atom : c.restraints.atoms) {
      const std::size_t i = static_cast<std::size_t>(atom);
      for (int d = 0; d < 3; ++d) {
        const double x_d = x[i][d];
        x[i][d] = x_d + h;
        const double e_plus = ce.evaluator.compute(x, nullptr, kTermRestraint).restraint;
        x[i][d] = x_d - h;
        const double e_minus = ce.evaluator.compute(x, nullptr, kTermRestraint).restraint;
        x[i][d] = x_d;
        const double numeric = -(e_plus - e_minus) / (2.0 * h);
        worst = std::max(worst, std::fabs(numeric - f[i][d]));
        largest = std::max(largest, std::fabs(f[i][d]));
      }
    }
    std::printf("[figure] restraint forces vs finite differences, %s: worst |F - F_fd| %.2e kJ/mol/nm (largest "
                "force component %.1f)\n",
                c.name.c_str(), worst, largest);
    // Rounding of energies up to ~2e5 kJ/mol divided by 2h: ~1e-11 * 2e5 / 2e-4 ~ 1e-2 at worst.
    CHECK(worst < 1e-6 * largest + 1e-4);
  }
}

TEST_CASE("per-axis force constants and an atom in two entries: the sum of the springs", "[cpu]") {
  for (const Case& c : cases()) {
    INFO("case " << c.name);
    PositionRestraints r = c.restraints;
    for (std::size_t e = 0; e < r.atoms.size(); ++e)
      r.k_kj_per_mol_nm2[e] = Vec3d(300.0 + 10.0 * static_cast<double>(e), 1700.0, 50.0 * static_cast<double>(e % 3));
    r.add(r.atoms[0], r.reference_nm[0] + Vec3d(0.05, -0.1, 0.02), Vec3d(400.0, 0.0, 900.0));  // a second spring
    CpuForceEvaluator evaluator(model_of(c.system).system);
    if (c.has_box) evaluator.set_box(c.box);
    evaluator.set_position_restraints(r);
    std::vector<Vec3d> x = c.positions, f;
    const double energy = evaluator.compute(x, &f, kTermRestraint).restraint;
    double expected = 0.0;
    std::vector<Vec3d> want(x.size(), Vec3d(0, 0, 0));
    for (std::size_t e = 0; e < r.atoms.size(); ++e) {
      const std::size_t i = static_cast<std::size_t>(r.atoms[e]);
      const Vec3d d = c.has_box ? c.box.minimum_image(x[i] - r.reference_nm[e]) : x[i] - r.reference_nm[e];
      for (int a = 0; a < 3; ++a) {
        expected += 0.5 * r.k_kj_per_mol_nm2[e][a] * d[a] * d[a];
        want[i][a] -= r.k_kj_per_mol_nm2[e][a] * d[a];
      }
    }
    CHECK(energy == Catch::Approx(expected).epsilon(1e-12));
    double worst = 0.0, worst_fd = 0.0, largest = 0.0;
    const double h = 1e-4;
    for (const int atom : r.atoms) {
      const std::size_t i = static_cast<std::size_t>(atom);
      for (int a = 0; a < 3; ++a) {
        worst = std::max(worst, std::fabs(f[i][a] - want[i][a]));
        largest = std::max(largest, std::fabs(f[i][a]));
        worst_fd = std::max(worst_fd, std::fabs(mdsim_test::restraint_force_fd(evaluator, x, i, a, h) - f[i][a]));
      }
    }
    CHECK(worst <= 1e-12 * largest);
    CHECK(worst_fd < 1e-6 * largest + 1e-4);
  }
}

TEST_CASE("the CPU context adds the restraint term to every evaluation and replaces or removes it", "[cpu]") {
  // ala2_water at its PDB positions, restrained to the reference file's displaced positions (the roles
  // of reference and current swapped: the same energy, opposite forces).
  const Case c = cases()[0];
  const Model& m = model_of(c.system);
  auto ctx = make_cpu_context(m.system, mdsim_test::langevin(17, 0.0005));
  ctx->set_positions(m.positions_nm);
  const StateRequest everything{true, false, true, true};
  const SimulationState plain = ctx->state(everything);
  CHECK(plain.potential.restraint == 0.0);

  PositionRestraints swapped;
  swapped.atoms = c.restraints.atoms;
  swapped.k_kj_per_mol_nm2 = c.restraints.k_kj_per_mol_nm2;
  for (int a : c.restraints.atoms) swapped.reference_nm.push_back(c.positions[static_cast<std::size_t>(a)]);
  ctx->set_position_restraints(swapped);
  const SimulationState restrained = ctx->state(everything);
  CHECK(restrained.potential.restraint == Catch::Approx(c.openmm_energy).epsilon(1e-9));
  CHECK(restrained.potential.total == Catch::Approx(plain.potential.total + restrained.potential.restraint).epsilon(1e-12));
  CHECK(restrained.potential.nonbonded == plain.potential.nonbonded);
  for (std::size_t k = 0; k < c.restraints.atoms.size(); ++k) {
    const std::size_t i = static_cast<std::size_t>(c.restraints.atoms[k]);
    const Vec3d added = restrained.forces_kj_per_mol_nm[i] - plain.forces_kj_per_mol_nm[i];
    CHECK(norm(added + c.openmm_forces[k]) < 1e-9 * std::max(norm(c.openmm_forces[k]), 1.0) + 1e-9);
  }

  // Replaced: twice the stiffness, twice the energy.
  for (Vec3d& k : swapped.k_kj_per_mol_nm2) k *= 2.0;
  ctx->set_position_restraints(swapped);
  CHECK(ctx->state(everything).potential.restraint == Catch::Approx(2.0 * restrained.potential.restraint).epsilon(1e-12));
  // A refused replacement keeps the restraints in force.
  PositionRestraints bad = swapped;
  bad.k_kj_per_mol_nm2[0].y = -1.0;
  CHECK_THROWS_AS(ctx->set_position_restraints(bad), InputError);
  CHECK(ctx->state(everything).potential.restraint == Catch::Approx(2.0 * restrained.potential.restraint).epsilon(1e-12));
  // Removed: the plain evaluation again, bit for bit.
  ctx->set_position_restraints(PositionRestraints{});
  const SimulationState removed = ctx->state(everything);
  CHECK(removed.potential.restraint == 0.0);
  CHECK(removed.potential.total == plain.potential.total);
  REQUIRE(removed.forces_kj_per_mol_nm.size() == plain.forces_kj_per_mol_nm.size());
  CHECK(std::memcmp(removed.forces_kj_per_mol_nm.data(), plain.forces_kj_per_mol_nm.data(),
                    plain.forces_kj_per_mol_nm.size() * sizeof(Vec3d)) == 0);
}

TEST_CASE("minimisation with restraints reaches the analytic minimum across the periodic boundary", "[cpu]") {
  // support/restraint_fixtures.hpp: the minimum is a bond of r_min centred on x = 0.
  const mdsim_test::RestrainedPair pair;
  const double kb = pair.kb, k = pair.k, r0 = pair.r0, r_min = pair.r_min;
  DynamicsSettings settings = mdsim_test::langevin(17, 0.001);
  settings.remove_cm_motion = false;
  auto ctx = make_cpu_context(pair.system, settings);
  ctx->set_positions(pair.start);
  ctx->set_position_restraints(pair.restraints);
  const MinimizationResult result = ctx->minimize(1e-6, 0);
  CHECK(result.converged);
  const SimulationState st = ctx->state(StateRequest{true, false, false, true});
  const Vec3d bond = st.positions_nm[1] - st.positions_nm[0];
  CHECK(norm(bond) == Catch::Approx(r_min).epsilon(1e-8));
  CHECK(st.positions_nm[0].x == Catch::Approx(-0.5 * r_min).epsilon(1e-8));  // plain coordinates, imaged restraint
  CHECK(st.positions_nm[1].x == Catch::Approx(0.5 * r_min).epsilon(1e-8));
  const double expected = 0.5 * kb * (r_min - r0) * (r_min - r0) + k * (0.1 - 0.5 * r_min) * (0.1 - 0.5 * r_min);
  CHECK(result.final_energy == Catch::Approx(expected).epsilon(1e-8));
  CHECK(st.potential.restraint == Catch::Approx(pair.restraint_energy).epsilon(1e-8));
  CHECK(st.potential.total == Catch::Approx(result.final_energy).epsilon(1e-12));
}

TEST_CASE("barostat moves scale the restrained atoms but not their reference points", "[cpu]") {
  // ala2_water (flexible, 0.5 fs), the protein's heavy atoms restrained to their PDB positions, a move
  // attempted every step at 1000 bar: after accepted moves the restraint energy is that of the unscaled
  // reference points in the new box.
  const Model& m = model_of("ala2_water");
  DynamicsSettings settings = mdsim_test::langevin(17, 0.0005);
  settings.barostat = BarostatConfig{1000.0, 300.0, 1};
  auto ctx = make_cpu_context(m.system, settings);
  ctx->set_positions(m.positions_nm);
  ctx->set_velocities_to_temperature(300.0, 0);
  PositionRestraints r;
  r.atoms = select_atoms(m.topology, "protein and heavy");
  for (int a : r.atoms) r.reference_nm.push_back(m.positions_nm[static_cast<std::size_t>(a)]);
  r.set_isotropic_k(1000.0);
  ctx->set_position_restraints(r);
  ctx->step(20);
  const SimulationState st = ctx->state(StateRequest{true, false, false, true});
  REQUIRE(st.has_box);
  INFO("box a.x " << st.box.a.x << " nm, started at " << m.system.box->a.x);
  REQUIRE(st.box.a.x != m.system.box->a.x);  // some move was accepted
  double expected = 0.0;
  for (std::size_t k = 0; k < r.atoms.size(); ++k) {
    const Vec3d d = st.box.minimum_image(st.positions_nm[static_cast<std::size_t>(r.atoms[k])] - r.reference_nm[k]);
    expected += 0.5 * r.k_kj_per_mol_nm2[k].x * dot(d, d);
  }
  CHECK(st.potential.restraint == Catch::Approx(expected).epsilon(1e-12));
  CHECK(st.potential.restraint > 0.0);
}

TEST_CASE("bad position restraints are refused with a message naming the entry", "[cpu]") {
  const Model& m = model_of("ala2_vacuum");  // 22 atoms
  auto ctx = make_cpu_context(m.system, mdsim_test::langevin(17, 0.001));
  CpuForceEvaluator evaluator(m.system);
  const auto good = [&] {
    PositionRestraints r;
    r.atoms = {0, 4, 8};
    const Vec3d shift(0.1, 0.0, 0.0);  // each atom 0.1 nm from its reference at the PDB positions: 5 kJ/mol
    r.reference_nm = {m.positions_nm[0] + shift, m.positions_nm[4] + shift, m.positions_nm[8] + shift};
    r.set_isotropic_k(1000.0);
    return r;
  };
  ctx->set_position_restraints(good());  // accepted
  struct Bad {
    const char* what;
    PositionRestraints r;
    const char* message;
  };
  std::vector<Bad> bad;
  {
    PositionRestraints r = good();
    r.atoms[1] = 22;
    bad.push_back({"atom past the end", r, "position restraints: entry 1 restrains atom 22, but the system has 22 particles"});
  }
  {
    PositionRestraints r = good();
    r.atoms[2] = -1;
    bad.push_back({"negative atom", r, "position restraints: entry 2 restrains atom -1, but the system has 22 particles"});
  }
  {
    PositionRestraints r = good();
    r.reference_nm.pop_back();
    bad.push_back({"count mismatch", r, "position restraints: 3 atoms but 2 reference positions and 3 force constants"});
  }
  {
    PositionRestraints r = good();
    r.k_kj_per_mol_nm2.push_back(Vec3d(1, 1, 1));
    bad.push_back({"k count mismatch", r, "position restraints: 3 atoms but 3 reference positions and 4 force constants"});
  }
  {
    PositionRestraints r = good();
    r.k_kj_per_mol_nm2[1].x = -5.0;
    bad.push_back({"negative k", r,
                   "position restraints: k must be finite and zero or positive, got -5 kJ/mol/nm^2 along x for atom 4 "
                   "(entry 1)"});
  }
  {
    PositionRestraints r = good();
    r.k_kj_per_mol_nm2[2].y = std::nan("");
    bad.push_back({"NaN k", r,
                   "position restraints: k must be finite and zero or positive, got nan kJ/mol/nm^2 along y for atom 8"});
  }
  {
    PositionRestraints r = good();
    r.k_kj_per_mol_nm2[0].z = HUGE_VAL;
    bad.push_back({"infinite k", r, "position restraints: k must be finite and zero or positive, got inf kJ/mol/nm^2 along z"});
  }
  {
    PositionRestraints r = good();
    r.reference_nm[1].y = std::nan("");
    bad.push_back({"NaN reference", r, "position restraints: the reference position of atom 4 (entry 1) is not finite"});
  }
  for (const Bad& b : bad) {
    INFO(b.what);
    const std::string context_message = input_error_of([&] { ctx->set_position_restraints(b.r); });
    const std::string evaluator_message = input_error_of([&] { evaluator.set_position_restraints(b.r); });
    INFO(context_message);
    CHECK(context_message.rfind(b.message, 0) == 0);
    CHECK(evaluator_message == context_message);
  }
  // The accepted restraints stayed in force through the refusals.
  ctx->set_positions(m.positions_nm);
  CHECK(ctx->state(StateRequest{false, false, false, true}).potential.restraint == Catch::Approx(15.0).epsilon(1e-12));
  CHECK_NOTHROW(ctx->set_position_restraints(PositionRestraints{}));  // empty: none
  PositionRestraints zero_k = good();
  zero_k.set_isotropic_k(0.0);
  CHECK_NOTHROW(ctx->set_position_restraints(zero_k));
}
