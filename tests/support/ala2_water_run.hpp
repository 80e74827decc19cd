// The config of an `mdsim run` of ala2_water (the shared system) for the command-line tests: LangevinMiddle at
// 300 K, friction 1/ps, 2 fs steps, outputs into out/ without progress lines. Each test sets what it changes and
// writes the config with write(); the text is the same line for line whatever the test (errors name lines).
#pragma once

#include <filesystem>
#include <fstream>
#include <string>

namespace mdsim_test {

inline std::string ala2_water_pdb() { return std::string(MDSIM_TEST_DATA_DIR) + "/systems/ala2_water.pdb"; }

struct Ala2WaterRun {
  std::string system;  // lines after the structure's in `system:`
  std::string platform = "cpu";
  std::string integrator = "type: langevin_middle, temperature: 300 K, friction: 1/ps, timestep: 2 fs";
  int seed = 42;
  int steps = 0;  // the run's length; 0: no `run:` (a staged protocol gives the lengths)
  std::string trajectory = "interval: 10", state = "interval: 10", checkpoint = "interval: 10";  // output.*
  std::string tail;  // after the output section (minimize:, stages:, ...)

  std::string text() const {
    std::string t = "system:\n  pdb: " + ala2_water_pdb() + "\n" + system;
    t += "platform: " + platform + "\n";
    t += "integrator: {" + integrator + ", seed: " + std::to_string(seed) + "}\n";
    if (steps > 0) t += "run: {steps: " + std::to_string(steps) + "}\n";
    t += "output:\n  directory: out\n";
    t += "  trajectory: {" + trajectory + "}\n  state: {" + state + "}\n  checkpoint: {" + checkpoint + "}\n";
    t += "  progress: false\n";
    return t + tail;
  }

  // Writes text() to dir/run.yaml; its path.
  std::filesystem::path write(const std::filesystem::path& dir) const {
    const std::filesystem::path p = dir / "run.yaml";
    std::ofstream(p) << text();
    return p;
  }
};

// On the CUDA platform in mixed precision, with the cutoff and constraints of the CUDA run tests.
inline Ala2WaterRun ala2_water_run_on_cuda() {
  Ala2WaterRun run;
  run.system = "  cutoff: 1.0 nm\n  constraints: hbonds\n";
  run.platform = "{name: cuda, precision: mixed}";
  return run;
}

}  // namespace mdsim_test
