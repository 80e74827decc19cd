// The `mdsim` command line: help, version, exit codes (0 ok, 1 runtime failure, 2 usage/input error).
#include "support/catch.hpp"

#include <sys/wait.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace fs = std::filesystem;

namespace {

struct Result {
  int code = -1;
  std::string out;  // stdout and stderr together
};

Result mdsim(const std::string& args) {
  const fs::path log = fs::temp_directory_path() / ("mdsim_cli_test_" + std::to_string(::getpid()) + ".log");
  const std::string cmd = std::string(MDSIM_BINARY) + " " + args + " > " + log.string() + " 2>&1";
  const int status = std::system(cmd.c_str());
  Result r;
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::ifstream in(log);
  std::stringstream ss;
  ss << in.rdbuf();
  r.out = ss.str();
  fs::remove(log);
  return r;
}

bool contains(const std::string& hay, const std::string& needle) { return hay.find(needle) != std::string::npos; }

// A scratch folder with a config that points at the bundled example structure.
fs::path scratch(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / ("mdsim_cli_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

}  // namespace

TEST_CASE("help and version exit 0") {
  const Result help = mdsim("--help");
  CHECK(help.code == 0);
  for (const char* sub : {"run", "energy", "check", "bench", "platforms"}) CHECK(contains(help.out, sub));
  for (const char* sub : {"run", "energy", "check", "bench", "platforms"}) {
    INFO(sub);
    const Result r = mdsim(std::string(sub) + " --help");
    CHECK(r.code == 0);
    CHECK(contains(r.out, "Usage"));
  }
  const Result energy_help = mdsim("energy --help");
  CHECK(contains(energy_help.out, "--json"));
  CHECK(contains(energy_help.out, "--platform"));
  CHECK(contains(energy_help.out, "--forces"));
  const Result version = mdsim("--version");
  CHECK(version.code == 0);
  CHECK(contains(version.out, "mdsim 0."));
}

TEST_CASE("usage errors exit 2") {
  CHECK(mdsim("").code == 2);
  CHECK(mdsim("frobnicate").code == 2);
  CHECK(mdsim("check").code == 2);                          // missing CONFIG
  CHECK(mdsim("energy x.yaml --platform gpu").code == 2);   // not a platform
  CHECK(mdsim("run --no-such-flag x.yaml").code == 2);
}

TEST_CASE("platforms always lists the CPU platform and never crashes without a GPU") {
  const Result r = mdsim("platforms");
  CHECK(r.code == 0);
  CHECK(contains(r.out, "cpu"));
  CHECK(contains(r.out, "cuda"));  // either a device line or "not available: <reason>"
}

TEST_CASE("check accepts the bundled example and rejects bad configs with exit 2") {
  const Result ok = mdsim(std::string("check ") + MDSIM_SOURCE_DIR + "/examples/ala2_water/config.yaml");
  CHECK(ok.code == 0);
  CHECK(contains(ok.out, "config OK"));

  const fs::path dir = scratch("check");
  {
    std::ofstream(dir / "typo.yaml") << "system:\n  pdb: " << MDSIM_SOURCE_DIR
                                     << "/examples/ala2_water/ala2_water.pdb\nintegrator:\n  temprature: 300 K\n";
  }
  const Result typo = mdsim("check " + (dir / "typo.yaml").string());
  CHECK(typo.code == 2);
  CHECK(contains(typo.out, "typo.yaml:4:3: unknown key 'temprature' in 'integrator' (did you mean 'temperature'?)"));
  // One line of error, nothing else.
  CHECK(std::count(typo.out.begin(), typo.out.end(), '\n') == 1);

  const Result missing = mdsim("check " + (dir / "absent.yaml").string());
  CHECK(missing.code == 2);
  CHECK(contains(missing.out, "absent.yaml: cannot open the config file"));
  fs::remove_all(dir);
}

TEST_CASE("input errors in run and energy exit 2 and create no output") {
  const fs::path dir = scratch("run");
  {
    std::ofstream(dir / "bad.yaml") << "system:\n  pdb: missing.pdb\noutput:\n  directory: results\n";
  }
  for (const char* cmd : {"run", "energy", "bench"}) {
    INFO(cmd);
    const Result r = mdsim(std::string(cmd) + " " + (dir / "bad.yaml").string());
    CHECK(r.code == 2);
    CHECK(contains(r.out, "bad.yaml:2:8: 'pdb': file not found"));
    CHECK_FALSE(fs::exists(dir / "results"));
  }
  fs::remove_all(dir);
}
