// Runs the built `mdsim` binary with arguments and captures its exit code, stdout and stderr.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace mdsim::test {

struct CommandResult {
  int code = -1;
  std::string out;  // stdout
  std::string err;  // stderr
  std::string all() const { return out + err; }
};

inline CommandResult run_mdsim(const std::string& args) {
  namespace fs = std::filesystem;
  const std::string base = (fs::temp_directory_path() / ("mdsim_cmd_" + std::to_string(::getpid()))).string();
  const std::string cmd = std::string(MDSIM_BINARY) + " " + args + " > " + base + ".out 2> " + base + ".err";
  const int status = std::system(cmd.c_str());
  CommandResult r;
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  auto slurp = [](const std::string& p) {
    std::ifstream in(p);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  };
  r.out = slurp(base + ".out");
  r.err = slurp(base + ".err");
  fs::remove(base + ".out");
  fs::remove(base + ".err");
  return r;
}

}  // namespace mdsim::test
