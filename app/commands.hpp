// The subcommands behind app/main.cpp. Each returns the process exit code; InputError escapes as 2,
// other exceptions as 1 (main.cpp maps them).
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace mdsim {

class EnsembleComm;

struct EnergyOptions {
  std::string config;
  bool json = false;
  std::string platform;     // "" = the config's platform.name
  std::string forces_file;  // "" = none
};

struct RunOptions {
  std::string config;
  bool resume = false;
};

// `mdsim prepare`: INPUT is a structure (PDB/mmCIF) or a YAML file with a `prepare:` section; `settings` holds
// the command line's options by prepare key ("padding" -> "1.2 nm"; repeated ones "variant", "forcefield"
// in order), applied over the file's.
struct PrepareCommandOptions {
  std::string input;
  std::vector<std::pair<std::string, std::string>> settings;
};

// `mdsim demux CONFIG [-o DIR]`: engine/demux.hpp.
int command_demux(const std::string& config_path, const std::string& output_dir);
// `comm`: the MPI world when an MPI launcher started the process (launched_ensemble_comm), else null.
int command_run(const RunOptions& options, EnsembleComm* comm);
int command_prepare(const PrepareCommandOptions& options);
int command_energy(const EnergyOptions& options);
int command_check(const std::string& config_path);
// Times force evaluations (CUDA: the per-part table) and then `steps` full steps with the config's
// integrator (0: none; the CPU platform times steps/100), printing µs/step, ns/day and, on CUDA, the
// launches per step.
// timeline: also the CUDA step's timeline (kernels/cuda/step_timeline.hpp), mean µs of each point.
int command_bench(const std::string& config_path, int steps, bool timeline = false, int replicas = 1);
int command_platforms();

}  // namespace mdsim
