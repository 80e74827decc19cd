// What a GROMACS top and its coordinates bring to a run beside the System (engine/simulation, engine/model_topology),
// on the CPU platform, with tests/data/gromacs/posres.top (three 5-atom molecules in a 3.2 nm box; [position_restraints]
// under #ifdef POSRES with a different force constant along each axis) and posres.gro (with velocities):
//  - with `defines: [POSRES]` the restraints are in force about the starting coordinates: E = ½ Σ_a k_a d_a² by
//    minimum image (one atom pushed across the box), forces −k_a d_a and minus the finite-difference gradient, on the
//    evaluator and in the Simulation's context; without the define there are none;
//  - a stage's restraints add to them (the state log's restraint column against the formula at the checkpoint);
//  - a spring too stiff for the time step is refused at its file and line; flat-bottomed restraints (function 2)
//    stay an error;
//  - run.initial_velocities: from_coordinates starts from the file's velocities (a .gro's: unconstrained atoms
//    exactly, constrained ones projected, virtual sites at rest; a serialized State's), and is refused, naming the
//    file, when it has none.
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "common/errors.hpp"
#include "engine/model.hpp"
#include "engine/simulation.hpp"
#include "io/checkpoint_h5.hpp"
#include "io/config.hpp"
#include "io/gro_reader.hpp"
#include "io/system_xml.hpp"
#include "kernels/cpu/cpu_forces.hpp"
#include "platform/context.hpp"
#include "support/catch.hpp"
#include "support/restraint_fixtures.hpp"
#include "support/scratch.hpp"
#include "support/text_file.hpp"
#include "support/thrown.hpp"

namespace fs = std::filesystem;
using namespace mdsim;
using mdsim_test::contains;
using mdsim_test::input_error_of;

namespace {

const std::string kGmx = std::string(MDSIM_SOURCE_DIR) + "/tests/data/gromacs/";
constexpr double kBox = 3.2;  // posres.gro's cubic box, nm

// A run config on posres.top (or `top`) with `coordinates`, written into `dir`, with `extra` top-level text.
RunConfig posres_config(const fs::path& dir, const std::string& system_extra, const std::string& extra,
                        const std::string& top = kGmx + "posres.top",
                        const std::string& coordinates = kGmx + "posres.gro") {
  const std::string text = "system:\n  topology: " + top + "\n  coordinates: " + coordinates +
                           "\n  nonbonded_method: cutoff_periodic\n  cutoff: 1.0 nm\n" + system_extra +
                           "platform: cpu\nintegrator: {seed: 11, timestep: 1 fs}\n" + extra +
                           "output: {directory: " + (dir / "out").string() + ", progress: false}\n";
  std::ofstream(dir / "config.yaml") << text;
  return load_config((dir / "config.yaml").string());
}

// x − x0 by minimum image in the cubic box.
Vec3d wrapped(const Vec3d& d) {
  Vec3d w = d;
  for (int a = 0; a < 3; ++a) w[a] -= kBox * std::round(w[a] / kBox);
  return w;
}

// ½ Σ_a k_a d_a² over the restraints at `x` (the formula, written out).
double restraint_formula(const PositionRestraints& r, const std::vector<Vec3d>& x) {
  double e = 0.0;
  for (std::size_t i = 0; i < r.atoms.size(); ++i) {
    const Vec3d d = wrapped(x[static_cast<std::size_t>(r.atoms[i])] - r.reference_nm[i]);
    for (int a = 0; a < 3; ++a) e += 0.5 * r.k_kj_per_mol_nm2[i][a] * d[a] * d[a];
  }
  return e;
}

// The starting positions, each atom moved a little (a pattern), atom 10 by almost a box length along x (its minimum
// image is 0.04 nm the other way).
std::vector<Vec3d> displaced(const std::vector<Vec3d>& x0) {
  std::vector<Vec3d> x = x0;
  for (std::size_t i = 0; i < x.size(); ++i)
    x[i] += Vec3d(0.02 * std::sin(1.1 * i + 0.3), 0.03 * std::cos(0.7 * i), 0.025 * std::sin(2.3 * i + 1.0));
  x[10].x += kBox - 0.04;
  return x;
}

std::vector<Vec3d> file_velocities(const std::string& gro) { return read_gro(gro).velocities_nm_per_ps; }

// posres.top with `from` replaced by `to`, written into `dir`.
std::string edited_top(const fs::path& dir, const std::string& name, const std::string& from, const std::string& to) {
  std::string text = mdsim_test::read_text(kGmx + "posres.top");
  REQUIRE(text.find(from) != std::string::npos);
  text.replace(text.find(from), from.size(), to);
  std::ofstream(dir / name) << text;
  return (dir / name).string();
}

}  // namespace

