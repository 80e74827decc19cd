// HDF5 trajectory (io/trajectory_h5) and background frame writer (io/frame_writer).
// Files written here are opened by h5py, MDTraj and MDAnalysis through tests/python/check_trajectory.py
// (run with /usr/bin/python3, or $MDSIM_TEST_PYTHON); a missing reader fails the test.
#include <hdf5.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <future>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "common/errors.hpp"
#include "io/atom_selection.hpp"
#include "io/forcefield_xml.hpp"
#include "io/frame_writer.hpp"
#include "io/pdb_reader.hpp"
#include "io/pdb_writer.hpp"
#include "io/trajectory_h5.hpp"
#include "model/forcefield.hpp"
#include "support/catch.hpp"
#include "support/text_file.hpp"

using namespace mdsim;
namespace fs = std::filesystem;

namespace {

const std::string kShared = MDSIM_TEST_DATA_DIR;
const std::string kSource = MDSIM_SOURCE_DIR;

Topology load_system(const std::string& name) {
  Topology t = read_pdb(kShared + "/systems/" + name + ".pdb");
  create_topology_bonds(t, load_standard_residue_data(kSource + "/forcefields"));
  return t;
}

std::string python() {
  const char* p = std::getenv("MDSIM_TEST_PYTHON");
  return p && *p ? p : "/usr/bin/python3";
}

// Runs tests/python/<script> with args; returns the exit status, output in `log`.
int run_python(const std::string& script, const std::string& args, std::string& log) {
  const std::string out = fmt::format("py_{}.log", ::getpid());
  const std::string cmd =
      fmt::format("{} {}/tests/python/{} {} > {} 2>&1", python(), kSource, script, args, out);
  const int rc = std::system(cmd.c_str());
  log = mdsim_test::read_text(out);
  std::remove(out.c_str());
  return rc == -1 ? -1 : WEXITSTATUS(rc);
}

// Synthetic frames of the whole system: displaced PDB positions, a changing (optionally triclinic) box.
struct Frames {
  int atoms = 0;
  std::vector<std::vector<float>> pos, vel, frc;
  std::vector<std::int64_t> steps;
  std::vector<double> times;
  std::vector<Boxd> boxes;
};

Frames make_frames(const Topology& t, int count, int first = 0, float shift = 0.0f) {
  Frames f;
  f.atoms = t.num_atoms();
  const Boxd base = t.box.value_or(Boxd{{3, 0, 0}, {0, 3, 0}, {0, 0, 3}});
  for (int k = first; k < first + count; ++k) {
    std::vector<float> p(3 * static_cast<std::size_t>(f.atoms)), v(p.size()), g(p.size());
    for (int i = 0; i < f.atoms; ++i) {
      const Vec3d& x = t.positions_nm[static_cast<std::size_t>(i)];
      const double d = 0.002 * k * std::sin(0.37 * i + k) + shift;
      p[3 * i] = static_cast<float>(x.x + d);
      p[3 * i + 1] = static_cast<float>(x.y - 0.5 * d);
      p[3 * i + 2] = static_cast<float>(x.z + 0.25 * d);
      for (int c = 0; c < 3; ++c) {
        v[3 * i + c] = static_cast<float>(std::cos(0.11 * i + c + k));
        g[3 * i + c] = static_cast<float>(250.0 * std::sin(0.07 * i - c + 2 * k));
      }
    }
    f.pos.push_back(std::move(p));
    f.vel.push_back(std::move(v));
    f.frc.push_back(std::move(g));
    f.steps.push_back(500 * static_cast<std::int64_t>(k));
    f.times.push_back(500 * k * 0.002);
    const double s = 1.0 + 0.01 * k;
    Boxd b{base.a * s, base.b * s, base.c * s};
    if (k % 2 == 1) {  // triclinic frames, still in OpenMM's reduced form
      b.b.x = 0.2 * b.a.x;
      b.c.x = -0.1 * b.a.x;
      b.c.y = 0.15 * b.b.y;
    }
    f.boxes.push_back(b);
  }
  return f;
}

FrameView view_of(const Frames& f, std::size_t k, bool periodic = true) {
  FrameView v;
  v.step = f.steps[k];
  v.time_ps = f.times[k];
  if (periodic) v.box = f.boxes[k];
  v.positions_nm = f.pos[k];
  v.velocities_nm_per_ps = f.vel[k];
  v.forces_kj_per_mol_nm = f.frc[k];
  return v;
}

void write_f32(const std::string& path, const std::vector<std::vector<float>>& frames, const std::vector<int>& atoms,
               std::size_t count) {
  std::ofstream out(path, std::ios::binary);
  for (std::size_t k = 0; k < count; ++k)
    for (int a : atoms) out.write(reinterpret_cast<const char*>(&frames[k][3 * static_cast<std::size_t>(a)]), 3 * sizeof(float));
  REQUIRE(out.good());
}

template <typename T>
std::string json_list(const std::vector<T>& v) {
  std::string s = "[";
  for (std::size_t i = 0; i < v.size(); ++i) s += fmt::format("{}{}", i ? ", " : "", v[i]);
  return s + "]";
}

std::string json_str_list(const std::vector<std::string>& v) {
  std::string s = "[";
  for (std::size_t i = 0; i < v.size(); ++i) s += fmt::format("{}\"{}\"", i ? ", " : "", v[i]);
  return s + "]";
}

struct Expectation {
  std::string name;               // file stem for the sidecar files
  std::string trajectory, pdb;
  std::vector<int> atoms;         // selected atoms of the full topology
  std::size_t frames = 0;
  bool velocities = false, forces = false, periodic = true;
  int complete = 1;
  std::vector<std::string> readers{"h5py", "mdtraj", "mdanalysis"};
  int protein_atoms = -1;
};

// Writes the sidecar files and runs check_trajectory.py; REQUIREs success.
void check_with_readers(const Topology& full, const Frames& f, const Expectation& e) {
  const Topology sub = subset_topology(full, e.atoms);
  const std::string stem = e.name;
  write_f32(stem + "_pos.f32", f.pos, e.atoms, e.frames);
  if (e.velocities) write_f32(stem + "_vel.f32", f.vel, e.atoms, e.frames);
  if (e.forces) write_f32(stem + "_frc.f32", f.frc, e.atoms, e.frames);
  std::vector<std::string> boxes, names, resnames, elements, bonds;
  std::vector<int> resseq;
  for (std::size_t k = 0; k < e.frames; ++k) {
    const Boxd& b = f.boxes[k];
    boxes.push_back(fmt::format("[[{}, {}, {}], [{}, {}, {}], [{}, {}, {}]]", b.a.x, b.a.y, b.a.z, b.b.x, b.b.y, b.b.z,
                                b.c.x, b.c.y, b.c.z));
  }
  for (const TopologyAtom& a : sub.atoms) {
    names.push_back(a.name);
    resnames.push_back(sub.residues[static_cast<std::size_t>(a.residue)].name);
    resseq.push_back(sub.residues[static_cast<std::size_t>(a.residue)].number);
    elements.push_back(a.element);
  }
  for (const auto& [i, j] : sub.bonds) bonds.push_back(fmt::format("[{}, {}]", i, j));
  std::vector<std::int64_t> steps(f.steps.begin(), f.steps.begin() + static_cast<long>(e.frames));
  std::vector<double> times(f.times.begin(), f.times.begin() + static_cast<long>(e.frames));
  std::string json = "{";
  json += fmt::format("\"trajectory\": \"{}\", \"pdb\": \"{}\", \"frames\": {}, \"atoms\": {}, ", e.trajectory, e.pdb,
                      e.frames, e.atoms.size());
  json += fmt::format("\"positions_file\": \"{}_pos.f32\", ", stem);
  json += e.velocities ? fmt::format("\"velocities_file\": \"{}_vel.f32\", ", stem) : "\"velocities_file\": null, ";
  json += e.forces ? fmt::format("\"forces_file\": \"{}_frc.f32\", ", stem) : "\"forces_file\": null, ";
  json += fmt::format("\"steps\": {}, \"times_ps\": {}, ", json_list(steps), json_list(times));
  json += fmt::format("\"boxes_nm\": {}, ", e.periodic ? json_list(boxes) : "null");
  json += fmt::format("\"bonds\": {}, \"complete\": {}, \"readers\": {}, ", json_list(bonds), e.complete,
                      json_str_list(e.readers));
  json += fmt::format("\"atom_names\": {}, \"residue_names\": {}, \"res_seq\": {}, \"elements\": {}, ",
                      json_str_list(names), json_str_list(resnames), json_list(resseq), json_str_list(elements));
  if (e.protein_atoms >= 0) json += fmt::format("\"protein_atoms\": {}, ", e.protein_atoms);
  json += fmt::format("\"chains\": {}, \"residues\": {}}}", sub.chains.size(), sub.residues.size());
  {
    std::ofstream out(stem + "_expected.json");
    out << json;
    REQUIRE(out.good());
  }
  std::string log;
  const int rc = run_python("check_trajectory.py", stem + "_expected.json", log);
  INFO(log);
  REQUIRE(rc == 0);
}

std::vector<int> all_atoms(const Topology& t) {
  std::vector<int> v(static_cast<std::size_t>(t.num_atoms()));
  for (int i = 0; i < t.num_atoms(); ++i) v[static_cast<std::size_t>(i)] = i;
  return v;
}

// Reads the root attribute `complete` and the number of frames with the HDF5 C API.
std::pair<int, long> read_complete_and_frames(const std::string& path) {
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  const hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  REQUIRE(file >= 0);
  int complete = -1;
  const hid_t attr = H5Aopen(file, "complete", H5P_DEFAULT);
  REQUIRE(attr >= 0);
  REQUIRE(H5Aread(attr, H5T_NATIVE_INT, &complete) >= 0);
  H5Aclose(attr);
  const hid_t set = H5Dopen2(file, "particles/all/position/value", H5P_DEFAULT);
  REQUIRE(set >= 0);
  const hid_t space = H5Dget_space(set);
  hsize_t dims[3] = {0, 0, 0};
  H5Sget_simple_extent_dims(space, dims, nullptr);
  H5Sclose(space);
  H5Dclose(set);
  H5Fclose(file);
  return {complete, static_cast<long>(dims[0])};
}

// In a child process limited to a file size (RLIMIT_FSIZE; writes beyond fail with EFBIG, as on a
// full disk), writes frames through a FrameWriter that flushes after every frame until the error.
// Returns the frames flushed before the error and the error message.
std::pair<long, std::string> write_until_file_size_limit(const Topology& top, const Frames& f, const std::string& path,
                                                         bool reserve) {
  int fds[2];
  REQUIRE(::pipe(fds) == 0);
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    ::close(fds[0]);
    std::string message = "no error";
    int code = 4;
    std::unique_ptr<FrameWriter> writer;
    try {
      ::signal(SIGXFSZ, SIG_IGN);
      auto sink = std::make_unique<TrajectoryWriter>(path, top, TrajectoryOptions{});
      if (!reserve) sink->disable_space_reservation();
      // The writer reserves space ahead for metadata; leave room for that and several frames.
      const rlim_t bytes = static_cast<rlim_t>(fs::file_size(path) + TrajectoryWriter::kSpaceReserveBytes + 400000);
      rlimit limit{};
      ::getrlimit(RLIMIT_FSIZE, &limit);
      limit.rlim_cur = bytes;  // soft limit only, so that it can be raised again without privileges
      if (::setrlimit(RLIMIT_FSIZE, &limit) != 0) throw std::runtime_error("setrlimit failed");
      writer = std::make_unique<FrameWriter>(std::move(sink), FrameLayout{top.num_atoms(), false, false},
                                             FrameWriterOptions{2, 1000.0, 1});
      for (int rep = 0; rep < 50; ++rep)
        for (std::size_t k = 0; k < 4; ++k) writer->write(f.steps[k], f.times[k], f.boxes[k], f.pos[k]);
      writer->close();
    } catch (const RuntimeError& err) {
      message = err.what();
      code = 0;
    } catch (const std::exception& err) {
      message = err.what();
      code = 5;
    }
    const std::string report = fmt::format("{}|{}", writer ? writer->frames_flushed() : -1, message);
    // The limit stands for a full disk; the writer's close then discards what is left into an
    // in-memory file, which a full disk does not limit but RLIMIT_FSIZE would.
    rlimit limit{};
    ::getrlimit(RLIMIT_FSIZE, &limit);
    limit.rlim_cur = limit.rlim_max;
    ::setrlimit(RLIMIT_FSIZE, &limit);
    writer.reset();
    const ssize_t wrote = ::write(fds[1], report.data(), report.size());
    ::_exit(wrote < 0 ? 6 : code);
  }
  ::close(fds[1]);
  std::string report;
  char buf[512];
  for (ssize_t r; (r = ::read(fds[0], buf, sizeof buf)) > 0;) report.append(buf, static_cast<std::size_t>(r));
  ::close(fds[0]);
  int status = 0;
  REQUIRE(::waitpid(pid, &status, 0) == pid);
  INFO(report);
  REQUIRE(WIFEXITED(status));
  REQUIRE(WEXITSTATUS(status) == 0);
  const std::size_t bar = report.find('|');
  REQUIRE(bar != std::string::npos);
  return {std::stol(report.substr(0, bar)), report.substr(bar + 1)};
}

