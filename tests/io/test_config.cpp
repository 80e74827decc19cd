// YAML config v1: every key, defaults, unit conversions, and each class of error with its message.
#include "support/catch.hpp"
#include "support/config_text.hpp"

#include <filesystem>
#include <string>

#include "common/errors.hpp"
#include "io/config.hpp"
#include "io/units.hpp"

using namespace mdsim;
using Catch::Approx;
using mdsim_test::error_of;
using mdsim_test::parse;

TEST_CASE("defaults apply when only system.pdb is given") {
  const RunConfig c = parse("system:\n  pdb: a.pdb\n");
  CHECK(c.system.pdb == "/base/a.pdb");
  REQUIRE(c.system.forcefield.size() == 2);
  CHECK(c.system.forcefield[0] == "amber14-all.xml");
  CHECK(c.system.forcefield[1] == "amber14/tip3p.xml");
  CHECK(c.system.nonbonded.method == NonbondedMethod::PME);
  CHECK(c.system.nonbonded.cutoff_nm == 1.0);
  CHECK(c.system.nonbonded.ewald_tolerance == 5.0e-4);
  CHECK(c.system.nonbonded.pme_grid == PmeGridSizes::Exact);
  CHECK_FALSE(c.system.nonbonded.switch_distance_nm.has_value());
  CHECK(c.system.nonbonded.dispersion_correction);
  CHECK(c.system.constraints == ConstraintMode::HBonds);
  CHECK(c.system.rigid_water);
  CHECK_FALSE(c.system.hydrogen_mass_amu.has_value());
  CHECK(c.system.remove_cm_motion);
  CHECK(c.system.remove_cm_motion_interval == 1);  // every step, as OpenMM's CMMotionRemover by default
  CHECK(c.system.replicate == std::array<int, 3>{1, 1, 1});
  CHECK(c.platform.name == "auto");
  CHECK(c.platform.precision == Precision::Mixed);
  CHECK(c.platform.device == 0);
  CHECK(c.platform.deterministic);
  CHECK(c.platform.neighbor_buffer_nm == 0.1);
  CHECK_FALSE(c.minimize.has_value());
  CHECK(c.integrator.type == IntegratorType::LangevinMiddle);
  CHECK(c.integrator.temperature_k == 300.0);
  CHECK(c.integrator.friction_per_ps == 1.0);
  CHECK(c.integrator.timestep_ps == Approx(0.002));
  CHECK(c.integrator.seed == 0);
  CHECK(c.integrator.constraint_tolerance == 1e-6);
  CHECK_FALSE(c.barostat.has_value());
  CHECK(c.run.steps == 10000);
  CHECK(c.run.initial_velocities == InitialVelocities::Temperature);
  CHECK(c.output.directory == "/base/out");
  CHECK(c.output.trajectory.file == "trajectory.h5");
  CHECK(c.output.trajectory.interval_steps == 1000);
  CHECK_FALSE(c.output.trajectory.velocities);
  CHECK_FALSE(c.output.trajectory.forces);
  CHECK(c.output.trajectory.atoms == "all");
  CHECK(c.output.state.file == "state.csv");
  CHECK(c.output.state.interval_steps == 1000);
  CHECK(c.output.checkpoint.file == "checkpoint.h5");
  CHECK(c.output.checkpoint.interval_steps == 10000);
  CHECK(c.output.final_pdb == "final.pdb");
  CHECK(c.output.progress);
}