TEST_CASE("a top's [position_restraints] under POSRES: per-axis springs about the starting coordinates") {
  const fs::path dir = mdsim_test::scratch("posres");
  const RunConfig cfg = posres_config(dir, "  constraints: none\n  defines: [POSRES]\n", "run: {steps: 10}\n");
  const Model model = build_model(cfg);
  REQUIRE(model.position_restraints.size() == 9);  // C1, C2 and O2 of each of the three molecules
  CHECK(model.position_restraints[0].guard == "POSRES");
  const RunSetup setup = prepare_run(cfg, model, false);
  const PositionRestraints& r = setup.topology_restraints;
  REQUIRE(r.atoms == std::vector<int>{0, 2, 3, 5, 7, 8, 10, 12, 13});
  for (std::size_t i = 0; i < r.atoms.size(); ++i)
    CHECK(r.reference_nm[i].x == model.positions_nm[static_cast<std::size_t>(r.atoms[i])].x);  // as read
  CHECK(r.k_kj_per_mol_nm2[0].x == 1000.0);
  CHECK(r.k_kj_per_mol_nm2[0].y == 2000.0);
  CHECK(r.k_kj_per_mol_nm2[0].z == 500.0);
  CHECK(r.k_kj_per_mol_nm2[7].x == 0.0);  // atom 12 (C2): free along x
  CHECK(r.k_kj_per_mol_nm2[7].z == 3000.0);

  // The restraint term alone: the formula, forces -k_a d_a, and minus the finite-difference gradient.
  std::vector<Vec3d> x = displaced(model.positions_nm), f;
  CpuForceEvaluator evaluator(model.system);
  evaluator.set_position_restraints(r);
  const double energy = evaluator.compute(x, &f, kTermRestraint).restraint;
  const double expected = restraint_formula(r, x);
  INFO("restraint " << energy << " kJ/mol, formula " << expected);
  CHECK(expected > 1.0);
  CHECK(energy == Catch::Approx(expected).epsilon(1e-12));
  std::vector<Vec3d> want(x.size(), Vec3d(0, 0, 0));
  for (std::size_t i = 0; i < r.atoms.size(); ++i) {
    const Vec3d d = wrapped(x[static_cast<std::size_t>(r.atoms[i])] - r.reference_nm[i]);
    for (int a = 0; a < 3; ++a) want[static_cast<std::size_t>(r.atoms[i])][a] = -r.k_kj_per_mol_nm2[i][a] * d[a];
  }
  // Atom 10 is 3.16 nm plus the pattern's -0.019 nm from its reference along x: by minimum image -0.059 nm.
  CHECK(f[10].x == Catch::Approx(-1000.0 * (x[10].x - r.reference_nm[6].x - kBox)).epsilon(1e-9));
  CHECK(f[10].x == Catch::Approx(59.0).margin(0.1));
  double worst = 0.0, worst_fd = 0.0;
  const double h = 1e-5;
  for (std::size_t i = 0; i < x.size(); ++i)
    for (int a = 0; a < 3; ++a) {
      worst = std::max(worst, std::fabs(f[i][a] - want[i][a]));
      worst_fd = std::max(worst_fd, std::fabs(mdsim_test::restraint_force_fd(evaluator, x, i, a, h) - f[i][a]));
    }
  CHECK(worst < 1e-12);
  CHECK(worst_fd < 1e-6);

  // In the Simulation's context, added to the other terms.
  Simulation sim(cfg, RunRequest{});
  sim.context().set_positions(x);
  const SimulationState st = sim.context().state(StateRequest{false, false, true, true});
  CHECK(st.potential.restraint == Catch::Approx(expected).epsilon(1e-12));
  CpuForceEvaluator plain(model.system);
  const EnergyTerms without = plain.compute(x, nullptr);
  CHECK(st.potential.total == Catch::Approx(without.total + expected).epsilon(1e-12));
  fs::remove_all(dir);
}

TEST_CASE("without the define the top's [position_restraints] are not read and nothing is restrained") {
  const fs::path dir = mdsim_test::scratch("no_posres");
  const RunConfig cfg = posres_config(dir, "  constraints: none\n", "run: {steps: 10}\n");
  const Model model = build_model(cfg);
  CHECK(model.position_restraints.empty());
  CHECK(prepare_run(cfg, model, false).topology_restraints.empty());
  Simulation sim(cfg, RunRequest{});
  sim.context().set_positions(displaced(model.positions_nm));
  CHECK(sim.context().state(StateRequest{false, false, false, true}).potential.restraint == 0.0);
  fs::remove_all(dir);
}