// The readers see an incomplete file holding the first `frames` frames that a writer fed with
// `f`'s four frames over and over had flushed.
void check_incomplete_with_readers(const Topology& top, const Frames& f, const std::string& name,
                                   const std::string& path, long frames) {
  Expectation e;
  e.name = name;
  e.trajectory = path;
  e.pdb = kShared + "/systems/ala2_water.pdb";
  e.atoms = all_atoms(top);
  e.frames = static_cast<std::size_t>(frames);
  e.complete = 0;
  Frames repeated;
  for (long k = 0; k < frames; ++k) {
    const std::size_t j = static_cast<std::size_t>(k % 4);
    repeated.pos.push_back(f.pos[j]);
    repeated.steps.push_back(f.steps[j]);
    repeated.times.push_back(f.times[j]);
    repeated.boxes.push_back(f.boxes[j]);
  }
  check_with_readers(top, repeated, e);
}

}  // namespace

TEST_CASE("trajectory of ala2_water with velocities and forces opens in h5py, MDTraj and MDAnalysis") {
  const Topology top = load_system("ala2_water");
  REQUIRE(top.num_atoms() == 2269);
  REQUIRE(!top.bonds.empty());
  const Frames f = make_frames(top, 5);
  const std::string path = "traj_ala2_water_all.h5";
  TrajectoryOptions o;
  o.velocities = true;
  o.forces = true;
  o.seed = 12345;
  o.config_hash = "abc123";
  {
    TrajectoryWriter w(path, top, o);
    for (std::size_t k = 0; k < 5; ++k) w.write_frame(view_of(f, k));
    CHECK(w.frames() == 5);
    w.close();
  }
  CHECK(read_complete_and_frames(path) == std::make_pair(1, 5L));
  Expectation e;
  e.name = "ala2_water_all";
  e.trajectory = path;
  e.pdb = kShared + "/systems/ala2_water.pdb";
  e.atoms = all_atoms(top);
  e.frames = 5;
  e.velocities = e.forces = true;
  e.protein_atoms = 22;
  check_with_readers(top, f, e);
}

