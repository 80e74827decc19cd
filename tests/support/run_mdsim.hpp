// Runs the built `mdsim` binary with arguments and captures its exit code, stdout and stderr; or starts
// `mdsim run` in the background and stops it with SIGINT (the interrupted-run tests).
#pragma once

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

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

// `mdsim run [--resume] CONFIG` as a child process, its stdout and stderr into `log`; the child's pid (-1 if fork
// failed).
inline pid_t start_mdsim_run(const std::filesystem::path& config, const std::filesystem::path& log,
                             bool resume = false) {
  const pid_t child = ::fork();
  if (child == 0) {
    if (!std::freopen(log.c_str(), "w", stdout) || !std::freopen(log.c_str(), "a", stderr)) std::_Exit(126);
    if (resume)
      ::execl(MDSIM_BINARY, MDSIM_BINARY, "run", "--resume", config.c_str(), static_cast<char*>(nullptr));
    else
      ::execl(MDSIM_BINARY, MDSIM_BINARY, "run", config.c_str(), static_cast<char*>(nullptr));
    std::_Exit(127);
  }
  return child;
}

// Runs a Python snippet with Debian's python3 (h5py) on `file` (sys.argv[1]); true when it exits 0.
inline bool python_ok(const std::string& code, const std::filesystem::path& file) {
  const std::string cmd = "/usr/bin/python3 -c \"" + code + "\" " + file.string();
  return std::system(cmd.c_str()) == 0;
}

// Waits (polling every 5 ms) until the text file `path` has at least `lines` lines; false if `timeout` passes
// first.
inline bool wait_for_lines(const std::filesystem::path& path, int lines, std::chrono::seconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    std::ifstream in(path);
    int count = 0;
    for (std::string line; std::getline(in, line);) ++count;
    if (count >= lines) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return false;
}

// Sends SIGINT to `child` and waits for it to end; its wait status.
inline int interrupt(pid_t child) {
  ::kill(child, SIGINT);
  int status = 0;
  ::waitpid(child, &status, 0);
  return status;
}

}  // namespace mdsim::test