TEST_CASE("every key is read, with units converted to MD units") {
  const RunConfig c = parse(R"(
system:
  pdb: /abs/sys.pdb
  forcefield: [amber99sb.xml, tip3p.xml]
  nonbonded_method: cutoff_periodic
  cutoff: 9 Å
  ewald_tolerance: 1.0e-5
  pme_grid: fft_friendly
  switch_distance: 0.8 nm
  dispersion_correction: false
  constraints: allbonds
  rigid_water: false
  hydrogen_mass: 4 amu
  remove_cm_motion: false
  replicate: [2, 3, 4]
platform: {name: cpu, precision: double, device: 1, deterministic: false, neighbor_buffer: 1.5 Å}
minimize: {tolerance: 1 kcal/mol/Å, max_iterations: 500}
integrator:
  type: verlet
  temperature: 310.5 K
  friction: 0.5/ps
  timestep: 4 fs
  seed: 12345
  constraint_tolerance: 1.0e-8
barostat: {pressure: 1 atm, temperature: 305 K, interval: 50}
run: {time: 1 ns, initial_velocities: zero}
output:
  directory: results
  trajectory: {file: t.h5, interval: 10, velocities: true, forces: true, atoms: "0-21,30"}
  state: {file: s.csv, interval: 20}
  checkpoint: {file: c.h5, interval: 30}
  final_pdb: end.pdb
  progress: false
)");
  CHECK(c.system.pdb == "/abs/sys.pdb");
  CHECK(c.system.forcefield == std::vector<std::string>{"amber99sb.xml", "tip3p.xml"});
  CHECK(c.system.nonbonded.method == NonbondedMethod::CutoffPeriodic);
  CHECK(c.system.nonbonded.cutoff_nm == Approx(0.9));
  CHECK(c.system.nonbonded.ewald_tolerance == 1.0e-5);
  CHECK(c.system.nonbonded.pme_grid == PmeGridSizes::FftFriendly);
  CHECK(*c.system.nonbonded.switch_distance_nm == Approx(0.8));
  CHECK_FALSE(c.system.nonbonded.dispersion_correction);
  CHECK(c.system.constraints == ConstraintMode::AllBonds);
  CHECK_FALSE(c.system.rigid_water);
  CHECK(*c.system.hydrogen_mass_amu == 4.0);
  CHECK_FALSE(c.system.remove_cm_motion);
  CHECK(c.system.replicate == std::array<int, 3>{2, 3, 4});
  CHECK(c.platform.name == "cpu");
  CHECK(c.platform.precision == Precision::Double);
  CHECK(c.platform.device == 1);
  CHECK_FALSE(c.platform.deterministic);
  CHECK(c.platform.neighbor_buffer_nm == Approx(0.15));
  REQUIRE(c.minimize.has_value());
  CHECK(c.minimize->tolerance_kj_per_mol_nm == Approx(41.84));
  CHECK(c.minimize->max_iterations == 500);
  CHECK(c.integrator.type == IntegratorType::Verlet);
  CHECK(c.integrator.temperature_k == 310.5);
  CHECK(c.integrator.friction_per_ps == 0.5);
  CHECK(c.integrator.timestep_ps == Approx(0.004));
  CHECK(c.integrator.seed == 12345u);
  CHECK(c.integrator.constraint_tolerance == 1e-8);
  REQUIRE(c.barostat.has_value());
  CHECK(c.barostat->pressure_bar == Approx(1.01325));
  CHECK(c.barostat->temperature_k == 305.0);
  CHECK(c.barostat->interval_steps == 50);
  CHECK(c.run.steps == 250000);  // 1 ns / 4 fs
  CHECK(c.run.initial_velocities == InitialVelocities::Zero);
  CHECK(c.output.directory == "/base/results");
  CHECK(c.output.trajectory.file == "t.h5");
  CHECK(c.output.trajectory.interval_steps == 10);
  CHECK(c.output.trajectory.velocities);
  CHECK(c.output.trajectory.forces);
  CHECK(c.output.trajectory.atoms == "0-21,30");
  CHECK(c.output.state.file == "s.csv");
  CHECK(c.output.state.interval_steps == 20);
  CHECK(c.output.checkpoint.file == "c.h5");
  CHECK(c.output.checkpoint.interval_steps == 30);
  CHECK(c.output.final_pdb == "end.pdb");
  CHECK_FALSE(c.output.progress);
  // Where keys were written, for later checks against the structure file.
  CHECK(c.locations.at("system.cutoff").line == 6);
  CHECK(c.locations.at("system.cutoff").column == 3);
}

TEST_CASE("barostat temperature defaults to the integrator's; empty sections take defaults") {
  const RunConfig c = parse("system: {pdb: a.pdb}\nintegrator: {temperature: 350}\nbarostat:\nminimize:\n");
  REQUIRE(c.barostat.has_value());
  CHECK(c.barostat->temperature_k == 350.0);
  CHECK(c.barostat->pressure_bar == 1.0);
  CHECK(c.barostat->interval_steps == 25);
  REQUIRE(c.minimize.has_value());
  CHECK(c.minimize->tolerance_kj_per_mol_nm == 10.0);
  CHECK(c.minimize->max_iterations == 0);
}