TEST_CASE("trajectory of a selection ('not water', gzip) through the background FrameWriter") {
  const Topology top = load_system("ala2_water");
  const std::vector<int> atoms = select_atoms(top, "not water");
  REQUIRE(atoms.size() == 22);
  const Frames f = make_frames(top, 7);
  const std::string path = "traj_ala2_not_water.h5";
  TrajectoryOptions o;
  o.atoms = atoms;
  o.selection = "not water";
  o.gzip_level = 4;
  FrameWriter writer(std::make_unique<TrajectoryWriter>(path, top, o), {top.num_atoms(), false, false},
                     {2, 10.0, 3});
  for (std::size_t k = 0; k < 7; ++k) {
    if (k % 2 == 0) {
      writer.write(f.steps[k], f.times[k], f.boxes[k], f.pos[k]);
    } else {  // the double-precision entry point must store the same floats
      std::vector<Vec3d> p(static_cast<std::size_t>(f.atoms));
      for (std::size_t i = 0; i < p.size(); ++i) p[i] = Vec3d(f.pos[k][3 * i], f.pos[k][3 * i + 1], f.pos[k][3 * i + 2]);
      writer.write(f.steps[k], f.times[k], f.boxes[k], p);
    }
  }
  writer.close();
  CHECK(writer.frames_written() == 7);
  CHECK(writer.frames_flushed() == 7);
  const std::string pdb = "traj_ala2_not_water.pdb";
  const Topology sub = subset_topology(top, atoms);
  write_pdb(pdb, sub, sub.positions_nm, sub.box);
  Expectation e;
  e.name = "ala2_not_water";
  e.trajectory = path;
  e.pdb = pdb;
  e.atoms = atoms;
  e.frames = 7;
  e.protein_atoms = 22;
  check_with_readers(top, f, e);
}

