// State log (io/state_log): format, units, flushing, restart truncation, write errors, and the
// volume/density of a real system against OpenMM 7.7's StateDataReporter (tests/python/check_state_log.py).
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "common/errors.hpp"
#include "io/pdb_reader.hpp"
#include "io/state_log.hpp"
#include "model/elements.hpp"
#include "support/catch.hpp"
#include "support/text_file.hpp"

using namespace mdsim;
namespace fs = std::filesystem;

namespace {

const std::string kShared = MDSIM_TEST_DATA_DIR;
const std::string kSource = MDSIM_SOURCE_DIR;

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : s) {
    if (c == sep) {
      out.push_back(cur);
      cur.clear();
    } else {
      cur.push_back(c);
    }
  }
  out.push_back(cur);
  return out;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> v = split(text, '\n');
  if (!v.empty() && v.back().empty()) v.pop_back();
  return v;
}

StateSample sample(std::int64_t step) {
  StateSample s;
  s.step = step;
  s.time_ps = 0.002 * static_cast<double>(step);
  s.potential_kj_per_mol = -31234.567891 + 0.5 * static_cast<double>(step);
  s.kinetic_kj_per_mol = 5678.1234567;
  s.temperature_k = 301.25;
  s.volume_nm3 = 34.391876;
  s.speed_ns_per_day = 123.4;
  return s;
}

}  // namespace

TEST_CASE("state log: header, units and one line per sample") {
  CHECK(std::string(kStateLogHeader) ==
        "step,time_ps,potential_kj_per_mol,kinetic_kj_per_mol,total_kj_per_mol,temperature_k,volume_nm3,"
        "density_g_per_cm3,speed_ns_per_day");
  // 1000 TIP3P-like waters (18.01528 amu each) in 30 nm^3: 18015.28 amu * 1.66053906660e-24 g/amu / 3e-20 cm^3.
  CHECK(density_g_per_cm3(18015.28, 30.0) == Catch::Approx(0.9971692078579).epsilon(1e-12));

  const std::string line = format_state_line(sample(1000), 18015.28);
  const std::vector<std::string> f = split(line, ',');
  REQUIRE(f.size() == 9);
  CHECK(f[0] == "1000");
  CHECK(f[1] == "2");
  CHECK(f[2] == "-30734.56789");  // 10 significant digits
  CHECK(f[3] == "5678.123457");
  CHECK(f[4] == "-25056.44443");  // total, 10 significant digits
  CHECK(f[5] == "301.25");
  CHECK(f[6] == "34.391876");
  CHECK(std::stod(f[7]) == Catch::Approx(density_g_per_cm3(18015.28, 34.391876)).epsilon(1e-9));
  CHECK(f[8] == "123.4");

  StateSample vacuum = sample(0);
  vacuum.volume_nm3.reset();
  vacuum.speed_ns_per_day.reset();
  const std::vector<std::string> g = split(format_state_line(vacuum, 100.0), ',');
  REQUIRE(g.size() == 9);
  CHECK(g[6].empty());
  CHECK(g[7].empty());
  CHECK(g[8].empty());
}

TEST_CASE("state log: every line is on disk as soon as it is written") {
  const std::string path = "state_flush.csv";
  StateLog log(path, 1000.0);
  CHECK(mdsim_test::read_text(path) == std::string(kStateLogHeader) + "\n");
  log.write(sample(0));
  log.write(sample(500));
  const std::vector<std::string> lines = lines_of(mdsim_test::read_text(path));  // read while the log is open
  REQUIRE(lines.size() == 3);
  CHECK(lines[1] == format_state_line(sample(0), 1000.0));
  CHECK(lines[2] == format_state_line(sample(500), 1000.0));
  log.close();
  REQUIRE_THROWS_AS(log.write(sample(1000)), RuntimeError);
}

TEST_CASE("state log: a restart keeps the lines up to the checkpoint step") {
  const std::string path = "state_restart.csv";
  {
    StateLog log(path, 1000.0);
    for (int step = 0; step <= 5000; step += 1000) log.write(sample(step));
  }
  {  // a killed run may leave half a line
    std::ofstream out(path, std::ios::app | std::ios::binary);
    out << "6000,12,-3";
  }
  {
    StateLog log(path, 1000.0, 2000);
    log.write(sample(2500));
  }
  const std::vector<std::string> lines = lines_of(mdsim_test::read_text(path));
  REQUIRE(lines.size() == 5);
  CHECK(lines[0] == kStateLogHeader);
  CHECK(split(lines[1], ',')[0] == "0");
  CHECK(split(lines[3], ',')[0] == "2000");
  CHECK(lines[4] == format_state_line(sample(2500), 1000.0));
  // A missing file is created; a file with another header is refused.
  fs::remove("state_restart_new.csv");
  { StateLog fresh("state_restart_new.csv", 1.0, 100); }
  CHECK(mdsim_test::read_text("state_restart_new.csv") == std::string(kStateLogHeader) + "\n");
  {
    std::ofstream("state_foreign.csv") << "#\"Step\",\"Time (ps)\"\n1,0.002\n";
  }
  REQUIRE_THROWS_AS(StateLog("state_foreign.csv", 1.0, 100), InputError);
}