TEST_CASE("platform may be a bare name; outputs may be switched off with null") {
  const RunConfig c = parse("system: {pdb: a.pdb}\nplatform: cuda\noutput: {trajectory: null, state: null, checkpoint: null, final_pdb: null}\n");
  CHECK(c.platform.name == "cuda");
  CHECK(c.output.trajectory.interval_steps == 0);
  CHECK(c.output.state.interval_steps == 0);
  CHECK(c.output.checkpoint.interval_steps == 0);
  CHECK(c.output.checkpoint.file.empty());
  CHECK(c.output.trajectory.file.empty());
  CHECK(c.output.state.file.empty());
  CHECK(c.output.final_pdb.empty());
}

TEST_CASE("atom selections: keywords, index lists and YAML lists") {
  CHECK(parse("system: {pdb: a.pdb}\noutput: {trajectory: {atoms: protein}}\n").output.trajectory.atoms == "protein");
  CHECK(parse("system: {pdb: a.pdb}\noutput: {trajectory: {atoms: not water}}\n").output.trajectory.atoms == "not water");
  CHECK(parse("system: {pdb: a.pdb}\noutput: {trajectory: {atoms: [1, 2, 5]}}\n").output.trajectory.atoms == "1,2,5");
  CHECK(error_of("system: {pdb: a.pdb}\nplatform: {neighbor_buffer: 1 nm}\n") ==
        "test.yaml:2:29: 'neighbor_buffer' must be at most 0.5 nm (typical: 0.1 to 0.2 nm), got 1 nm");
  CHECK(error_of("system: {pdb: a.pdb}\nplatform: {neighbor_buffer: -0.1 nm}\n").find("neighbor_buffer") !=
        std::string::npos);
  CHECK(error_of("system: {pdb: a.pdb}\noutput: {trajectory: {atoms: proteen}}\n")
            .find("test.yaml:2:30: 'atoms' must be all | protein") == 0);
  CHECK(error_of("system: {pdb: a.pdb}\noutput: {trajectory: {atoms: \"5-2\"}}\n").find("'atoms' must be") != std::string::npos);
  // Found while writing fuzz/config.cpp (fuzz/regressions/config/): numbers beyond long long threw
  // std::out_of_range from std::stoll. The range check compares them as whole numbers of any length.
  CHECK(error_of("system: {pdb: a.pdb}\noutput: {trajectory: {atoms: \"99999999999999999999-1\"}}\n")
            .find("'atoms' must be") != std::string::npos);
  CHECK(error_of("system: {pdb: a.pdb}\noutput: {trajectory: {atoms: \"1-099999999999999999999\"}}\n").empty());
  CHECK(error_of("system: {pdb: a.pdb}\noutput: {trajectory: {atoms: \"0010-10, 7\"}}\n").empty());
  CHECK(error_of("system: {pdb: a.pdb}\noutput: {trajectory: {atoms: \"11-010\"}}\n").find("'atoms' must be") !=
        std::string::npos);
}

TEST_CASE("unit conversions") {
  auto q = [](const char* text, Dimension d) { return parse_quantity(text, d).value.value_or(-1.0); };
  CHECK(q("2 fs", Dimension::Time) == Approx(0.002));
  CHECK(q("2fs", Dimension::Time) == Approx(0.002));
  CHECK(q("1.5 ns", Dimension::Time) == Approx(1500.0));
  CHECK(q("0.002", Dimension::Time) == Approx(0.002));
  CHECK(q("10 Å", Dimension::Length) == Approx(1.0));
  CHECK(q("10 A", Dimension::Length) == Approx(1.0));
  CHECK(q("1.2 nm", Dimension::Length) == Approx(1.2));
  CHECK(q("0.3 K", Dimension::Temperature) == Approx(0.3));
  CHECK(q("1/ps", Dimension::Frequency) == Approx(1.0));
  CHECK(q("0.1/fs", Dimension::Frequency) == Approx(100.0));
  CHECK(q("5 ps^-1", Dimension::Frequency) == Approx(5.0));
  CHECK(q("1 atm", Dimension::Pressure) == Approx(1.01325));
  CHECK(q("100 kPa", Dimension::Pressure) == Approx(1.0));
  CHECK(q("4 amu", Dimension::Mass) == Approx(4.0));
  CHECK(q("1 kcal/mol", Dimension::Energy) == Approx(4.184));
  CHECK(q("2.39 kcal/mol/Å", Dimension::Force) == Approx(2.39 * 41.84));
  const QuantityParse bad = parse_quantity("2 parsecs", Dimension::Time);
  CHECK_FALSE(bad.value.has_value());
  CHECK(bad.error.find("unknown time unit 'parsecs'") == 0);
  CHECK_FALSE(parse_quantity("fast", Dimension::Time).value.has_value());
  CHECK_FALSE(parse_quantity("nan ps", Dimension::Time).value.has_value());
  // Finite as written but not once converted: 1e308 um is 1e311 nm.
  const QuantityParse huge = parse_quantity("1e308 um", Dimension::Length);
  CHECK_FALSE(huge.value.has_value());
  CHECK(huge.error == "'1e308 um' is too large: it is not a finite number of nm");
}

