// The `stages:` list of a config (staged protocols, docs/config.md): what each stage inherits from the top
// level and overrides, the units of its keys, and each mistake as a located error.
#include "support/catch.hpp"
#include "support/config_text.hpp"

#include <string>

#include "common/errors.hpp"
#include "io/config.hpp"
#include "io/units.hpp"

using namespace mdsim;
using Catch::Approx;
using mdsim_test::error_of;
using mdsim_test::parse;

namespace {

const std::string kHead =
    "system:\n"
    "  pdb: a.pdb\n"
    "integrator: {temperature: 300 K, timestep: 2 fs, friction: 1/ps, seed: 7}\n"
    "output: {trajectory: {interval: 100}, state: {interval: 50}, checkpoint: {interval: 1000}}\n";

}  // namespace

TEST_CASE("stages: the usual protocol with its defaults, inheritance and units") {
  const RunConfig c = parse(kHead +
                            "barostat: {pressure: 1 bar, interval: 25}\n"
                            "stages:\n"
                            "  - name: minimize\n"
                            "    minimize: {tolerance: 5 kJ/mol/nm, max_iterations: 100}\n"
                            "    restraints: {atoms: \"protein and heavy\", k: 1000 kJ/mol/nm^2, reference: initial}\n"
                            "  - name: nvt\n"
                            "    time: 10 ps\n"
                            "    integrator: {temperature: 310 K, timestep: 1 fs}\n"
                            "    barostat: null\n"
                            "    restraints: {atoms: backbone, k: 1 kcal/mol/A^2, reference: start}\n"
                            "    initial_velocities: zero\n"
                            "  - time: 4 ps\n"
                            "    output: {trajectory: {interval: 500}, state: {interval: 0}}\n");
  REQUIRE(c.stages.size() == 3);
  const StageConfig& m = c.stages[0];
  CHECK(m.name == "minimize");
  REQUIRE(m.minimize);
  CHECK(m.minimize->tolerance_kj_per_mol_nm == 5.0);
  CHECK(m.minimize->max_iterations == 100);
  CHECK(m.steps == 0);
  REQUIRE(m.restraints);
  CHECK(m.restraints->atoms == "protein and heavy");
  CHECK(m.restraints->k_kj_per_mol_nm2 == 1000.0);
  CHECK(m.restraints->reference == RestraintReference::Initial);

  const StageConfig& nvt = c.stages[1];
  CHECK(nvt.name == "nvt");
  CHECK_FALSE(nvt.minimize);
  CHECK(nvt.steps == 10000);  // 10 ps of 1 fs steps: the stage's own time step
  CHECK(nvt.integrator.temperature_k == 310.0);
  CHECK(nvt.integrator.timestep_ps == Approx(0.001));
  CHECK(nvt.integrator.friction_per_ps == 1.0);  // inherited
  CHECK(nvt.integrator.seed == 7);               // the run's
  CHECK_FALSE(nvt.barostat);                     // null: none in this stage
  REQUIRE(nvt.restraints);
  CHECK(nvt.restraints->k_kj_per_mol_nm2 == Approx(418.4));  // 1 kcal/mol/Å² = 4.184 kJ/mol / 0.01 nm²
  CHECK(nvt.restraints->reference == RestraintReference::Start);
  REQUIRE(nvt.initial_velocities);
  CHECK(*nvt.initial_velocities == InitialVelocities::Zero);
  CHECK(nvt.trajectory_interval_steps == 100);  // the top level's
  CHECK(nvt.state_interval_steps == 50);

  const StageConfig& npt = c.stages[2];
  CHECK(npt.name == "stage3");  // the default name
  CHECK(npt.steps == 2000);
  REQUIRE(npt.barostat);  // the top level's
  CHECK(npt.barostat->pressure_bar == 1.0);
  CHECK(npt.barostat->interval_steps == 25);
  CHECK(npt.barostat->temperature_k == 300.0);
  CHECK_FALSE(npt.restraints);  // a stage without restraints has none
  CHECK(npt.trajectory_interval_steps == 500);
  CHECK(npt.state_interval_steps == 0);
  CHECK(npt.checkpoint_interval_steps == 1000);

  CHECK(c.run.steps == 12000);  // the stages' total
  CHECK(stage_first_steps(c.stages) == std::vector<std::int64_t>{0, 0, 10000});
  CHECK(c.locations.at("stages.1.restraints.atoms").line == 14);
}

