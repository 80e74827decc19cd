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

#include "io/hdf5_arrays.hpp"
#include "support/checkpoints.hpp"
#include "support/run_mdsim.hpp"
#include "support/scratch.hpp"
#include "support/text_file.hpp"

namespace fs = std::filesystem;

namespace {

const std::string kPdb = std::string(MDSIM_TEST_DATA_DIR) + "/systems/ala2_water.pdb";

fs::path scratch(const std::string& name) { return mdsim_test::scratch_dir("cuda_stages", name); }

fs::path write_config(const fs::path& dir, int nvt_steps, bool with_npt) {
  const fs::path p = dir / "run.yaml";
  std::ofstream out(p);
  out << "system:\n  pdb: " << kPdb << "\n  cutoff: 1.0 nm\n  constraints: hbonds\n"
      << "platform: {name: cuda, precision: mixed}\n"
      << "integrator: {type: langevin_middle, temperature: 300 K, friction: 1/ps, timestep: 2 fs, seed: 11}\n"
      << "output:\n  directory: out\n  trajectory: {interval: 50}\n  state: {interval: 50}\n"
      << "  checkpoint: {interval: 150}\n  progress: false\n"
      << "stages:\n"
      << "  - name: minimize\n"
      << "    minimize: {tolerance: 10 kJ/mol/nm, max_iterations: 100}\n"
      << "    restraints: {atoms: \"protein and heavy\", k: 1000 kJ/mol/nm^2}\n"
      << "  - name: nvt\n"
      << "    steps: " << nvt_steps << "\n"
      << "    integrator: {timestep: 1 fs}\n"
      << "    restraints: {atoms: \"protein and heavy\", k: 1000 kJ/mol/nm^2, reference: start}\n";
  if (with_npt)
    out << "  - name: npt\n    steps: 300\n    barostat: {pressure: 1 bar, interval: 25}\n";
  return p;
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
  for (const char* dataset : {"positions_nm", "velocities_nm_per_ps"}) {
    INFO(dataset);
    const auto differing =
        mdsim_test::differing_vectors(straight / "out/checkpoint.h5", split / "out/checkpoint.h5", dataset);
    CHECK(differing == 0);
  }
  CHECK(mdsim_test::read_text((split / "out/state.csv").string()) ==
        mdsim_test::read_text((straight / "out/state.csv").string()));
  fs::remove_all(straight);
  fs::remove_all(split);
}