TEST_CASE("an unknown key names file, line, column and the closest valid key") {
  CHECK(error_of("system:\n  pdb: a.pdb\nintegrator:\n  temprature: 300\n") ==
        "test.yaml:4:3: unknown key 'temprature' in 'integrator' (did you mean 'temperature'?)");
  CHECK(error_of("system:\n  pdb: a.pdb\n  cutof: 1.0\n") ==
        "test.yaml:3:3: unknown key 'cutof' in 'system' (did you mean 'cutoff'?)");
  CHECK(error_of("sytem:\n  pdb: a.pdb\n") == "test.yaml:1:1: unknown key 'sytem' at the top level (did you mean 'system'?)");
  CHECK(error_of("system: {pdb: a.pdb}\noutput:\n  trajectory: {intervall: 5}\n") ==
        "test.yaml:3:16: unknown key 'intervall' in 'output.trajectory' (did you mean 'interval'?)");
  // Nothing close: the valid keys are listed instead.
  CHECK(error_of("system: {pdb: a.pdb}\nplatform: {zzzzzz: 1}\n") ==
        "test.yaml:2:12: unknown key 'zzzzzz' in 'platform' (valid keys: name, precision, device, deterministic, neighbor_buffer)");
}

TEST_CASE("wrong types are one-line errors with a location") {
  CHECK(error_of("system: {pdb: a.pdb, rigid_water: maybe}\n") == "test.yaml:1:35: 'rigid_water' must be true or false");
  CHECK(error_of("system: {pdb: a.pdb, replicate: [1, 2]}\n") ==
        "test.yaml:1:33: 'replicate' must be a list of three whole numbers, e.g. [2, 2, 2]");
  CHECK(error_of("system: {pdb: a.pdb, replicate: [1, 2, 0]}\n") == "test.yaml:1:40: 'replicate' must be at least 1, got 0");
  CHECK(error_of("system: {pdb: a.pdb}\nrun: {steps: 1.5}\n") == "test.yaml:2:14: 'steps' must be a whole number");
  CHECK(error_of("system: {pdb: a.pdb}\nintegrator: {seed: -4}\n") ==
        "test.yaml:2:20: 'seed' must be a non-negative whole number");
  CHECK(error_of("system: {pdb: a.pdb}\nintegrator: {timestep: [2]}\n") ==
        "test.yaml:2:24: 'timestep' must be a time (a number in ps or a string with a unit)");
  CHECK(error_of("system: {pdb: a.pdb, nonbonded_method: pmee}\n") ==
        "test.yaml:1:40: 'nonbonded_method' must be one of pme | cutoff_periodic | cutoff_nonperiodic | no_cutoff, "
        "got 'pmee' (did you mean 'pme'?)");
  CHECK(error_of("system: {pdb: a.pdb}\nintegrator: {type: langevin}\n").find("'type' must be one of langevin_middle | verlet") !=
        std::string::npos);
  CHECK(error_of("system: {pdb: a.pdb, forcefield: {a: b}}\n").find("'forcefield' must be a file name or a list") !=
        std::string::npos);
}

// Found by fuzz/config.cpp (fuzz/regressions/config/): a non-scalar key escaped as YAML::TypedBadConversion.
TEST_CASE("a key that is a list, a mapping or null is refused, located") {
  CHECK(error_of("system:\n  pdb: a.pdb\n? [a, b]\n: 1\n") ==
        "test.yaml:3:3: a key at the top level must be a name, found a list");
  CHECK(error_of("system:\n  pdb: a.pdb\n  ? {x: 1}\n  : 2\n") ==
        "test.yaml:3:5: a key in 'system' must be a name, found a mapping");
  CHECK(error_of("system:\n  pdb: a.pdb\n  ~: 3\n") == "test.yaml:3:3: a key in 'system' must be a name, found a null");
}