TEST_CASE("stages: a barostat's temperature follows the stage's integrator unless written") {
  const std::string text = kHead +
                           "barostat: {pressure: 1 bar}\n"
                           "stages:\n"
                           "  - {name: a, steps: 10, integrator: {temperature: 350 K}}\n"
                           "  - {name: b, steps: 10, integrator: {temperature: 320 K}, barostat: {pressure: 2 bar}}\n";
  const RunConfig c = parse(text);
  CHECK(c.stages[0].barostat->temperature_k == 350.0);
  CHECK(c.stages[1].barostat->temperature_k == 320.0);
  CHECK(c.stages[1].barostat->pressure_bar == 2.0);
  const RunConfig fixed = parse(kHead + "barostat: {pressure: 1 bar, temperature: 300 K}\n"
                                        "stages:\n  - {steps: 10, integrator: {temperature: 350 K}}\n");
  CHECK(fixed.stages[0].barostat->temperature_k == 300.0);
}

TEST_CASE("stages: a restraint reference file and index lists") {
  const RunConfig c = parse(kHead + "stages:\n  - {steps: 5, restraints: {atoms: [0, 4, 7], k: 10, reference: ref.pdb}}\n");
  REQUIRE(c.stages[0].restraints);
  CHECK(c.stages[0].restraints->atoms == "0,4,7");
  CHECK(c.stages[0].restraints->k_kj_per_mol_nm2 == 10.0);  // a bare number is in kJ/mol/nm^2
  CHECK(c.stages[0].restraints->reference == RestraintReference::File);
  CHECK(c.stages[0].restraints->reference_file == "/base/ref.pdb");
}

// Found by reading the code while adding stages to the fuzz seeds (fuzz/regressions/config/): the file check
// threw std::filesystem::filesystem_error for a name the system cannot look up.
TEST_CASE("stages: a restraint reference the system cannot look up is a located error") {
  const std::string name(256, 'y');  // one component over NAME_MAX (255)
  const std::string base = std::string(MDSIM_SOURCE_DIR) + "/examples/ala2_water";  // holds ala2_water.pdb
  try {
    parse_config("system: {pdb: ala2_water.pdb}\nstages:\n  - {steps: 5, restraints: {atoms: all, k: 1, reference: " +
                     name + "}}\n",
                 "test.yaml", base, true);
    FAIL("expected an InputError");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()) == "test.yaml:3:58: 'reference': " + base + "/" + name +
                                       " is not a file (File name too long); give initial (the structure as read), "
                                       "start (the positions at the stage's start) or a PDB file with the same atoms");
  }
}

TEST_CASE("stages: the signature a checkpoint compares") {
  const RunConfig c = parse(kHead + "stages:\n  - {name: a, steps: 10, restraints: {atoms: heavy, k: 100}}\n");
  const std::string s = stage_signature(c.stages[0]);
  CHECK(s.find("steps=10") != std::string::npos);
  CHECK(s.find("restraints=\"heavy\", 100 kJ/mol/nm^2, reference initial") != std::string::npos);
  CHECK(stage_signature(c.stages[0], false).find("steps=") == std::string::npos);
}