TEST_CASE("trajectory of a non-periodic system has no box for the readers") {
  const Topology top = load_system("ala2_vacuum");
  REQUIRE(!top.box);
  const Frames f = make_frames(top, 3);
  const std::string path = "traj_ala2_vacuum.h5";
  TrajectoryOptions o;
  o.periodic = false;
  TrajectoryWriter w(path, top, o);
  for (std::size_t k = 0; k < 3; ++k) w.write_frame(view_of(f, k, false));
  w.close();
  Expectation e;
  e.name = "ala2_vacuum";
  e.trajectory = path;
  e.pdb = kShared + "/systems/ala2_vacuum.pdb";
  e.atoms = all_atoms(top);
  e.frames = 3;
  e.periodic = false;
  e.protein_atoms = 22;
  check_with_readers(top, f, e);
  // A periodic trajectory refuses a frame without a box.
  TrajectoryOptions p;
  TrajectoryWriter w2("traj_needs_box.h5", top, p);
  REQUIRE_THROWS_AS(w2.write_frame(view_of(f, 0, false)), RuntimeError);
}

TEST_CASE("a killed writer leaves a readable file with every flushed frame") {
  const Topology top = load_system("ala2_water");
  const Frames f = make_frames(top, 9);

  SECTION("TrajectoryWriter killed after a flush and 120 unflushed frames (plain and gzip chunks)") {
    for (const int gzip : {0, 4}) {
      const std::string path = fmt::format("traj_killed_direct_gzip{}.h5", gzip);
      const pid_t pid = ::fork();
      REQUIRE(pid >= 0);
      if (pid == 0) {
        try {
          TrajectoryOptions o;
          o.velocities = true;
          o.gzip_level = gzip;
          TrajectoryWriter w(path, top, o);
          for (std::size_t k = 0; k < 6; ++k) w.write_frame(view_of(f, k));
          w.flush();
          // Many more frames without a flush (enough to push chunks out of HDF5's chunk cache).
          for (int k = 0; k < 120; ++k) w.write_frame(view_of(f, 8));
          ::raise(SIGKILL);
        } catch (...) {
        }
        ::_exit(3);
      }
      int status = 0;
      REQUIRE(::waitpid(pid, &status, 0) == pid);
      REQUIRE(WIFSIGNALED(status));
      REQUIRE(WTERMSIG(status) == SIGKILL);
      CHECK(read_complete_and_frames(path) == std::make_pair(0, 6L));
      Expectation e;
      e.name = fmt::format("killed_direct_gzip{}", gzip);
      e.trajectory = path;
      e.pdb = kShared + "/systems/ala2_water.pdb";
      e.atoms = all_atoms(top);
      e.frames = 6;
      e.velocities = true;
      e.complete = 0;
      check_with_readers(top, f, e);
    }
  }

  SECTION("FrameWriter killed: its flush policy (every 4 frames) decides what survives; readers look in while it runs") {
    const std::string path = "traj_killed_thread.h5";
    int ready[2];
    REQUIRE(::pipe(ready) == 0);
    const pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      ::close(ready[0]);
      try {
        auto sink = std::make_unique<TrajectoryWriter>(path, top, TrajectoryOptions{});
        const FrameLayout layout = sink->frame_layout();
        FrameWriter writer(std::move(sink), layout, {3, 1000.0, 4});
        for (std::size_t k = 0; k < 8; ++k) writer.write(f.steps[k], f.times[k], f.boxes[k], f.pos[k]);
        // Frames 0-7 get flushed by the policy (after 4 and 8); frame 8 is written but never flushed.
        writer.write(f.steps[8], f.times[8], f.boxes[8], f.pos[8]);
        for (int i = 0; i < 2000 && (writer.frames_written() < 9 || writer.frames_flushed() < 8); ++i)
          std::this_thread::sleep_for(std::chrono::milliseconds(5));
        if (writer.frames_written() == 9 && writer.frames_flushed() == 8) {
          const char go = 'r';
          ::alarm(300);  // never outlive a parent that fails before it kills this process
          if (::write(ready[1], &go, 1) == 1)
            for (;;) ::pause();  // the parent reads the file, then kills this process
        }
      } catch (...) {
      }
      ::_exit(3);
    }
    ::close(ready[1]);
    struct KillOnExit {  // a failed check below must not leave the child waiting
      pid_t pid;
      bool reaped = false;
      ~KillOnExit() {
        if (!reaped) {
          ::kill(pid, SIGKILL);
          ::waitpid(pid, nullptr, 0);
        }
      }
    } guard{pid};
    char go = 0;
    const bool running = ::read(ready[0], &go, 1) == 1;
    ::close(ready[0]);
    if (running) {
      // While the writer holds the file open, every reader opens it and sees the flushed frames.
      CHECK(read_complete_and_frames(path) == std::make_pair(0, 8L));
      Expectation live;
      live.name = "live_reader";
      live.trajectory = path;
      live.pdb = kShared + "/systems/ala2_water.pdb";
      live.atoms = all_atoms(top);
      live.frames = 8;
      live.complete = 0;
      check_with_readers(top, f, live);
      ::kill(pid, SIGKILL);
    }
    int status = 0;
    REQUIRE(::waitpid(pid, &status, 0) == pid);
    guard.reaped = true;
    REQUIRE(running);
    REQUIRE(WIFSIGNALED(status));
    REQUIRE(WTERMSIG(status) == SIGKILL);
    CHECK(read_complete_and_frames(path) == std::make_pair(0, 8L));
    Expectation e;
    e.name = "killed_thread";
    e.trajectory = path;
    e.pdb = kShared + "/systems/ala2_water.pdb";
    e.atoms = all_atoms(top);
    e.frames = 8;
    e.complete = 0;
    check_with_readers(top, f, e);
  }
}