TEST_CASE("duplicate keys and outputs that would overwrite each other are refused, located") {
  CHECK(error_of("system:\n  pdb: a.pdb\n  cutoff: 0.9\n  cutoff: 1.2\n") ==
        "test.yaml:4:3: key 'cutoff' appears twice in 'system' (also on line 3); only one would be used: remove the "
        "other");
  CHECK(error_of("system: {pdb: a.pdb}\nrun: {steps: 10}\nrun: {steps: 20}\n") ==
        "test.yaml:3:1: key 'run' appears twice at the top level (also on line 2); only one would be used: remove "
        "the other");
  CHECK(error_of("system: {pdb: a.pdb}\noutput:\n  state: {file: run.out, interval: 10}\n  final_pdb: run.out\n") ==
        "test.yaml:4:14: 'output.final_pdb' and 'output.state.file' both name the file 'run.out': one output would "
        "overwrite the other; give them different names");
  // A default name taken by an explicit one: the explicit key is blamed.
  CHECK(error_of("system: {pdb: a.pdb}\noutput:\n  state: {file: trajectory.h5}\n") ==
        "test.yaml:3:17: 'output.state.file' and 'output.trajectory.file' both name the file 'trajectory.h5': one "
        "output would overwrite the other; give them different names");
  // An output switched off may share a name.
  CHECK(error_of("system: {pdb: a.pdb}\noutput:\n  trajectory: null\n  state: {file: trajectory.h5}\n").empty());
}

TEST_CASE("out-of-range values are rejected") {
  CHECK(error_of("system: {pdb: a.pdb}\nintegrator: {timestep: -2 fs}\n") ==
        "test.yaml:2:24: 'timestep' must be greater than zero, got -0.002 ps");
  CHECK(error_of("system: {pdb: a.pdb, cutoff: 0}\n") == "test.yaml:1:30: 'cutoff' must be greater than zero, got 0 nm");
  CHECK(error_of("system: {pdb: a.pdb, ewald_tolerance: 2}\n") ==
        "test.yaml:1:39: 'ewald_tolerance' must lie in [1e-10, 0.5) (typical: 5e-4; at 0.5 the Ewald splitting "
        "vanishes, below 1e-10 the error bound is beyond double precision and the PME grid grows without limit), "
        "got 2");
  CHECK(error_of("system: {pdb: a.pdb, ewald_tolerance: 1e-300}\n") ==
        "test.yaml:1:39: 'ewald_tolerance' must lie in [1e-10, 0.5) (typical: 5e-4; at 0.5 the Ewald splitting "
        "vanishes, below 1e-10 the error bound is beyond double precision and the PME grid grows without limit), "
        "got 1e-300");
  CHECK(error_of("system: {pdb: a.pdb, cutoff: 1.0, switch_distance: 1.2}\n") ==
        "test.yaml:1:52: 'switch_distance' (1.2 nm) must be shorter than 'cutoff' (1 nm)");
  CHECK(error_of("system: {pdb: a.pdb, nonbonded_method: no_cutoff, replicate: [2, 2, 2]}\n")
            .find("'replicate' tiles a periodic box") != std::string::npos);
  CHECK(error_of("system: {pdb: a.pdb, nonbonded_method: no_cutoff}\nbarostat: {pressure: 1}\n")
            .find("'barostat' needs a periodic system") != std::string::npos);
  CHECK(error_of("system: {pdb: a.pdb}\nrun: {steps: 10, time: 1 ps}\n") ==
        "test.yaml:2:24: give either 'steps' or 'time' in 'run', not both");
  CHECK(error_of("system: {pdb: a.pdb}\nintegrator: {timestep: 2 fs}\nrun: {time: 0.003 ps}\n") ==
        "test.yaml:3:13: 'time' (0.003 ps) is not a whole number of time steps (0.002 ps)");
  CHECK(error_of("system: {pdb: a.pdb}\nintegrator: {timestep: 2 fs}\nrun: {time: 1e300 ps}\n") ==
        "test.yaml:3:13: 'time' (1e+300 ps) is 5e+302 time steps of 0.002 ps, more than the 9.01e+15 a run can count");
  CHECK(error_of("system: {pdb: a.pdb}\nrun: {steps: 9007199254740993}\n") ==
        "test.yaml:2:14: 'steps' (9007199254740993) is more than the 9.01e+15 a run can count");
  CHECK(error_of("system: {pdb: a.pdb}\nintegrator: {friction: -1/ps}\n") ==
        "test.yaml:2:24: 'friction' must be no less than zero, got -1 1/ps");
}