TEST_CASE("stages: each mistake is a located error") {
  const std::string S = kHead + "stages:\n";  // stages start on line 6
  CHECK(error_of(S + "  - {name: a, stpes: 10}\n") ==
        "test.yaml:6:15: unknown key 'stpes' in 'stages[1]' (did you mean 'steps'?)");
  CHECK(error_of(kHead + "stages: []\n") ==
        "test.yaml:5:9: 'stages' is empty: give at least one stage (or remove 'stages' for a single run)");
  CHECK(error_of(kHead + "stages: {name: a}\n").rfind("test.yaml:5:9: 'stages' must be a list of stages", 0) == 0);
  CHECK(error_of(S + "  - {name: a}\n") ==
        "test.yaml:6:5: stage 'a' does nothing: give it 'steps' or 'time' (dynamics), 'minimize', or both");
  CHECK(error_of(S + "  - {name: a, steps: 10}\n  - {name: a, steps: 10}\n") ==
        "test.yaml:7:12: stage name 'a' is used twice (also stage 1): give each stage its own name");
  CHECK(error_of(S + "  - {name: 'a,b', steps: 10}\n").rfind("test.yaml:6:12: 'name' ('a,b') must be letters", 0) == 0);
  CHECK(error_of(S + "  - {steps: 10, time: 1 ps}\n") == "test.yaml:6:23: give either 'steps' or 'time' in 'stages[1]', not both");
  CHECK(error_of(S + "  - {time: 3 fs}\n") == "test.yaml:6:12: 'time' (0.003 ps) is not a whole number of time steps (0.002 ps)");
  CHECK(error_of(S + "  - {steps: 10, integrator: {timestep: 2 parsecs}}\n")
            .rfind("test.yaml:6:40: 'timestep': unknown time unit 'parsecs'", 0) == 0);
  CHECK(error_of(S + "  - {steps: 10, restraints: {atoms: heavy, k: 5 kJ/mol/nm}}\n")
            .rfind("test.yaml:6:47: 'k': unknown force constant unit 'kJ/mol/nm' (accepted: kJ/mol/nm^2", 0) == 0);
  CHECK(error_of(S + "  - {steps: 10, restraints: {atoms: heavy, k: -5}}\n") ==
        "test.yaml:6:47: 'k' must be greater than zero, got -5 kJ/mol/nm^2");
  CHECK(error_of(S + "  - {steps: 10, restraints: {k: 5}}\n").rfind("test.yaml:6:29: 'restraints' needs 'atoms'", 0) == 0);
  CHECK(error_of(S + "  - {steps: 10, restraints: {atoms: heavy, k: 5, refrence: start}}\n") ==
        "test.yaml:6:50: unknown key 'refrence' in 'stages[1].restraints' (did you mean 'reference'?)");
  CHECK(error_of(S + "  - {steps: 10, integrator: {seed: 3}}\n").rfind("test.yaml:6:36: 'seed' belongs to the whole run", 0) == 0);
  CHECK(error_of(S + "  - {minimize: null, barostat: null}\n") ==
        "test.yaml:6:32: 'barostat' has no effect in stage 'stage1', which only minimises (no 'steps' or 'time')");
  CHECK(error_of(S + "  - {steps: 10, initial_velocities: from_checkpoint}\n")
            .rfind("test.yaml:6:37: 'initial_velocities' must be one of temperature | zero", 0) == 0);
  CHECK(error_of(kHead + "run: {steps: 100}\nstages:\n  - {steps: 10}\n").rfind(
            "test.yaml:5:14: 'run.steps' and 'stages' both set the run's length", 0) == 0);
  CHECK(error_of(kHead + "minimize: {}\nstages:\n  - {steps: 10}\n").rfind(
            "test.yaml:5:11: 'minimize' and 'stages' both present: with 'stages' a minimisation is a stage", 0) == 0);
  CHECK(error_of("system: {pdb: a.pdb}\noutput: {trajectory: null}\nstages:\n  - {steps: 10, output: {trajectory: "
                 "{interval: 5}}}\n")
            .rfind("test.yaml:4:49: the top level writes no trajectory", 0) == 0);
  CHECK(error_of(S + "  - {steps: 10, output: {state: {file: x.csv}}}\n") ==
        "test.yaml:6:34: unknown key 'file' in 'stages[1].output.state' (valid keys: interval)");
  CHECK(error_of("system: {pdb: a.pdb, nonbonded_method: no_cutoff}\nstages:\n  - {steps: 10, barostat: {}}\n")
            .rfind("test.yaml:3:27: 'barostat' needs a periodic system", 0) == 0);
}

TEST_CASE("force constants: units") {
  const auto q = [](const char* text) { return *parse_quantity(text, Dimension::ForceConstant).value; };
  CHECK(q("1000") == 1000.0);
  CHECK(q("1000 kJ/mol/nm^2") == 1000.0);
  CHECK(q("10 kJ/mol/A^2") == Approx(1000.0));
  CHECK(q("2.39 kcal/mol/Å^2") == Approx(999.976));
  CHECK(q("1 kcal/mol/nm^2") == Approx(4.184));
}