TEST_CASE("disk full: a clear RuntimeError and the file stays marked incomplete") {
  const Topology top = load_system("ala2_water");
  const Frames f = make_frames(top, 4);

  SECTION("fault-injection byte limit through the FrameWriter") {
    const std::string path = "traj_fault_injection.h5";
    auto sink = std::make_unique<TrajectoryWriter>(path, top, TrajectoryOptions{});
    // Room for a few frames (27 KB each, two per chunk).
    sink->set_fault_injection_byte_limit(fs::file_size(path) + 200000);
    auto writer = std::make_unique<FrameWriter>(std::move(sink), FrameLayout{top.num_atoms(), false, false},
                                                FrameWriterOptions{2, 1000.0, 1});
    std::string message;
    try {
      for (int rep = 0; rep < 20; ++rep)
        for (std::size_t k = 0; k < 4; ++k) writer->write(f.steps[k], f.times[k], f.boxes[k], f.pos[k]);
      writer->flush();
    } catch (const RuntimeError& err) {
      message = err.what();
    }
    INFO(message);
    CHECK(message.find(path) != std::string::npos);
    CHECK(message.find("No space left on device") != std::string::npos);
    CHECK(message.find("incomplete") != std::string::npos);
    // The error stays: every later call reports it again, and close() does not mark the file complete.
    REQUIRE_THROWS_AS(writer->acquire(), RuntimeError);
    REQUIRE_THROWS_AS(writer->close(), RuntimeError);
    const long written = static_cast<long>(writer->frames_written());
    CHECK(writer->frames_flushed() == written);  // flushed after every frame
    CHECK(written >= 3);
    writer.reset();
    const auto [complete, frames] = read_complete_and_frames(path);
    CHECK(complete == 0);
    CHECK(frames == written);
    check_incomplete_with_readers(top, f, "fault_injection", path, written);
  }

  SECTION("a real write failure: file size limit (RLIMIT_FSIZE, EFBIG) in a child process") {
    const std::string path = "traj_rlimit.h5";
    const auto [flushed, message] = write_until_file_size_limit(top, f, path, true);
    INFO(message);
    CHECK(message.find(path) != std::string::npos);
    CHECK(message.find("File too large") != std::string::npos);
    CHECK(message.find("incomplete") != std::string::npos);
    CHECK(message.find('\n') == std::string::npos);
    // Space is reserved before anything is written: the failure leaves the file exactly as at its
    // last flush, and every reader opens it.
    REQUIRE(flushed >= 2);
    CHECK(read_complete_and_frames(path) == std::make_pair(0, flushed));
    check_incomplete_with_readers(top, f, "rlimit", path, flushed);
  }

  SECTION("the same without space reservation (file systems without fallocate)") {
    const std::string path = "traj_rlimit_no_reserve.h5";
    const auto [flushed, message] = write_until_file_size_limit(top, f, path, false);
    INFO(message);
    CHECK(message.find(path) != std::string::npos);
    CHECK(message.find("File too large") != std::string::npos);
    CHECK(message.find("incomplete") != std::string::npos);
    CHECK(flushed >= 2);
    // The failure may hit HDF5 half-way through a flush; whatever reached the disk, the file never
    // claims to be complete.
    H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
    const hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
    if (file >= 0) {
      H5Fclose(file);
      const auto [complete, frames] = read_complete_and_frames(path);
      CHECK(complete == 0);
      CHECK(frames >= flushed);
    }
  }
}

