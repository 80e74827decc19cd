// `mdsim run` killed or starved of disk space, end to end through the real process (CPU platform,
// ala2_water): "kill -9 leaves a readable trajectory with every flushed frame; a resumed
// run continues to the same final coordinates as an uninterrupted one" and "a disk-full error gives
// one clear error and never leaves a truncated file passed off as complete". The writer-level
// versions are in tests/io/test_trajectory_h5.cpp; here the whole run (writer thread, flush policy from
// output.trajectory.flush_interval, checkpoints, restart logic, exit codes) is exercised.
// External readers: h5py and MDTraj through /usr/bin/python3.
#include "support/catch.hpp"
#include "support/ala2_water_run.hpp"
#include "support/checkpoints.hpp"
#include "support/scratch.hpp"
#include "support/text_file.hpp"

#include <fcntl.h>
#include <hdf5.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "io/hdf5_arrays.hpp"
#include "io/trajectory_h5.hpp"

extern char** environ;

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using mdsim_test::scratch;

namespace {

constexpr int kAtoms = 2269;
constexpr int kFrameInterval = 5;  // steps between trajectory frames and state lines

// ala2_water on the CPU, LangevinMiddle 2 fs, fixed seed; frames and state lines every 5 steps, the
// trajectory flushed at least every `flush_interval` (and before each checkpoint), a checkpoint
// every `checkpoint_interval` steps.
fs::path write_config(const fs::path& dir, int steps, int checkpoint_interval,
                      const std::string& flush_interval = "0.2 s") {
  mdsim_test::Ala2WaterRun run;
  run.seed = 7;
  run.steps = steps;
  run.trajectory = "interval: " + std::to_string(kFrameInterval) + ", flush_interval: " + flush_interval;
  run.state = "interval: " + std::to_string(kFrameInterval);
  run.checkpoint = "interval: " + std::to_string(checkpoint_interval);
  return run.write(dir);
}

std::vector<std::string> nonempty_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::stringstream ss(text);
  for (std::string line; std::getline(ss, line);)
    if (!line.empty()) lines.push_back(line);
  return lines;
}

// The step column of a state log (header skipped).
std::vector<std::int64_t> state_steps(const fs::path& csv) {
  std::vector<std::int64_t> steps;
  const std::vector<std::string> lines = nonempty_lines(mdsim_test::read_text(csv));
  for (std::size_t i = 1; i < lines.size(); ++i) steps.push_back(std::stoll(lines[i].substr(0, lines[i].find(','))));
  return steps;
}

std::vector<std::int64_t> multiples(std::int64_t interval, std::int64_t last) {
  std::vector<std::int64_t> v;
  for (std::int64_t s = interval; s <= last; s += interval) v.push_back(s);
  return v;
}

