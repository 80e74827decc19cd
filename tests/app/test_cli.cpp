// The `mdsim` command line: help, version, exit codes (0 ok, 1 runtime failure, 2 usage/input error).
#include "support/catch.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "support/run_mdsim.hpp"
#include "support/scratch.hpp"
#include "support/text_file.hpp"

namespace fs = std::filesystem;
using mdsim_test::scratch;

namespace {

using Result = mdsim::test::CommandResult;

Result run(const std::string& args) {
  Result r = mdsim::test::run_mdsim(args);
  r.out += r.err;  // these checks look at everything the command printed
  return r;
}

using mdsim_test::contains;

}  // namespace

TEST_CASE("help and version exit 0") {
  const Result help = run("--help");
  CHECK(help.code == 0);
  for (const char* sub : {"run", "energy", "check", "bench", "platforms"}) CHECK(contains(help.out, sub));
  for (const char* sub : {"run", "energy", "check", "bench", "platforms"}) {
    INFO(sub);
    const Result r = run(std::string(sub) + " --help");
    CHECK(r.code == 0);
    CHECK(contains(r.out, "Usage"));
  }
  const Result energy_help = run("energy --help");
  CHECK(contains(energy_help.out, "--json"));
  CHECK(contains(energy_help.out, "--platform"));
  CHECK(contains(energy_help.out, "--forces"));
  const Result version = run("--version");
  CHECK(version.code == 0);
  CHECK(contains(version.out, "mdsim 0."));
}

TEST_CASE("usage errors exit 2") {
  CHECK(run("").code == 2);
  CHECK(run("frobnicate").code == 2);
  CHECK(run("check").code == 2);                          // missing CONFIG
  CHECK(run("energy x.yaml --platform gpu").code == 2);   // not a platform
  CHECK(run("run --no-such-flag x.yaml").code == 2);
}

TEST_CASE("platforms always lists the CPU platform and never crashes without a GPU") {
  const Result r = run("platforms");
  CHECK(r.code == 0);
  CHECK(contains(r.out, "cpu"));
  CHECK(contains(r.out, "cuda"));  // either a device line or "not available: <reason>"
}

TEST_CASE("check accepts the bundled example and rejects bad configs with exit 2") {
  const Result ok = run(std::string("check ") + MDSIM_SOURCE_DIR + "/examples/ala2_water/config.yaml");
  CHECK(ok.code == 0);
  CHECK(contains(ok.out, "config OK"));
  // The platform line names what would run and its precision (the CPU platform computes in double).
  const bool cpu = contains(ok.out, "runs on:        cpu");
  CHECK(contains(ok.out, cpu ? "platform:       cpu (double precision) (asked for: auto)"
                             : "platform:       cuda (mixed precision) (asked for: auto)"));

  const fs::path dir = scratch("check");
  {
    std::ofstream(dir / "typo.yaml") << "system:\n  pdb: " << MDSIM_SOURCE_DIR
                                     << "/examples/ala2_water/ala2_water.pdb\nintegrator:\n  temprature: 300 K\n";
  }
  const Result typo = run("check " + (dir / "typo.yaml").string());
  CHECK(typo.code == 2);
  CHECK(contains(typo.out, "typo.yaml:4:3: unknown key 'temprature' in 'integrator' (did you mean 'temperature'?)"));
  // One line of error, nothing else.
  CHECK(std::count(typo.out.begin(), typo.out.end(), '\n') == 1);

  const Result missing = run("check " + (dir / "absent.yaml").string());
  CHECK(missing.code == 2);
  CHECK(contains(missing.out, "absent.yaml: cannot open the config file"));
  fs::remove_all(dir);
}

TEST_CASE("check reads every replica's own start (replicas.coordinates)") {
  const fs::path dir = scratch("check_starts");
  const std::string systems = std::string(MDSIM_SOURCE_DIR) + "/tests/data/shared/systems/";
  const auto config = [&](const std::string& second) {
    std::ofstream(dir / "starts.yaml") << "system: {pdb: " << systems << "ala2_vacuum.pdb, nonbonded_method: no_cutoff}\n"
                                       << "platform: cpu\nreplicas: {exchange: none, count: 2, coordinates: [" << systems
                                       << "ala2_vacuum.pdb, " << second << "]}\n";
    return run("check " + (dir / "starts.yaml").string());
  };
  const Result ok = config(systems + "ala2_vacuum.pdb");
  CHECK(ok.code == 0);
  CHECK(contains(ok.out, "replica starts: 2 from a coordinate file each"));
  const Result bad = config(systems + "ala2_water.pdb");
  CHECK(bad.code == 2);
  CHECK(contains(bad.out, "starts.yaml:3:"));
  CHECK(contains(bad.out, "replica 1: " + systems + "ala2_water.pdb has 2269 atoms, but the system has 22"));
  fs::remove_all(dir);
}

TEST_CASE("input errors in run and energy exit 2 and create no output") {
  const fs::path dir = scratch("run");
  {
    std::ofstream(dir / "bad.yaml") << "system:\n  pdb: missing.pdb\noutput:\n  directory: results\n";
  }
  for (const char* cmd : {"run", "energy", "bench"}) {
    INFO(cmd);
    const Result r = run(std::string(cmd) + " " + (dir / "bad.yaml").string());
    CHECK(r.code == 2);
    CHECK(contains(r.out, "bad.yaml:2:8: 'pdb': file not found"));
    CHECK_FALSE(fs::exists(dir / "results"));
  }
  fs::remove_all(dir);
}

TEST_CASE("bench --replicas needs the CUDA platform") {
  const fs::path dir = scratch("bench_replicas");
  {
    std::ofstream(dir / "cpu.yaml") << "system: {pdb: " << MDSIM_SOURCE_DIR
                                    << "/tests/data/shared/systems/ala2_vacuum.pdb, nonbonded_method: no_cutoff}\n"
                                       "platform: cpu\n";
  }
  const Result cpu = run("bench " + (dir / "cpu.yaml").string() + " --steps 0 --replicas 2");
  CHECK(cpu.code == 2);
  CHECK(contains(cpu.out, "bench --replicas 2: a replica batch runs on the CUDA platform only"));
  const Result zero = run("bench " + (dir / "cpu.yaml").string() + " --replicas 0");
  CHECK(zero.code == 2);
  fs::remove_all(dir);
}