TEST_CASE("state log: errors name the file and the reason") {
  REQUIRE_THROWS_WITH(StateLog("no_such_folder_state/state.csv", 1.0),
                      "no_such_folder_state/state.csv: cannot write the state log: folder 'no_such_folder_state' "
                      "does not exist");
  // A full disk while the header is written (the log's temporary name links to /dev/full, which fails
  // every write with ENOSPC): nothing appears under the log's name and the temporary name is removed.
  fs::remove("state_full.csv");
  fs::remove("state_full.csv.partial");
  fs::create_symlink("/dev/full", "state_full.csv.partial");
  REQUIRE_THROWS_WITH(StateLog("state_full.csv", 1.0),
                      "state_full.csv: cannot write the state log: No space left on device");
  CHECK_FALSE(fs::exists(fs::symlink_status("state_full.csv")));
  CHECK_FALSE(fs::exists(fs::symlink_status("state_full.csv.partial")));

  // A write failing after some lines (file size limit in a child process): one clear RuntimeError.
  int fds[2];
  REQUIRE(::pipe(fds) == 0);
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    ::close(fds[0]);
    std::string message = "no error";
    try {
      ::signal(SIGXFSZ, SIG_IGN);
      StateLog log("state_limit.csv", 1.0);
      log.write(sample(0));
      rlimit limit{};
      ::getrlimit(RLIMIT_FSIZE, &limit);
      limit.rlim_cur = static_cast<rlim_t>(fs::file_size("state_limit.csv") + 200);
      ::setrlimit(RLIMIT_FSIZE, &limit);
      for (int step = 1; step < 100; ++step) log.write(sample(step));
    } catch (const RuntimeError& e) {
      message = e.what();
    } catch (const std::exception& e) {
      message = std::string("wrong type: ") + e.what();
    }
    const ssize_t n = ::write(fds[1], message.data(), message.size());
    ::_exit(n < 0 ? 1 : 0);
  }
  ::close(fds[1]);
  std::string message;
  char buf[256];
  for (ssize_t r; (r = ::read(fds[0], buf, sizeof buf)) > 0;) message.append(buf, static_cast<std::size_t>(r));
  ::close(fds[0]);
  int status = 0;
  REQUIRE(::waitpid(pid, &status, 0) == pid);
  CHECK(message.rfind("state_limit.csv: cannot write the state log line of step ", 0) == 0);
  CHECK(message.find("File too large") != std::string::npos);
}

TEST_CASE("state log of ala2_water: volume and density as OpenMM's StateDataReporter reports them") {
  const std::string pdb = kShared + "/systems/ala2_water.pdb";
  const Topology top = read_pdb(pdb);
  REQUIRE(top.box);
  double mass = 0.0;
  for (const TopologyAtom& a : top.atoms) {
    const Element* e = find_element(a.element);
    REQUIRE(e != nullptr);
    mass += e->mass_amu;
  }
  const std::string path = "state_ala2_water.csv";
  {
    StateLog log(path, mass);
    for (int k = 0; k < 3; ++k) {
      StateSample s = sample(1000 * k);
      s.volume_nm3 = top.box->volume();
      log.write(s);
    }
    log.close();
  }
  const char* py = std::getenv("MDSIM_TEST_PYTHON");
  const std::string out = fmt::format("state_py_{}.log", ::getpid());
  const std::string cmd = fmt::format("{} {}/tests/python/check_state_log.py {} {} > {} 2>&1", py && *py ? py : "/usr/bin/python3",
                                      kSource, pdb, path, out);
  const int rc = std::system(cmd.c_str());
  INFO(mdsim_test::read_text(out));
  REQUIRE(rc == 0);
  std::remove(out.c_str());
}

TEST_CASE("state log: the external_kj_per_mol column of runs with external forces") {
  const std::string path = "state_external.csv";
  {
    StateLog log(path, 1000.0, std::nullopt, true);
    StateSample s = sample(1000);
    s.external_kj_per_mol = 12.5;
    log.write(s);
  }
  const std::vector<std::string> lines = lines_of(mdsim_test::read_text(path));
  REQUIRE(lines.size() == 2);
  CHECK(lines[0] == std::string(kStateLogHeader) + ",external_kj_per_mol");
  CHECK(lines[0] == state_log_header(true));
  const std::vector<std::string> fields = split(lines[1], ',');
  CHECK(fields.size() == split(lines[0], ',').size());
  CHECK(fields.back() == "12.5");
  // Appending needs the same columns: a log without the column is refused by a run with external forces.
  REQUIRE_THROWS_AS(StateLog(path, 1000.0, 1000, false), InputError);
  { StateLog again(path, 1000.0, 1000, true); }
  CHECK(lines_of(mdsim_test::read_text(path)).size() == 2);
}

TEST_CASE("state log: the restraint column alone (restrained runs without stages), and with the stage") {
  const std::string path = "state_restraint.csv";
  {
    StateLog log(path, 1000.0, std::nullopt, false, false, true);
    CHECK(log.restraint_column());
    StateSample s = sample(1000);
    s.restraint_kj_per_mol = 3.25;
    log.write(s);
  }
  const std::vector<std::string> lines = lines_of(mdsim_test::read_text(path));
  REQUIRE(lines.size() == 2);
  CHECK(lines[0] == std::string(kStateLogHeader) + ",restraint_kj_per_mol");
  CHECK(lines[0] == state_log_header(false, false, true));
  const std::vector<std::string> fields = split(lines[1], ',');
  CHECK(fields.size() == split(lines[0], ',').size());
  CHECK(fields.back() == "3.25");
  // A staged log has the column too, before the stage's name; a sample without a restraint value writes 0.
  CHECK(state_log_header(true, true) == std::string(kStateLogHeader) + ",external_kj_per_mol,restraint_kj_per_mol,stage");
  CHECK(state_log_header(false, true, true) == state_log_header(false, true));
  StateSample staged = sample(10);
  staged.stage = "nvt";
  CHECK(format_state_line(staged, 1000.0).substr(format_state_line(staged, 1000.0).size() - 6) == ",0,nvt");
  CHECK_FALSE(StateLog("state_plain.csv", 1000.0).restraint_column());
  fs::remove(path);
  fs::remove("state_plain.csv");
}