// `mdsim ARGS` as a child process (posix_spawn) with stdout/stderr to files. `fault_bytes` sets
// MDSIM_FAULT_TRAJECTORY_BYTES for the child (the variable is removed from its environment otherwise).
// The destructor kills and reaps a child that is still running (a failed REQUIRE leaves no orphan).
class MdsimProcess {
 public:
  MdsimProcess(const std::vector<std::string>& args, const fs::path& log_base,
               const std::optional<std::string>& fault_bytes = std::nullopt)
      : out_(log_base.string() + ".out"), err_(log_base.string() + ".err") {
    std::vector<std::string> argv_text{MDSIM_BINARY};
    argv_text.insert(argv_text.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (std::string& a : argv_text) argv.push_back(a.data());
    argv.push_back(nullptr);
    const std::string var = std::string(mdsim::TrajectoryWriter::kFaultInjectionVariable) + "=";
    std::vector<std::string> env_text;
    for (char** e = environ; *e != nullptr; ++e)
      if (std::string(*e).rfind(var, 0) != 0) env_text.emplace_back(*e);
    if (fault_bytes) env_text.push_back(var + *fault_bytes);
    std::vector<char*> envp;
    for (std::string& e : env_text) envp.push_back(e.data());
    envp.push_back(nullptr);

    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, out_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, err_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int rc = ::posix_spawn(&pid_, MDSIM_BINARY, &actions, nullptr, argv.data(), envp.data());
    posix_spawn_file_actions_destroy(&actions);
    if (rc != 0) pid_ = -1;
  }
  ~MdsimProcess() {
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
  }
  MdsimProcess(const MdsimProcess&) = delete;
  MdsimProcess& operator=(const MdsimProcess&) = delete;

  bool started() const { return pid_ > 0; }
  pid_t pid() const { return pid_; }
  bool running() {
    if (pid_ <= 0) return false;
    int status = 0;
    const pid_t r = ::waitpid(pid_, &status, WNOHANG);
    if (r == 0) return true;
    status_ = status;
    pid_ = -1;
    return false;
  }
  // Waits up to `timeout_s` for the process to end; false (and the process killed) on timeout.
  bool wait(double timeout_s) {
    const auto deadline = Clock::now() + std::chrono::duration<double>(timeout_s);
    while (running()) {
      if (Clock::now() > deadline) {
        ::kill(pid_, SIGKILL);
        ::waitpid(pid_, &status_, 0);
        pid_ = -1;
        return false;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return true;
  }
  // The exit code of a process that ended normally, else -1.
  int exit_code() const { return WIFEXITED(status_) ? WEXITSTATUS(status_) : -1; }
  bool killed_by(int signal) const { return WIFSIGNALED(status_) && WTERMSIG(status_) == signal; }
  std::string out() const { return mdsim_test::read_text(out_); }
  std::string err() const { return mdsim_test::read_text(err_); }

 private:
  pid_t pid_ = -1;
  int status_ = 0;
  std::string out_, err_;
};

// Runs `mdsim ARGS` to the end (at most `timeout_s`) and returns its exit code; INFO has its output.
int run_to_end(MdsimProcess& p, double timeout_s) {
  REQUIRE(p.started());
  const bool ended = p.wait(timeout_s);
  INFO(p.out() << p.err());
  REQUIRE(ended);
  return p.exit_code();
}

// Opens an HDF5 file read-only without file locking (the run writes it meanwhile); -1 on failure.
hid_t open_readonly(const fs::path& path) {
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  const hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
#if H5_VERSION_GE(1, 12, 1) || (H5_VERS_MAJOR == 1 && H5_VERS_MINOR == 10 && H5_VERS_RELEASE >= 7)
  H5Pset_file_locking(fapl, false, true);
#endif
  const hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDONLY, fapl);
  H5Pclose(fapl);
  return file;
}

// The step attribute of a checkpoint (written atomically, so it is safe to read while the run goes on).
std::optional<std::int64_t> checkpoint_step(const fs::path& path) {
  if (!fs::exists(path)) return std::nullopt;
  const hid_t file = open_readonly(path);
  if (file < 0) return std::nullopt;
  std::optional<std::int64_t> step;
  const hid_t attr = H5Aopen(file, "step", H5P_DEFAULT);
  std::int64_t value = 0;
  if (attr >= 0 && H5Aread(attr, H5T_NATIVE_INT64, &value) >= 0) step = value;
  if (attr >= 0) H5Aclose(attr);
  H5Fclose(file);
  return step;
}

// The steps of the frames a trajectory holds on disk (nullopt while it cannot be read).
std::optional<std::vector<std::int64_t>> trajectory_steps(const fs::path& path) {
  if (!fs::exists(path)) return std::nullopt;
  const hid_t file = open_readonly(path);
  if (file < 0) return std::nullopt;
  std::optional<std::vector<std::int64_t>> result;
  const hid_t set = H5Dopen2(file, "particles/all/position/step", H5P_DEFAULT);
  if (set >= 0) {
    const hid_t space = H5Dget_space(set);
    hsize_t n = 0;
    if (space >= 0 && H5Sget_simple_extent_ndims(space) == 1 && H5Sget_simple_extent_dims(space, &n, nullptr) == 1) {
      std::vector<std::int64_t> steps(n);
      if (n == 0 || H5Dread(set, H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, steps.data()) >= 0) result = steps;
    }
    if (space >= 0) H5Sclose(space);
    H5Dclose(set);
  }
  H5Fclose(file);
  return result;
}

// What a running `mdsim run` has on disk: its checkpoint's step and its trajectory's frame steps,
// read in a forked child process: a file caught in the middle of a flush may hold metadata that
// HDF5 cannot make sense of, and such a read must not take this test process down with it.
struct OnDisk {
  std::int64_t checkpoint_step = -1;
  std::vector<std::int64_t> frame_steps;
};
std::optional<OnDisk> read_on_disk(const fs::path& checkpoint, const fs::path& trajectory) {
  int fds[2];
  if (::pipe(fds) != 0) return std::nullopt;
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    return std::nullopt;
  }
  if (pid == 0) {
    ::close(fds[0]);
    ::alarm(20);  // never hang on a file being rewritten
    const auto c = checkpoint_step(checkpoint);
    const auto steps = trajectory_steps(trajectory);
    if (!c || !steps) ::_exit(1);
    std::vector<std::int64_t> message{*c};
    message.insert(message.end(), steps->begin(), steps->end());
    const auto bytes = static_cast<ssize_t>(message.size() * sizeof(std::int64_t));
    ::_exit(::write(fds[1], message.data(), static_cast<std::size_t>(bytes)) == bytes ? 0 : 1);
  }
  ::close(fds[1]);
  std::string bytes;
  char buf[4096];
  for (ssize_t r; (r = ::read(fds[0], buf, sizeof buf)) > 0;) bytes.append(buf, static_cast<std::size_t>(r));
  ::close(fds[0]);
  int status = 0;
  if (::waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) return std::nullopt;
  if (bytes.size() < sizeof(std::int64_t) || bytes.size() % sizeof(std::int64_t) != 0) return std::nullopt;
  std::vector<std::int64_t> values(bytes.size() / sizeof(std::int64_t));
  std::memcpy(values.data(), bytes.data(), bytes.size());
  OnDisk d;
  d.checkpoint_step = values[0];
  d.frame_steps.assign(values.begin() + 1, values.end());
  return d;
}

// Runs a Python check script with arguments; returns its exit code. `out` gets its stdout, `log`
// its stdout and stderr (warnings, assertion messages) for INFO.
int python(const fs::path& dir, const std::string& name, const std::string& script, const std::vector<std::string>& args,
           std::string& out, std::string& log) {
  const fs::path py = dir / (name + ".py");
  const fs::path out_file = dir / (name + ".out");
  const fs::path err_file = dir / (name + ".err");
  std::ofstream(py) << script;
  std::string cmd = "/usr/bin/python3 " + py.string();
  for (const std::string& a : args) cmd += " " + a;
  cmd += " > " + out_file.string() + " 2> " + err_file.string();
  const int status = std::system(cmd.c_str());
  out = mdsim_test::read_text(out_file);
  log = out + mdsim_test::read_text(err_file);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// h5py + MDTraj on a trajectory that must not be marked complete: its frames are those of steps
// interval, 2 interval, ..., times = steps * 2 fs, finite coordinates, and MDTraj reads the same
// frames and atoms. With a reference trajectory (same seed, uninterrupted), every frame must equal
// the reference's frame of that step bit for bit. Prints the number of frames.
const char* const kIncompleteCheck = R"PY(
import sys, h5py, mdtraj, numpy as np
path, interval, atoms = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
reference = sys.argv[4] if len(sys.argv) > 4 else None
with h5py.File(path, 'r') as f:
    assert int(f.attrs['complete']) == 0, 'a killed or failed run must leave complete=0'
    pos = f['particles/all/position/value'][:]
    steps = f['particles/all/position/step'][:]
    times = f['particles/all/position/time'][:]
    n = pos.shape[0]
    assert n >= 1, 'no frame survived'
    assert pos.shape == (n, atoms, 3), pos.shape
    assert steps.shape == (n,) and times.shape == (n,), (steps.shape, times.shape)
    assert f['particles/all/box/edges/value'].shape == (n, 3, 3)
    assert f['cell_lengths'].shape == (n, 3) and f['cell_angles'].shape == (n, 3)
    assert np.array_equal(steps, interval * np.arange(1, n + 1)), steps
    assert np.allclose(times, steps * 0.002, rtol=0, atol=1e-9), times
    assert np.isfinite(pos).all()
t = mdtraj.load(path)
assert t.n_frames == n and t.n_atoms == atoms, (t.n_frames, t.n_atoms)
assert np.array_equal(t.xyz, pos)
if reference:
    with h5py.File(reference, 'r') as r:
        assert np.array_equal(r['particles/all/position/value'][:n], pos), 'flushed frames differ from the reference run'
print(n)
)PY";

// A finished trajectory (complete=1) whose steps are interval..last with no duplicate or gap and
// (with a reference) whose frames, steps and times equal the reference's bit for bit.
const char* const kCompleteCheck = R"PY(
import sys, h5py, mdtraj, numpy as np
path, interval, last = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
reference = sys.argv[4] if len(sys.argv) > 4 else None
with h5py.File(path, 'r') as f:
    assert int(f.attrs['complete']) == 1, 'a finished run must leave complete=1'
    steps = f['particles/all/position/step'][:]
    assert np.all(np.diff(steps) > 0), 'steps not strictly increasing: %s' % steps
    assert np.array_equal(steps, np.arange(interval, last + 1, interval)), steps
    pos = f['particles/all/position/value'][:]
    times = f['particles/all/position/time'][:]
    if reference:
        with h5py.File(reference, 'r') as r:
            assert np.array_equal(r['particles/all/position/step'][:], steps)
            assert np.array_equal(r['particles/all/position/time'][:], times)
            assert np.array_equal(r['particles/all/position/value'][:], pos), 'frames differ from the uninterrupted run'
            assert np.array_equal(r['particles/all/box/edges/value'][:], f['particles/all/box/edges/value'][:])
t = mdtraj.load(path)
assert t.n_frames == len(steps), (t.n_frames, len(steps))
print(len(steps))
)PY";

}  // namespace