TEST_CASE("unknown units, missing sections, YAML syntax errors") {
  CHECK(error_of("system: {pdb: a.pdb}\nintegrator: {timestep: 2 fortnights}\n") ==
        "test.yaml:2:24: 'timestep': unknown time unit 'fortnights' (accepted: ps, fs, ns, us, µs, ms)");
  CHECK(error_of("integrator: {timestep: 2 fs}\n") ==
        "test.yaml:1:1: missing section 'system' (with at least 'structure' (or its older name 'pdb'), the structure file, or 'topology' and 'coordinates')");
  CHECK(error_of("system: {forcefield: amber14-all.xml}\n") ==
        "test.yaml:1:9: 'system' needs the key 'structure' (the structure file: PDB or PDBx/mmCIF, e.g. structure: "
        "protein.pdb)");
  CHECK(error_of("system:\n  pdb: [a.pdb\n").find("test.yaml:") == 0);
  CHECK(error_of("system:\n  pdb: [a.pdb\n").find("YAML syntax error") != std::string::npos);
  CHECK(error_of("- just\n- a list\n") == "test.yaml:1:1: the config must be a YAML mapping with a 'system' section");
}

TEST_CASE("a missing structure file is an error at the 'pdb' key") {
  try {
    parse_config("system:\n  pdb: no_such_file.pdb\n", "cfg.yaml", "/nonexistent_dir");
    FAIL("expected an InputError");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()) == "cfg.yaml:2:8: 'pdb': file not found: /nonexistent_dir/no_such_file.pdb");
  }
  REQUIRE_THROWS_AS(load_config("/nonexistent_dir/config.yaml"), InputError);
}

// Found by reading the code while adding fuzz seeds, and by fuzz_prepare_config through the same check
// (fuzz/regressions/config/forcefield-name-too-long.yaml): a force-field name the system cannot look up threw
// std::filesystem::filesystem_error.
TEST_CASE("a force-field name the system cannot look up is an error at its key") {
  const std::string name(256, 'x');  // one component over NAME_MAX (255)
  const std::string base = std::string(MDSIM_SOURCE_DIR) + "/examples/ala2_water";  // holds ala2_water.pdb
  try {
    parse_config("system:\n  pdb: ala2_water.pdb\n  forcefield: [amber14-all.xml, " + name + "]\n", "cfg.yaml", base);
    FAIL("expected an InputError");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()) == "cfg.yaml:3:33: 'forcefield': " + base + "/" + name +
                                       ": File name too long; name a force field XML file (bundled, or relative to "
                                       "the config's folder)");
  }
}

TEST_CASE("system.structure names the structure file; system.pdb is its older name; not both") {
  const RunConfig c = parse("system:\n  structure: a.cif.gz\n");
  CHECK(c.system.pdb == "/base/a.cif.gz");
  CHECK(structure_key(c) == "system.structure");
  CHECK(structure_key(parse("system:\n  pdb: a.pdb\n")) == "system.pdb");
  CHECK(error_of("system:\n  structure: a.cif\n  pdb: a.pdb\n") ==
        "test.yaml:3:8: 'structure' and 'pdb' both name the structure file; keep one ('structure' is the preferred "
        "name, 'pdb' its older one)");
  CHECK(error_of("system:\n  pdb: a.pdb\n  structure: a.cif\n") ==
        "test.yaml:3:14: 'structure' and 'pdb' both name the structure file; keep one ('structure' is the preferred "
        "name, 'pdb' its older one)");
  try {
    parse_config("system:\n  structure: no_such_file.cif\n", "cfg.yaml", "/nonexistent_dir");
    FAIL("expected an InputError");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()) == "cfg.yaml:2:14: 'structure': file not found: /nonexistent_dir/no_such_file.cif");
  }
}

TEST_CASE("the bundled example and documented configs parse") {
  for (const char* f : {"examples/ala2_water/config.yaml", "examples/protocol/config.yaml", "examples/amber/config.yaml",
                        "examples/gromacs/config.yaml", "examples/charmm/config.yaml", "configs/full_reference.yaml",
                        "configs/dhfr_benchmark.yaml",
                        "configs/nve_validation.yaml"}) {
    INFO(f);
    CHECK_NOTHROW(load_config(std::string(MDSIM_SOURCE_DIR) + "/" + f));
  }
}