TEST_CASE("a stage's restraints add to the top's: the state log's restraint column is the sum of both springs") {
  const fs::path dir = mdsim_test::scratch("posres_stage");
  // Atom 0 is restrained by the top (1000, 2000, 500) and by the stage (k = 300, reference: initial): two springs.
  const RunConfig cfg = posres_config(dir, "  constraints: none\n  defines: [POSRES]\n",
                                      "stages:\n  - name: nvt\n    steps: 20\n"
                                      "    restraints: {atoms: [0, 1], k: 300 kJ/mol/nm^2, reference: initial}\n"
                                      "    output: {state: {interval: 20}, checkpoint: {interval: 20}}\n");
  Simulation sim(cfg, RunRequest{});
  const RunSummary summary = sim.run();
  REQUIRE(summary.last_step == 20);
  const Model& model = sim.model();
  const Checkpoint c = read_checkpoint((dir / "out/checkpoint.h5").string(), system_fingerprint(model.system));
  PositionRestraints both = prepare_run(cfg, model, false).topology_restraints;
  for (const int a : {0, 1}) both.add(a, model.positions_nm[static_cast<std::size_t>(a)], Vec3d(300, 300, 300));
  const double expected = restraint_formula(both, c.positions_nm);
  std::istringstream log(mdsim_test::read_text((dir / "out/state.csv").string()));
  std::string header, line, last;
  std::getline(log, header);
  while (std::getline(log, line)) last = line;
  CHECK(header.substr(header.size() - 27) == ",restraint_kj_per_mol,stage");
  const std::string fields = last.substr(0, last.rfind(','));  // without the stage
  const double logged = std::stod(fields.substr(fields.rfind(',') + 1));
  INFO("logged " << logged << ", formula " << expected);
  CHECK(logged == Catch::Approx(expected).epsilon(1e-8));
  fs::remove_all(dir);
}

TEST_CASE("a topology restraint too stiff for the time step is refused at its line; flat-bottomed ones stay an error") {
  const fs::path dir = mdsim_test::scratch("posres_errors");
  const std::string stiff = edited_top(dir, "stiff.top", "1     1     1000   2000   500", "1     1     1000   2e9    500");
  RunConfig cfg = posres_config(dir, "  constraints: none\n  defines: [POSRES]\n", "run: {steps: 10}\n", stiff);
  const Model model = build_model(cfg);
  const std::string message = input_error_of([&] { prepare_run(cfg, model, false); });
  INFO(message);
  CHECK(contains(message, "stiff.top:45:"));
  CHECK(contains(message, "k = 2e+09 kJ/mol/nm^2 on particle 0 (12.011 amu) is too stiff for the 1 fs step"));
  // A minimisation takes any stiffness (no steps).
  cfg = posres_config(dir, "  constraints: none\n  defines: [POSRES]\n", "run: {steps: 0}\n", stiff);
  CHECK_NOTHROW(prepare_run(cfg, model, false));

  const std::string flat = edited_top(dir, "flat.top", "4     1     800    800    800", "4     2     1  0.1  800");
  cfg = posres_config(dir, "  constraints: none\n  defines: [POSRES]\n", "run: {steps: 10}\n", flat);
  const std::string refused = input_error_of([&] { build_model(cfg); });
  INFO(refused);
  CHECK(contains(refused, "flat.top:47:"));
  CHECK(contains(refused, "[ position_restraints ] function type 2 is not supported"));
  fs::remove_all(dir);
}

