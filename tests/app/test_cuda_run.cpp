// `mdsim run` end to end on the CUDA platform (ala2_water, mixed precision): a run continued with
// --resume from a checkpoint, and a run stopped by SIGINT and resumed, reach bit for bit the final
// positions and velocities of an uninterrupted run (restart points: Context::mark_restart_point).
// Exits 77 (CTest: skipped) without a GPU.
#include "support/catch.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "support/ala2_water_run.hpp"
#include "support/checkpoints.hpp"
#include "support/run_mdsim.hpp"
#include "support/scratch.hpp"

namespace fs = std::filesystem;
using mdsim_test::scratch;

namespace {

// LangevinMiddle 2 fs, PME 1.0 nm, HBonds; frames (with velocities and forces) and state lines every
// `report` steps, a checkpoint every `checkpoint` steps.
fs::path write_config(const fs::path& dir, int steps, int report, int checkpoint) {
  mdsim_test::Ala2WaterRun run = mdsim_test::ala2_water_run_on_cuda();
  run.seed = 7;
  run.steps = steps;
  run.trajectory = "interval: " + std::to_string(report) + ", velocities: true, forces: true";
  run.state = "interval: " + std::to_string(report);
  run.checkpoint = "interval: " + std::to_string(checkpoint);
  return run.write(dir);
}

}  // namespace

TEST_CASE("CUDA: a run continued with --resume ends where the uninterrupted run ends, bit for bit") {
  const fs::path straight = scratch("straight");
  const auto s = mdsim::test::run_mdsim("run " + write_config(straight, 400, 50, 150).string());
  INFO(s.all());
  REQUIRE(s.code == 0);
  REQUIRE(s.all().find("cuda") != std::string::npos);

  // The first part ends at a checkpoint step (150, not a multiple of 100): the resumed run continues
  // from it.
  const fs::path split = scratch("split");
  REQUIRE(mdsim::test::run_mdsim("run " + write_config(split, 150, 50, 150).string()).code == 0);
  write_config(split, 400, 50, 150);
  const auto resumed = mdsim::test::run_mdsim("run --resume " + (split / "run.yaml").string());
  INFO(resumed.all());
  REQUIRE(resumed.code == 0);
  mdsim_test::check_same_final_state(straight, split);
  fs::remove_all(straight);
  fs::remove_all(split);
}

TEST_CASE("CUDA: a run stopped by SIGINT and resumed ends where the uninterrupted run ends, bit for bit") {
  const int steps = 30000;
  const fs::path straight = scratch("sig_straight");
  REQUIRE(mdsim::test::run_mdsim("run " + write_config(straight, steps, 1000, 5000).string()).code == 0);

  const fs::path stopped = scratch("sig_stopped");
  const fs::path config = write_config(stopped, steps, 1000, 5000);
  const pid_t child = mdsim::test::start_mdsim_run(config, stopped / "run.log");
  REQUIRE(child >= 0);
  // Stop it once a state line past step 2000 is out (mid-run, between checkpoints): header + steps 1000, 2000.
  const bool started = mdsim::test::wait_for_lines(stopped / "out/state.csv", 3, std::chrono::seconds(120));
  const int status = mdsim::test::interrupt(child);
  REQUIRE(started);
  REQUIRE(WIFEXITED(status));
  const int code = WEXITSTATUS(status);
  std::ifstream log_in(stopped / "run.log");
  const std::string log((std::istreambuf_iterator<char>(log_in)), std::istreambuf_iterator<char>());
  INFO(log);
  if (code == 0) {
    WARN("the run finished before SIGINT arrived; the stop was not exercised");
  } else {
    CHECK(code == 1);
    CHECK(log.find("stopped after") != std::string::npos);
  }
  const auto resumed = mdsim::test::run_mdsim("run --resume " + config.string());
  INFO(resumed.all());
  REQUIRE(resumed.code == 0);
  mdsim_test::check_same_final_state(straight, stopped);
  fs::remove_all(straight);
  fs::remove_all(stopped);
}