TEST_CASE("restart: reopening a trajectory keeps the frames up to the checkpoint step and appends") {
  const Topology top = load_system("ala2_water");
  const std::vector<int> atoms = select_atoms(top, "not water");
  const Frames first = make_frames(top, 5);                // steps 0..2000
  const Frames second = make_frames(top, 3, 3, 0.05f);     // steps 1500..2500, other positions
  const std::string path = "traj_append.h5";
  TrajectoryOptions o;
  o.atoms = atoms;
  {
    TrajectoryWriter w(path, top, o);
    for (std::size_t k = 0; k < 5; ++k) w.write_frame(view_of(first, k));
    // killed before close: complete stays 0
  }
  CHECK(read_complete_and_frames(path) == std::make_pair(0, 5L));
  o.append_after_step = 1000;  // checkpoint at step 1000: frames 0, 500, 1000 stay
  {
    TrajectoryWriter w(path, top, o);
    CHECK(w.frames() == 3);
    for (std::size_t k = 0; k < 3; ++k) w.write_frame(view_of(second, k));
    w.close();
  }
  Frames expected = make_frames(top, 3);
  for (std::size_t k = 0; k < 3; ++k) {
    expected.pos.push_back(second.pos[k]);
    expected.steps.push_back(second.steps[k]);
    expected.times.push_back(second.times[k]);
    expected.boxes.push_back(second.boxes[k]);
  }
  const std::string pdb = "traj_append.pdb";
  const Topology sub = subset_topology(top, atoms);
  write_pdb(pdb, sub, sub.positions_nm, sub.box);
  Expectation e;
  e.name = "append";
  e.trajectory = path;
  e.pdb = pdb;
  e.atoms = atoms;
  e.frames = 6;
  check_with_readers(top, expected, e);

  // Appending with another selection or other datasets is refused.
  TrajectoryOptions other;
  other.append_after_step = 1000;
  REQUIRE_THROWS_AS(TrajectoryWriter(path, top, other), InputError);
  TrajectoryOptions with_velocities = o;
  with_velocities.velocities = true;
  REQUIRE_THROWS_AS(TrajectoryWriter(path, top, with_velocities), InputError);
  // A missing file is simply created.
  fs::remove("traj_append_new.h5");
  TrajectoryWriter fresh("traj_append_new.h5", top, o);
  CHECK(fresh.frames() == 0);
}

TEST_CASE("trajectory construction errors are one clear InputError") {
  const Topology top = load_system("ala2_vacuum");
  TrajectoryOptions o;
  o.periodic = false;
  REQUIRE_THROWS_WITH(TrajectoryWriter("no_such_folder_xyz/traj.h5", top, o),
                      "no_such_folder_xyz/traj.h5: cannot write the trajectory: folder 'no_such_folder_xyz' does not "
                      "exist");
  {
    std::ofstream("a_plain_file.txt") << "x";
  }
  REQUIRE_THROWS_WITH(TrajectoryWriter("a_plain_file.txt/traj.h5", top, o),
                      "a_plain_file.txt/traj.h5: cannot write the trajectory: 'a_plain_file.txt' is not a folder");
  if (::geteuid() != 0) {  // root may write anywhere
    fs::create_directories("read_only_folder");
    fs::permissions("read_only_folder", fs::perms::owner_read | fs::perms::owner_exec);
    REQUIRE_THROWS_AS(TrajectoryWriter("read_only_folder/traj.h5", top, o), InputError);
    fs::permissions("read_only_folder", fs::perms::owner_all);
  }
  o.atoms = {0, 5, 22};
  REQUIRE_THROWS_WITH(TrajectoryWriter("traj_bad_sel.h5", top, o),
                      "traj_bad_sel.h5: selected atom index 22 is outside 0..21");
  o.atoms = {3, 2};
  REQUIRE_THROWS_AS(TrajectoryWriter("traj_bad_sel.h5", top, o), InputError);
  o.atoms.clear();
  o.gzip_level = 12;
  REQUIRE_THROWS_AS(TrajectoryWriter("traj_bad_sel.h5", top, o), InputError);
}