TEST_CASE("closest_match") {
  CHECK(closest_match("temprature", {"temperature", "timestep"}) == "temperature");
  CHECK(closest_match("tmiestep", {"temperature", "timestep"}) == "timestep");
  CHECK(closest_match("qqqq", {"temperature", "timestep"}).empty());
}

TEST_CASE("output.trajectory.flush_interval: wall seconds, default 10, must be > 0") {
  CHECK(parse("system: {pdb: a.pdb}\n").output.trajectory.flush_interval_s == 10.0);
  CHECK(parse("system: {pdb: a.pdb}\noutput: {trajectory: {flush_interval: 2 s}}\n").output.trajectory.flush_interval_s ==
        Approx(2.0));
  CHECK(parse("system: {pdb: a.pdb}\noutput: {trajectory: {flush_interval: 0.2}}\n").output.trajectory.flush_interval_s ==
        Approx(0.2));
  CHECK(parse("system: {pdb: a.pdb}\noutput: {trajectory: {flush_interval: 250 ms}}\n").output.trajectory.flush_interval_s ==
        Approx(0.25));
  CHECK(parse("system: {pdb: a.pdb}\noutput: {trajectory: {flush_interval: 1 min}}\n").output.trajectory.flush_interval_s ==
        Approx(60.0));
  CHECK(error_of("system: {pdb: a.pdb}\noutput: {trajectory: {flush_interval: 0}}\n") ==
        "test.yaml:2:39: 'flush_interval' must be greater than zero, got 0 s");
  CHECK(error_of("system: {pdb: a.pdb}\noutput: {trajectory: {flush_interval: -2 s}}\n") ==
        "test.yaml:2:39: 'flush_interval' must be greater than zero, got -2 s");
  // Simulated time units (ps) are not wall-clock time.
  CHECK(error_of("system: {pdb: a.pdb}\noutput: {trajectory: {flush_interval: 2 ps}}\n") ==
        "test.yaml:2:39: 'flush_interval' must be a wall-clock time in seconds (a number, or a string with a unit: "
        "\"2 s\", \"500 ms\", \"1 min\"), got '2 ps'");
  CHECK(error_of("system: {pdb: a.pdb}\noutput:\n  trajectory: {flush_intervall: 2}\n") ==
        "test.yaml:3:16: unknown key 'flush_intervall' in 'output.trajectory' (did you mean 'flush_interval'?)");
  // The value reaches the config's location table, as other keys do.
  const RunConfig c = parse("system: {pdb: a.pdb}\noutput:\n  trajectory:\n    flush_interval: 5 s\n");
  REQUIRE(c.locations.count("output.trajectory.flush_interval") == 1);
  CHECK(c.locations.at("output.trajectory.flush_interval").line == 4);
}

TEST_CASE("system.pme_grid: exact (default) | fft_friendly; a bad value names the allowed ones") {
  CHECK(parse("system: {pdb: a.pdb}\n").system.nonbonded.pme_grid == PmeGridSizes::Exact);
  CHECK(parse("system: {pdb: a.pdb, pme_grid: exact}\n").system.nonbonded.pme_grid == PmeGridSizes::Exact);
  CHECK(parse("system: {pdb: a.pdb, pme_grid: fft_friendly}\n").system.nonbonded.pme_grid == PmeGridSizes::FftFriendly);
  CHECK(parse("system:\n  pdb: a.pdb\n  pme_grid: fft_friendly\n").system.nonbonded.pme_grid == PmeGridSizes::FftFriendly);
  CHECK(error_of("system:\n  pdb: a.pdb\n  pme_grid: fast\n") ==
        "test.yaml:3:13: 'pme_grid' must be one of exact | fft_friendly, got 'fast'");
  CHECK(error_of("system: {pdb: a.pdb, pme_grid: fft_frendly}\n") ==
        "test.yaml:1:32: 'pme_grid' must be one of exact | fft_friendly, got 'fft_frendly' (did you mean 'fft_friendly'?)");
  CHECK(error_of("system: {pdb: a.pdb, pme_grid: [exact]}\n") == "test.yaml:1:32: 'pme_grid' must be a string");
  CHECK(error_of("system:\n  pdb: a.pdb\n  pme_gird: exact\n") ==
        "test.yaml:3:3: unknown key 'pme_gird' in 'system' (did you mean 'pme_grid'?)");
  CHECK(to_string(PmeGridSizes::Exact) == std::string("exact"));
  CHECK(to_string(PmeGridSizes::FftFriendly) == std::string("fft_friendly"));
  // The DHFR benchmark config asks for FFT-friendly sizes (as OpenMM's CUDA platform uses).
  CHECK(load_config(std::string(MDSIM_SOURCE_DIR) + "/configs/dhfr_benchmark.yaml").system.nonbonded.pme_grid ==
        PmeGridSizes::FftFriendly);
}

