// The subcommands behind app/main.cpp. Each returns the process exit code; InputError escapes as 2,
// other exceptions as 1 (main.cpp maps them).
#pragma once

#include <string>

namespace mdsim {

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

int command_run(const RunOptions& options);
int command_energy(const EnergyOptions& options);
int command_check(const std::string& config_path);
int command_bench(const std::string& config_path);
int command_platforms();

}  // namespace mdsim