TEST_CASE("kill -9 during mdsim run keeps every flushed frame; --resume reaches the uninterrupted result") {
  // A checkpoint every 100 steps, frames every 5, the trajectory flushed at least every 0.2 s: the
  // run is killed once a checkpoint exists and frames after it have been flushed, so the restart
  // must drop those frames and write them again.
  constexpr int kSteps = 400;
  constexpr int kCheckpointInterval = 100;
  const fs::path straight = scratch("straight");
  const fs::path killed = scratch("killed");
  const std::string straight_cfg = write_config(straight, kSteps, kCheckpointInterval).string();
  const std::string killed_cfg = write_config(killed, kSteps, kCheckpointInterval).string();

  const auto t0 = Clock::now();
  {
    MdsimProcess p({"run", straight_cfg}, straight / "run");
    REQUIRE(run_to_end(p, 300) == 0);
  }
  const double straight_s = std::chrono::duration<double>(Clock::now() - t0).count();
  CAPTURE(straight_s);

  const fs::path traj = killed / "out" / "trajectory.h5";
  const fs::path checkpoint = killed / "out" / "checkpoint.h5";
  std::int64_t seen_checkpoint = -1, seen_last_frame = -1;
  int unreadable_while_stopped = 0;
  {
    MdsimProcess p({"run", killed_cfg}, killed / "run");
    REQUIRE(p.started());
    bool sent_kill = false;
    const auto deadline = Clock::now() + std::chrono::seconds(300);
    while (!sent_kill && p.running() && Clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      const auto seen = read_on_disk(checkpoint, traj);
      if (!seen || seen->frame_steps.empty() || seen->frame_steps.back() <= seen->checkpoint_step) continue;
      // Stop the process, so that what is on disk can be looked at without a race, and kill it
      // (SIGKILL of the stopped process: nothing more reaches the files) only when the trajectory
      // on disk holds frames after the checkpoint's step.
      REQUIRE(::kill(p.pid(), SIGSTOP) == 0);
      int status = 0;
      REQUIRE(::waitpid(p.pid(), &status, WUNTRACED) == p.pid());
      REQUIRE(WIFSTOPPED(status));
      const auto now = read_on_disk(checkpoint, traj);
      if (now && !now->frame_steps.empty() && now->frame_steps.back() > now->checkpoint_step) {
        seen_checkpoint = now->checkpoint_step;
        seen_last_frame = now->frame_steps.back();
        REQUIRE(::kill(p.pid(), SIGKILL) == 0);
        sent_kill = true;
      } else {
        if (!now) ++unreadable_while_stopped;  // stopped in the middle of a flush: try again later
        REQUIRE(::kill(p.pid(), SIGCONT) == 0);
      }
    }
    INFO(p.out() << p.err());
    CAPTURE(unreadable_while_stopped);
    REQUIRE(sent_kill);  // else the run ended (or hung) before a checkpoint and later frames were flushed
    REQUIRE(p.wait(60));
    REQUIRE(p.killed_by(SIGKILL));
  }
  CAPTURE(seen_checkpoint, seen_last_frame);
  REQUIRE(seen_checkpoint >= kCheckpointInterval);
  REQUIRE(seen_checkpoint < kSteps);
  REQUIRE(seen_last_frame > seen_checkpoint);
  // What the killed run left: its checkpoint, and a trajectory that is not marked complete and
  // holds exactly the frames seen at the kill, intact (equal to the uninterrupted run's frames).
  REQUIRE(checkpoint_step(checkpoint) == seen_checkpoint);
  CHECK_FALSE(fs::exists(killed / "out" / "final.pdb"));
  const fs::path killed_copy = killed / "killed_trajectory.h5";
  fs::copy_file(traj, killed_copy);
  {
    std::string out, log;
    const int rc = python(killed, "check_killed", kIncompleteCheck,
                          {killed_copy.string(), std::to_string(kFrameInterval), std::to_string(kAtoms),
                           (straight / "out" / "trajectory.h5").string()},
                          out, log);
    INFO(log);
    REQUIRE(rc == 0);
    CHECK(std::stoll(out) == seen_last_frame / kFrameInterval);
  }
  // The state log kept every line written before the kill (each line is written through at once,
  // right after its step's frame was queued: the line of the last flushed frame's step may be the
  // one the kill prevented, never an earlier one).
  const std::vector<std::int64_t> killed_lines = state_steps(killed / "out" / "state.csv");
  REQUIRE_FALSE(killed_lines.empty());
  CHECK(killed_lines == multiples(kFrameInterval, killed_lines.back()));
  CHECK(killed_lines.back() + kFrameInterval >= seen_last_frame);

  // Resume to the end: same final coordinates, the same trajectory and state-log steps as the
  // uninterrupted run (the frames the killed run flushed after its checkpoint were replaced).
  {
    MdsimProcess p({"run", "--resume", killed_cfg}, killed / "resume");
    REQUIRE(run_to_end(p, 300) == 0);
    // It continued from the killed run's checkpoint.
    CHECK(p.out().find("ran steps " + std::to_string(seen_checkpoint) + " to " + std::to_string(kSteps)) !=
          std::string::npos);
  }
  CHECK(mdsim_test::differing_vectors(straight / "out" / "checkpoint.h5", checkpoint, "positions_nm") == 0);
  CHECK(checkpoint_step(checkpoint) == kSteps);
  {
    std::string out, log;
    const int rc = python(killed, "check_resumed", kCompleteCheck,
                          {traj.string(), std::to_string(kFrameInterval), std::to_string(kSteps),
                           (straight / "out" / "trajectory.h5").string()},
                          out, log);
    INFO(log);
    CHECK(rc == 0);
  }
  CHECK(state_steps(killed / "out" / "state.csv") == multiples(kFrameInterval, kSteps));
  CHECK(state_steps(straight / "out" / "state.csv") == multiples(kFrameInterval, kSteps));
  fs::remove_all(straight);
  fs::remove_all(killed);
}

