// Staged protocols on the CUDA platform (ala2_water, mixed precision): minimisation with heavy-atom restraints,
// restrained NVT with 1 fs steps (a context of its own), NPT with 2 fs steps and a barostat (another one). The
// state log names the stages and shows restraint energy only where restrained; a run stopped inside the NVT
// stage and resumed there ends bit for bit where the uninterrupted run ends (stage starts are restart points).
// Exits 77 (CTest: skipped) without a GPU.
#include "support/catch.hpp"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "support/ala2_water_run.hpp"
#include "support/checkpoints.hpp"
#include "support/run_mdsim.hpp"
#include "support/scratch.hpp"
#include "support/text_file.hpp"

namespace fs = std::filesystem;
using mdsim_test::scratch;

namespace {

// The protocol; `nvt_steps` and `with_npt` shorten it (the first half of an interrupted run).
fs::path write_config(const fs::path& dir, int nvt_steps, bool with_npt) {
  mdsim_test::Ala2WaterRun run = mdsim_test::ala2_water_run_on_cuda();
  run.seed = 11;
  run.trajectory = "interval: 50";
  run.state = "interval: 50";
  run.checkpoint = "interval: 150";
  run.tail = "stages:\n"
             "  - name: minimize\n"
             "    minimize: {tolerance: 10 kJ/mol/nm, max_iterations: 100}\n"
             "    restraints: {atoms: \"protein and heavy\", k: 1000 kJ/mol/nm^2}\n"
             "  - name: nvt\n"
             "    steps: " + std::to_string(nvt_steps) + "\n"
             "    integrator: {timestep: 1 fs}\n"
             "    restraints: {atoms: \"protein and heavy\", k: 1000 kJ/mol/nm^2, reference: start}\n";
  if (with_npt) run.tail += "  - name: npt\n    steps: 300\n    barostat: {pressure: 1 bar, interval: 25}\n";
  return run.write(dir);
}

}  // namespace

TEST_CASE("CUDA: a staged protocol resumed inside a stage ends where the uninterrupted run ends, bit for bit") {
  const fs::path straight = scratch("straight");
  const auto s = mdsim::test::run_mdsim("run " + write_config(straight, 300, true).string());
  INFO(s.all());
  REQUIRE(s.code == 0);
  REQUIRE(s.all().find("cuda (mixed precision)") != std::string::npos);

  // The state log: steps 50..600, the nvt lines restrained, the npt lines not.
  std::ifstream csv(straight / "out/state.csv");
  std::string line;
  std::getline(csv, line);
  CHECK(line.size() > 27);
  CHECK(line.substr(line.size() - 27) == ",restraint_kj_per_mol,stage");
  int lines = 0;
  while (std::getline(csv, line)) {
    ++lines;
    const std::size_t stage_at = line.rfind(',');
    const std::size_t restraint_at = line.rfind(',', stage_at - 1);
    const std::string stage = line.substr(stage_at + 1);
    const double restraint = std::stod(line.substr(restraint_at + 1, stage_at - restraint_at - 1));
    INFO(line);
    CHECK(std::stoll(line) == 50 * lines);
    CHECK(stage == (lines <= 6 ? "nvt" : "npt"));
    if (stage == "nvt") CHECK(restraint > 0.0);
    else CHECK(restraint == 0.0);
  }
  CHECK(lines == 12);

  const fs::path split = scratch("split");
  REQUIRE(mdsim::test::run_mdsim("run " + write_config(split, 150, false).string()).code == 0);
  write_config(split, 300, true);
  const auto resumed = mdsim::test::run_mdsim("run --resume " + (split / "run.yaml").string());
  INFO(resumed.all());
  REQUIRE(resumed.code == 0);
  mdsim_test::check_same_final_state(straight, split);
  CHECK(mdsim_test::read_text((split / "out/state.csv").string()) ==
        mdsim_test::read_text((straight / "out/state.csv").string()));
  fs::remove_all(straight);
  fs::remove_all(split);
}