TEST_CASE("MDTraj topology JSON: selection renumbering, escaping, bonds") {
  Topology t;
  t.chains = {{"A", {0, 1}}, {"B", {2}}};
  t.residues = {{"ALA", 0, 1, ' ', {0, 1}, 0}, {"HOH", 0, 2, ' ', {2, 3, 4}, 0}, {"NA", 1, 7, ' ', {5}, 0}};
  t.atoms = {{"N", "N", 0, 1, 0}, {"CA\"x", "C", 0, 2, 0}, {"O", "O", 1, 3, 0},
             {"H1", "H", 1, 4, 0},  {"H2", "H", 1, 5, 0},     {"NA", "Na", 2, 6, 0}};
  t.bonds = {{0, 1}, {2, 3}, {2, 4}};
  CHECK(mdtraj_topology_json(t, {0, 1, 5}) ==
        "{\"chains\": [{\"index\": 0, \"chain_id\": \"A\", \"residues\": [{\"index\": 0, \"name\": \"ALA\", "
        "\"resSeq\": 1, \"segmentID\": \"\", \"atoms\": [{\"index\": 0, \"name\": \"N\", \"element\": \"N\"}, "
        "{\"index\": 1, \"name\": \"CA\\\"x\", \"element\": \"C\"}]}]}, {\"index\": 1, \"chain_id\": \"B\", "
        "\"residues\": [{\"index\": 1, \"name\": \"NA\", \"resSeq\": 7, \"segmentID\": \"\", \"atoms\": "
        "[{\"index\": 2, \"name\": \"NA\", \"element\": \"Na\"}]}]}], \"bonds\": [[0, 1]]}");
  CHECK(mdtraj_topology_json(t, {3, 4}).find("\"bonds\": []") != std::string::npos);
}

// ---- FrameWriter with an in-memory sink ----
namespace {

struct RecordingSink final : FrameSink {
  struct Shared {
    std::mutex m;
    std::condition_variable cv;
    bool gate_open = true;
    int fail_at = -1;  // write index that throws
    std::vector<std::int64_t> steps;
    std::vector<float> first_x;
    int flushes = 0;
    std::vector<int> frames_at_flush;
    bool closed = false;
    std::chrono::steady_clock::time_point last_flush;
  };
  std::shared_ptr<Shared> s;
  explicit RecordingSink(std::shared_ptr<Shared> shared) : s(std::move(shared)) {}
  void write_frame(const FrameView& f) override {
    std::unique_lock<std::mutex> lock(s->m);
    s->cv.wait(lock, [&] { return s->gate_open; });
    if (static_cast<int>(s->steps.size()) == s->fail_at) throw RuntimeError("sink: disk on fire");
    s->steps.push_back(f.step);
    s->first_x.push_back(f.positions_nm[0]);
    s->cv.notify_all();
  }
  void flush() override {
    std::lock_guard<std::mutex> lock(s->m);
    ++s->flushes;
    s->frames_at_flush.push_back(static_cast<int>(s->steps.size()));
    s->last_flush = std::chrono::steady_clock::now();
    s->cv.notify_all();
  }
  void close() override {
    std::lock_guard<std::mutex> lock(s->m);
    s->closed = true;
  }
};

template <typename Pred>
bool wait_for(std::shared_ptr<RecordingSink::Shared>& s, Pred pred, double seconds = 10.0) {
  std::unique_lock<std::mutex> lock(s->m);
  return s->cv.wait_for(lock, std::chrono::duration<double>(seconds), pred);
}

}  // namespace

TEST_CASE("FrameWriter: the producer waits only when every buffer is queued") {
  auto s = std::make_shared<RecordingSink::Shared>();
  s->gate_open = false;  // the "disk" blocks
  FrameWriter writer(std::make_unique<RecordingSink>(s), {2, false, false}, {3, 1000.0, 1000});
  const std::vector<float> pos(6, 1.0f);
  // Three buffers: one goes to the (blocked) writer thread, two wait in the queue; no producer waiting.
  for (int k = 0; k < 3; ++k) writer.write(k, 0.1 * k, std::nullopt, pos);
  CHECK(writer.producer_wait_s() == 0.0);
  // The next one must wait until the sink moves.
  auto pending = std::async(std::launch::async, [&] { writer.write(3, 0.3, std::nullopt, pos); });
  CHECK(pending.wait_for(std::chrono::milliseconds(300)) == std::future_status::timeout);
  {
    std::lock_guard<std::mutex> lock(s->m);
    s->gate_open = true;
  }
  s->cv.notify_all();
  REQUIRE(pending.wait_for(std::chrono::seconds(10)) == std::future_status::ready);
  pending.get();
  CHECK(writer.producer_wait_s() > 0.2);
  writer.close();
  CHECK(s->steps == std::vector<std::int64_t>{0, 1, 2, 3});
  CHECK(s->closed);
  REQUIRE_THROWS_AS(writer.acquire(), RuntimeError);  // used after close
}