TEST_CASE("a full disk under mdsim run: exit code 1, one error line, the trajectory kept but marked incomplete") {
  // MDSIM_FAULT_TRAJECTORY_BYTES lets the trajectory grow by ~200 kB after its header (frames are
  // 27 kB, two to a chunk): the run fails as on a full disk after a few frames. The file grows when
  // it is flushed; with the flush timer out of the way (60 s) it is flushed only before each
  // checkpoint, so where the failure comes does not depend on the machine's speed: at the first
  // frame after the first checkpoint (step 20).
  constexpr int kSteps = 200;
  constexpr int kCheckpointInterval = 20;
  const fs::path dir = scratch("diskfull");
  const std::string cfg = write_config(dir, kSteps, kCheckpointInterval, "60 s").string();
  const fs::path traj = dir / "out" / "trajectory.h5";
  const fs::path checkpoint = dir / "out" / "checkpoint.h5";

  MdsimProcess run({"run", cfg}, dir / "run", std::string("200000"));
  REQUIRE(run_to_end(run, 300) == 1);
  const std::vector<std::string> err = nonempty_lines(run.err());
  INFO(run.out() << run.err());
  REQUIRE(err.size() == 1);
  const std::string& line = err[0];
  CHECK(line.rfind("error: " + traj.string() + ": ", 0) == 0);
  CHECK(line.find("No space left on device") != std::string::npos);
  CHECK(line.find("marked incomplete (complete=0)") != std::string::npos);
  // "... the frames up to the last successful flush (K) are kept ...": the file holds exactly those.
  const std::string marker = "the frames up to the last successful flush (";
  const std::size_t at = line.find(marker);
  REQUIRE(at != std::string::npos);
  const long kept = std::stol(line.substr(at + marker.size()));
  CAPTURE(kept);
  REQUIRE(kept >= 1);
  CHECK(run.out().find("ran steps") == std::string::npos);  // no summary of a finished run

  {
    std::string out, log;
    const int rc = python(dir, "check_full", kIncompleteCheck,
                          {traj.string(), std::to_string(kFrameInterval), std::to_string(kAtoms)}, out, log);
    INFO(log);
    REQUIRE(rc == 0);
    CHECK(std::stol(out) == kept);
  }
  // Nothing claims a finished run: no final structure, the last checkpoint is one the trajectory
  // reaches (it is written only after the trajectory was flushed up to its step), the state log
  // stops before the end.
  CHECK_FALSE(fs::exists(dir / "out" / "final.pdb"));
  const auto c = checkpoint_step(checkpoint);
  REQUIRE(c.has_value());
  CHECK(*c >= kCheckpointInterval);
  CHECK(*c < kSteps);
  CHECK(*c <= kept * kFrameInterval);
  const std::vector<std::int64_t> lines = state_steps(dir / "out" / "state.csv");
  REQUIRE_FALSE(lines.empty());
  CHECK(lines == multiples(kFrameInterval, lines.back()));
  CHECK(lines.back() < kSteps);

  // With space again, --resume continues from that checkpoint and finishes a complete trajectory.
  MdsimProcess resume({"run", "--resume", cfg}, dir / "resume");
  CHECK(run_to_end(resume, 300) == 0);
  CHECK(resume.out().find("ran steps " + std::to_string(*c) + " to " + std::to_string(kSteps)) != std::string::npos);
  CHECK(checkpoint_step(checkpoint) == kSteps);
  {
    std::string out, log;
    const int rc = python(dir, "check_resumed", kCompleteCheck,
                          {traj.string(), std::to_string(kFrameInterval), std::to_string(kSteps)}, out, log);
    INFO(log);
    CHECK(rc == 0);
  }
  CHECK(state_steps(dir / "out" / "state.csv") == multiples(kFrameInterval, kSteps));
  fs::remove_all(dir);
}

