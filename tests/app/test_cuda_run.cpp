// `mdsim run` end to end on the CUDA platform (ala2_water, mixed precision): a run continued with
// --resume from a checkpoint, and a run stopped by SIGINT and resumed, reach bit for bit the final
// positions and velocities of an uninterrupted run (restart points: Context::mark_restart_point).
// Exits 77 (CTest: skipped) without a GPU.
#include "support/catch.hpp"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "io/hdf5_arrays.hpp"
#include "support/run_mdsim.hpp"
#include "support/scratch.hpp"

namespace fs = std::filesystem;

namespace {

const std::string kPdb = std::string(MDSIM_TEST_DATA_DIR) + "/systems/ala2_water.pdb";

fs::path scratch(const std::string& name) { return mdsim_test::scratch_dir("cuda_run", name); }

// LangevinMiddle 2 fs, PME 1.0 nm, HBonds; frames (with velocities and forces) and state lines every
// `report` steps, a checkpoint every `checkpoint` steps.
fs::path write_config(const fs::path& dir, int steps, int report, int checkpoint) {
  const fs::path p = dir / "run.yaml";
  std::ofstream(p) << "system:\n  pdb: " << kPdb << "\n  cutoff: 1.0 nm\n  constraints: hbonds\n"
                   << "platform: {name: cuda, precision: mixed}\n"
                   << "integrator: {type: langevin_middle, temperature: 300 K, friction: 1/ps, timestep: 2 fs, seed: 7}\n"
                   << "run: {steps: " << steps << "}\n"
                   << "output:\n  directory: out\n  trajectory: {interval: " << report
                   << ", velocities: true, forces: true}\n  state: {interval: " << report << "}\n"
                   << "  checkpoint: {interval: " << checkpoint << "}\n  progress: false\n";
  return p;
}

std::size_t differing(const std::vector<mdsim::Vec3d>& a, const std::vector<mdsim::Vec3d>& b) {
  REQUIRE(a.size() == b.size());
  std::size_t n = 0;
  for (std::size_t i = 0; i < a.size(); ++i) n += (a[i].x != b[i].x || a[i].y != b[i].y || a[i].z != b[i].z);
  return n;
}

void require_same_final_state(const fs::path& a, const fs::path& b) {
  for (const char* dataset : {"positions_nm", "velocities_nm_per_ps"}) {
    const auto x = mdsim::read_vec3_dataset_h5((a / "out/checkpoint.h5").string(), dataset);
    const auto y = mdsim::read_vec3_dataset_h5((b / "out/checkpoint.h5").string(), dataset);
    INFO(dataset);
    CHECK(differing(x, y) == 0);
  }
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
  require_same_final_state(straight, split);
  fs::remove_all(straight);
  fs::remove_all(split);
}

TEST_CASE("CUDA: a run stopped by SIGINT and resumed ends where the uninterrupted run ends, bit for bit") {
  const int steps = 30000;
  const fs::path straight = scratch("sig_straight");
  REQUIRE(mdsim::test::run_mdsim("run " + write_config(straight, steps, 1000, 5000).string()).code == 0);

  const fs::path stopped = scratch("sig_stopped");
  const fs::path config = write_config(stopped, steps, 1000, 5000);
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    const std::string log = (stopped / "run.log").string();
    std::freopen(log.c_str(), "w", stdout);
    std::freopen(log.c_str(), "a", stderr);
    ::execl(MDSIM_BINARY, MDSIM_BINARY, "run", config.c_str(), static_cast<char*>(nullptr));
    std::_Exit(127);
  }
  // Stop it once a state line past step 2000 is out (mid-run, between checkpoints).
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  bool started = false;
  while (std::chrono::steady_clock::now() < deadline) {
    std::ifstream csv(stopped / "out/state.csv");
    std::string line;
    int lines = 0;
    while (std::getline(csv, line)) ++lines;
    if (lines >= 3) {  // header + steps 1000, 2000
      started = true;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ::kill(child, SIGINT);
  int status = 0;
  ::waitpid(child, &status, 0);
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
  require_same_final_state(straight, stopped);
  fs::remove_all(straight);
  fs::remove_all(stopped);
}