TEST_CASE("FrameWriter: acquire/submit fills pooled buffers in place") {
  auto s = std::make_shared<RecordingSink::Shared>();
  FrameWriter writer(std::make_unique<RecordingSink>(s), {3, true, true}, {2, 1000.0, 1000});
  for (int k = 0; k < 6; ++k) {
    FrameBuffer& b = writer.acquire();
    REQUIRE(b.positions_nm().size() == 9);
    REQUIRE(b.velocities_nm_per_ps().size() == 9);
    REQUIRE(b.forces_kj_per_mol_nm().size() == 9);
    REQUIRE_THROWS_AS(writer.acquire(), RuntimeError);  // one buffer at a time
    b.step = 10 * k;
    b.positions_nm()[0] = static_cast<float>(k);
    writer.submit();
  }
  REQUIRE_THROWS_AS(writer.submit(), RuntimeError);  // nothing acquired
  writer.flush();
  CHECK(s->steps == std::vector<std::int64_t>{0, 10, 20, 30, 40, 50});
  CHECK(s->first_x == std::vector<float>{0, 1, 2, 3, 4, 5});
  CHECK(s->flushes == 1);
  // Wrong array sizes are refused before anything is queued.
  REQUIRE_THROWS_AS(writer.write(1, 0.0, std::nullopt, std::vector<float>(8, 0.0f)), RuntimeError);
  writer.close();
}

TEST_CASE("FrameWriter: flush policy by frame count and by time") {
  SECTION("every 3 frames") {
    auto s = std::make_shared<RecordingSink::Shared>();
    FrameWriter writer(std::make_unique<RecordingSink>(s), {1, false, false}, {8, 1000.0, 3});
    const std::vector<float> pos(3, 0.0f);
    for (int k = 0; k < 7; ++k) writer.write(k, 0.0, std::nullopt, pos);
    REQUIRE(wait_for(s, [&] { return s->steps.size() == 7 && s->flushes == 2; }));
    CHECK(s->frames_at_flush == std::vector<int>{3, 6});
    CHECK(writer.frames_flushed() == 6);
    writer.close();  // the last frame is flushed at close
    CHECK(s->frames_at_flush == std::vector<int>{3, 6, 7});
    CHECK(writer.frames_flushed() == 7);
  }
  SECTION("0.3 s after an unflushed frame, even when no other frame comes") {
    auto s = std::make_shared<RecordingSink::Shared>();
    FrameWriter writer(std::make_unique<RecordingSink>(s), {1, false, false}, {2, 0.3, 1000});
    const auto t0 = std::chrono::steady_clock::now();
    writer.write(0, 0.0, std::nullopt, std::vector<float>(3, 0.0f));
    REQUIRE(wait_for(s, [&] { return s->flushes == 1; }));
    const double dt = std::chrono::duration<double>(s->last_flush - t0).count();
    CHECK(dt >= 0.29);
    CHECK(dt < 5.0);
    CHECK(s->frames_at_flush == std::vector<int>{1});
    writer.close();
    CHECK(s->flushes == 1);  // nothing new to flush
  }
}

TEST_CASE("FrameWriter: a sink error reaches the producer and stays") {
  auto s = std::make_shared<RecordingSink::Shared>();
  s->fail_at = 2;
  auto writer = std::make_unique<FrameWriter>(std::make_unique<RecordingSink>(s), FrameLayout{1, false, false},
                                              FrameWriterOptions{4, 1000.0, 1000});
  const std::vector<float> pos(3, 0.0f);
  for (int k = 0; k < 3; ++k) writer->write(k, 0.0, std::nullopt, pos);
  REQUIRE_THROWS_WITH(writer->flush(), "sink: disk on fire");
  REQUIRE_THROWS_WITH(writer->write(9, 0.0, std::nullopt, pos), "sink: disk on fire");
  REQUIRE_THROWS_WITH(writer->close(), "sink: disk on fire");
  CHECK(writer->frames_written() == 2);
  writer.reset();  // the destructor does not throw
  CHECK(!s->closed);
}

TEST_CASE("FrameWriter: destroyed without close writes queued frames but does not close the sink") {
  auto s = std::make_shared<RecordingSink::Shared>();
  {
    FrameWriter writer(std::make_unique<RecordingSink>(s), {1, false, false}, {4, 1000.0, 1000});
    for (int k = 0; k < 4; ++k) writer.write(k, 0.0, std::nullopt, std::vector<float>(3, 0.0f));
  }
  CHECK(s->steps.size() == 4);
  CHECK(!s->closed);
  REQUIRE_THROWS_AS(FrameWriter(std::make_unique<RecordingSink>(s), {1, false, false}, {0, 1.0, 1}), InputError);
  REQUIRE_THROWS_AS(FrameWriter(std::make_unique<RecordingSink>(s), {1, false, false}, {1, 0.0, 1}), InputError);
  REQUIRE_THROWS_AS(FrameWriter(std::make_unique<RecordingSink>(s), {1, false, false}, {1, 1.0, 0}), InputError);
}