TEST_CASE("a malformed MDSIM_FAULT_TRAJECTORY_BYTES is an input error naming the variable") {
  const fs::path dir = scratch("badfault");
  const std::string cfg = write_config(dir, 20, 10).string();
  MdsimProcess run({"run", cfg}, dir / "run", std::string("200k"));
  CHECK(run_to_end(run, 120) == 2);
  const std::vector<std::string> err = nonempty_lines(run.err());
  INFO(run.err());
  REQUIRE(err.size() == 1);
  CHECK(err[0].rfind("error: MDSIM_FAULT_TRAJECTORY_BYTES: expected a whole number of bytes", 0) == 0);
  CHECK(err[0].find("got '200k'") != std::string::npos);
  CHECK_FALSE(fs::exists(dir / "out" / "trajectory.h5"));
  CHECK_FALSE(fs::exists(dir / "out" / "trajectory.h5.partial"));
  fs::remove_all(dir);
}

TEST_CASE("a final structure that cannot be written at the end: the run fails and its trajectory stays incomplete") {
  // complete=1 is the trajectory's last write, after every other output: a failure writing the final
  // PDB (here its temporary name is taken by a folder, which no up-front check can foresee) leaves
  // the trajectory with all its frames but complete=0, no final.pdb and no temporary file.
  constexpr int kSteps = 20;
  const fs::path dir = scratch("finalpdb");
  const fs::path cfg = write_config(dir, kSteps, 10);
  std::ofstream(cfg, std::ios::app) << "  final_pdb: final.pdb\n";
  fs::create_directories(dir / "out" / "final.pdb.partial");

  MdsimProcess run({"run", cfg.string()}, dir / "run");
  REQUIRE(run_to_end(run, 300) != 0);
  const std::vector<std::string> err = nonempty_lines(run.err());
  INFO(run.out() << run.err());
  REQUIRE(err.size() == 1);
  CHECK(err[0].find((dir / "out" / "final.pdb").string() + ": cannot create the PDB file") != std::string::npos);
  CHECK_FALSE(fs::exists(dir / "out" / "final.pdb"));
  CHECK(fs::is_directory(dir / "out" / "final.pdb.partial"));  // left as it was
  std::string out, log;
  const int rc = python(dir, "check_final", kIncompleteCheck,
                        {(dir / "out" / "trajectory.h5").string(), std::to_string(kFrameInterval), std::to_string(kAtoms)},
                        out, log);
  INFO(log);
  REQUIRE(rc == 0);
  CHECK(std::stol(out) == kSteps / kFrameInterval);
  CHECK(state_steps(dir / "out" / "state.csv") == multiples(kFrameInterval, kSteps));
  fs::remove_all(dir);
}