TEST_CASE("run.initial_velocities: from_coordinates starts from the coordinate file's velocities") {
  const fs::path dir = mdsim_test::scratch("velocities");
  const std::vector<Vec3d> want = file_velocities(kGmx + "posres.gro");
  REQUIRE(want.size() == 15);
  SECTION("unconstrained: every velocity as the file has it") {
    const RunConfig cfg = posres_config(dir, "  constraints: none\n", "run: {steps: 10, initial_velocities: from_coordinates}\n");
    Simulation sim(cfg, RunRequest{});
    const std::vector<Vec3d> v = sim.context().state(StateRequest{false, true, false, false}).velocities_nm_per_ps;
    REQUIRE(v.size() == want.size());
    for (std::size_t i = 0; i < v.size(); ++i) CHECK((v[i].x == want[i].x && v[i].y == want[i].y && v[i].z == want[i].z));
  }
  SECTION("hbonds: atoms outside any constraint exactly, the constrained pairs without relative motion along them") {
    const RunConfig cfg = posres_config(dir, "  constraints: hbonds\n", "run: {steps: 10, initial_velocities: from_coordinates}\n");
    Simulation sim(cfg, RunRequest{});
    const SimulationState st = sim.context().state(StateRequest{true, true, false, false});
    const System& system = sim.model().system;
    REQUIRE(system.constraints.size() == 6);  // C1-H11 and O2-HO2 of each molecule
    std::vector<char> constrained(want.size(), 0);
    for (const DistanceConstraint& c : system.constraints) {
      constrained[static_cast<std::size_t>(c.i)] = constrained[static_cast<std::size_t>(c.j)] = 1;
      const Vec3d r = st.positions_nm[static_cast<std::size_t>(c.j)] - st.positions_nm[static_cast<std::size_t>(c.i)];
      const Vec3d dv = st.velocities_nm_per_ps[static_cast<std::size_t>(c.j)] -
                       st.velocities_nm_per_ps[static_cast<std::size_t>(c.i)];
      CHECK(std::fabs(dot(r, dv)) < 1e-5 * norm(r) * norm(dv) + 1e-9);
    }
    for (std::size_t i = 0; i < want.size(); ++i)
      if (!constrained[i]) CHECK(norm(st.velocities_nm_per_ps[i] - want[i]) == 0.0);
  }
  SECTION("a serialized State's velocities, beside its serialized System") {
    const std::string data = std::string(MDSIM_SOURCE_DIR) + "/tests/data/";
    const std::string state = data + "system_xml_ala2_vacuum.state.xml";
    std::ofstream(dir / "xml.yaml") << "system:\n  topology: " << data << "system_xml_ala2_vacuum.system.xml\n"
                                    << "  coordinates: " << state << "\nplatform: cpu\n"
                                    << "run: {steps: 10, initial_velocities: from_coordinates}\noutput: {directory: "
                                    << (dir / "out").string() << "}\n";
    Simulation sim(load_config((dir / "xml.yaml").string()), RunRequest{});
    REQUIRE(sim.model().system.constraints.empty());
    const std::vector<Vec3d> from_state = read_state_xml(state).velocities_nm_per_ps;
    const std::vector<Vec3d> v = sim.context().state(StateRequest{false, true, false, false}).velocities_nm_per_ps;
    REQUIRE(v.size() == from_state.size());
    for (std::size_t i = 0; i < v.size(); ++i) CHECK(norm(v[i] - from_state[i]) == 0.0);
  }
  fs::remove_all(dir);
}

TEST_CASE("from_coordinates: virtual sites start at rest; coordinates without velocities are refused, naming the file") {
  const fs::path dir = mdsim_test::scratch("velocities_sites");
  // bnz.gro (two virtual sites) with a velocity column added to every atom line.
  const std::string shared = std::string(MDSIM_TEST_DATA_DIR) + "/topologies/inputs/";
  std::istringstream in(mdsim_test::read_text(shared + "bnz.gro"));
  std::ostringstream out;
  int n = 0;
  for (std::string line; std::getline(in, line); ++n) {
    if (n >= 2 && line.size() >= 44) line = line.substr(0, 44) + "  0.1000 -0.2000  0.3000";
    out << line << "\n";
  }
  std::ofstream(dir / "bnz_v.gro") << out.str();
  const std::string vacuum = "system:\n  topology: " + shared + "bnz.top\n  coordinates: " + (dir / "bnz_v.gro").string() +
                             "\n  nonbonded_method: no_cutoff\n  constraints: none\n";
  const std::string tail = "platform: cpu\nrun: {steps: 10, initial_velocities: from_coordinates}\noutput: {directory: " +
                           (dir / "out").string() + "}\n";
  std::ofstream(dir / "bnz.yaml") << vacuum << tail;
  Simulation sim(load_config((dir / "bnz.yaml").string()), RunRequest{});
  const System& system = sim.model().system;
  REQUIRE(!system.virtual_sites.empty());
  const std::vector<Vec3d> v = sim.context().state(StateRequest{false, true, false, false}).velocities_nm_per_ps;
  for (std::size_t i = 0; i < v.size(); ++i)
    CHECK(norm(v[i] - (system.mass_amu[i] == 0.0 ? Vec3d(0, 0, 0) : Vec3d(0.1, -0.2, 0.3))) == 0.0);

  // posres.gro without its velocity columns.
  std::istringstream gro(mdsim_test::read_text(kGmx + "posres.gro"));
  std::ostringstream plain;
  n = 0;
  for (std::string line; std::getline(gro, line); ++n) plain << (n >= 2 && line.size() > 44 ? line.substr(0, 44) : line) << "\n";
  std::ofstream(dir / "plain.gro") << plain.str();
  const RunConfig cfg = posres_config(dir, "  constraints: none\n", "run: {steps: 10, initial_velocities: from_coordinates}\n",
                                      kGmx + "posres.top", (dir / "plain.gro").string());
  const std::string message = input_error_of([&] { Simulation refused(cfg, RunRequest{}); });
  INFO(message);
  CHECK(contains(message, "config.yaml:9:"));
  CHECK(contains(message, "from_coordinates starts from the velocities of " + (dir / "plain.gro").string() +
                              ", which holds none"));
  fs::remove_all(dir);
}
