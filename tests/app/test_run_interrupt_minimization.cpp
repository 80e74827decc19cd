// A stop request (SIGINT) during a minimisation (`mdsim run` on the CPU platform, alanine dipeptide in water, a
// tolerance the minimiser needs minutes for): the minimiser ends at its last accepted iterate and the run before its
// first step, writing nothing of the partly minimised state. A fresh run leaves no output at all; a stage's
// minimisation leaves the outputs and the checkpoint at the previous stage's end, and --resume starts that stage
// over (engine/simulation.hpp).
#include "support/catch.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>

#include "support/ala2_water_run.hpp"
#include "support/run_mdsim.hpp"
#include "support/scratch.hpp"
#include "support/text_file.hpp"

namespace fs = std::filesystem;
using mdsim::test::python_ok;
using mdsim_test::scratch;

namespace {

// Far below what the minimiser reaches in a few seconds on two cores (it stops only when asked).
const char* kLongMinimization = "{tolerance: 0.0001 kJ/mol/nm, max_iterations: 1000000}";

// `mdsim run CONFIG` started, left `seconds` after `ready` (when given: once that file has `lines` lines), then
// SIGINT; its exit status and log.
struct Stopped {
  int status = 0;
  std::string log;
};
Stopped stop_after(const fs::path& config, double seconds, const fs::path& ready = {}, int lines = 0) {
  const fs::path log = config.parent_path() / ("run" + std::to_string(::getpid()) + ".log");
  const pid_t child = mdsim::test::start_mdsim_run(config, log);
  REQUIRE(child >= 0);
  if (!ready.empty()) mdsim::test::wait_for_lines(ready, lines, std::chrono::seconds(120));
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  Stopped s;
  s.status = mdsim::test::interrupt(child);
  s.log = mdsim_test::read_text(log.string());
  fs::remove(log);
  return s;
}

}  // namespace

TEST_CASE("SIGINT during a fresh run's minimisation: the run ends at once and writes nothing") {
  const fs::path dir = scratch("fresh");
  mdsim_test::Ala2WaterRun run;
  run.steps = 20;
  run.tail = std::string("minimize: ") + kLongMinimization + "\n";
  const fs::path config = run.write(dir);
  const auto t0 = std::chrono::steady_clock::now();
  const Stopped s = stop_after(config, 4.0);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  INFO(s.log);
  REQUIRE(WIFEXITED(s.status));
  CHECK(WEXITSTATUS(s.status) == 1);
  CHECK(s.log.find("(interrupted by a stop request)") != std::string::npos);
  CHECK(s.log.find("stopped during the minimisation, before step 0: no output was written") != std::string::npos);
  CHECK(seconds < 30.0);  // the minimiser reads the request at its next iteration, not at its end
  CHECK_FALSE(fs::exists(dir / "out/trajectory.h5"));
  CHECK_FALSE(fs::exists(dir / "out/state.csv"));
  CHECK_FALSE(fs::exists(dir / "out/checkpoint.h5"));
  // Nothing to resume from; a new run starts over (and is stopped the same way).
  const auto resumed = mdsim::test::run_mdsim("run --resume " + config.string());
  CHECK(resumed.code != 0);
  CHECK(resumed.all().find("no checkpoint to resume from") != std::string::npos);
  fs::remove_all(dir);
}

TEST_CASE("SIGINT during a stage's minimisation: the checkpoint stays at the previous stage's end; --resume redoes "
          "the stage's start") {
  const fs::path dir = scratch("staged");
  mdsim_test::Ala2WaterRun run;
  run.tail = std::string("stages:\n"
                         "  - name: nvt\n"
                         "    steps: 10\n"
                         "  - name: relax\n"
                         "    minimize: ") +
             kLongMinimization +
             "\n"
             "    steps: 10\n";
  const fs::path config = run.write(dir);
  // The state log's line at step 10 ends the nvt stage; the relax stage's minimisation starts right after.
  const Stopped s = stop_after(config, 3.0, dir / "out/state.csv", 2);
  INFO(s.log);
  REQUIRE(WIFEXITED(s.status));
  CHECK(WEXITSTATUS(s.status) == 1);
  CHECK(s.log.find("stage relax: minimized") != std::string::npos);
  CHECK(s.log.find("(interrupted by a stop request)") != std::string::npos);
  CHECK(s.log.find("the outputs end at the previous stage's end") != std::string::npos);
  // The checkpoint: the nvt stage at its end (step 10), not the partly minimised state.
  CHECK(python_ok("import h5py,sys; a=h5py.File(sys.argv[1],'r').attrs; "
                  "assert a['stage_name'] in ('nvt', b'nvt') and int(a['step']) == 10, (a['stage_name'], a['step'])",
                  dir / "out/checkpoint.h5"));
  CHECK(python_ok("import h5py,sys; f=h5py.File(sys.argv[1],'r'); "
                  "assert list(f['particles/all/position/step'][:]) == [10]",
                  dir / "out/trajectory.h5"));
  // Resumed: the relax stage starts over with its minimisation (stopped again here to keep the test short).
  const fs::path resumed_log = dir / "resumed.log";
  const pid_t child = mdsim::test::start_mdsim_run(config, resumed_log, /*resume=*/true);
  REQUIRE(child >= 0);
  std::this_thread::sleep_for(std::chrono::seconds(4));
  const int status = mdsim::test::interrupt(child);
  const std::string log = mdsim_test::read_text(resumed_log.string());
  INFO(log);
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 1);
  CHECK(log.find("stage relax: minimized") != std::string::npos);
  CHECK(log.find("(interrupted by a stop request)") != std::string::npos);
  fs::remove_all(dir);
}