TEST_CASE("physics_settings lists what a resumed run must keep, with units, and not run length or outputs") {
  const RunConfig a = parse("system: {pdb: a.pdb, cutoff: 0.9 nm}\nintegrator: {timestep: 2 fs}\nrun: {steps: 10}\n");
  const RunConfig b =
      parse("system: {pdb: a.pdb, cutoff: 9 A}\nintegrator: {timestep: 0.002 ps}\nrun: {steps: 99}\n"
            "output: {trajectory: {interval: 7}}\nplatform: cpu\n");
  CHECK(physics_settings(a) == physics_settings(b));
  const auto settings = physics_settings(a);
  const auto value = [&settings](const std::string& key) {
    for (const auto& [k, v] : settings)
      if (k == key) return v;
    return std::string("(absent)");
  };
  CHECK(value("system.cutoff") == "0.9 nm");
  CHECK(value("integrator.timestep") == "0.002 ps");
  CHECK(value("integrator.temperature") == "300 K");
  CHECK(value("system.forcefield") == "amber14-all.xml, amber14/tip3p.xml");
  CHECK(value("barostat") == "none");
  const RunConfig c = parse("system: {pdb: a.pdb}\nbarostat: {pressure: 1 atm}\n");
  CHECK(physics_settings(c) != physics_settings(a));
  // A GROMACS top's defines choose what it holds ([position_restraints] under POSRES): recorded for a topology.
  CHECK(value("system.defines") == "(absent)");
  const auto top = [](const std::string& defines) {
    return physics_settings(parse("system: {topology: t.top, coordinates: c.gro" + defines + "}\n"));
  };
  const auto defines_of = [](const std::vector<std::pair<std::string, std::string>>& list) {
    for (const auto& [k, v] : list)
      if (k == "system.defines") return v;
    return std::string("(absent)");
  };
  CHECK(defines_of(top("")) == "none");
  CHECK(defines_of(top(", defines: [POSRES, \"X=1\"]")) == "POSRES, X=1");
}

TEST_CASE("system.remove_cm_motion_interval: steps between removals, positive, only with remove_cm_motion") {
  const RunConfig c = parse("system: {pdb: a.pdb, remove_cm_motion_interval: 100}\n");
  CHECK(c.system.remove_cm_motion);
  CHECK(c.system.remove_cm_motion_interval == 100);
  bool listed = false;
  for (const auto& [key, value] : physics_settings(c))
    if (key == "system.remove_cm_motion_interval") listed = value == "100 steps";
  CHECK(listed);  // a resumed run keeps it
  CHECK(error_of("system: {pdb: a.pdb, remove_cm_motion_interval: 0}\n") ==
        "test.yaml:1:49: 'remove_cm_motion_interval' must be at least 1, got 0");
  CHECK(error_of("system: {pdb: a.pdb, remove_cm_motion: false, remove_cm_motion_interval: 10}\n") ==
        "test.yaml:1:74: 'remove_cm_motion_interval' is set but 'remove_cm_motion' is false: remove one of them");
}

TEST_CASE("run.initial_velocities: from_coordinates is a run's choice, not a stage's") {
  CHECK(parse("system: {pdb: a.pdb}\nrun: {initial_velocities: from_coordinates}\n").run.initial_velocities ==
        InitialVelocities::FromCoordinates);
  CHECK(std::string(to_string(InitialVelocities::FromCoordinates)) == "from_coordinates");
  CHECK(error_of("system: {pdb: a.pdb}\nrun: {initial_velocities: from_file}\n").find("from_coordinates") !=
        std::string::npos);
  CHECK(error_of("system: {pdb: a.pdb}\nstages:\n  - {steps: 10, initial_velocities: from_coordinates}\n")
            .find("'initial_velocities' must be one of temperature | zero") != std::string::npos);
}
