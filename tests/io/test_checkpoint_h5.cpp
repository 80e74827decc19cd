// Checkpoints (io/checkpoint_h5): exact round trip, refusal of another system's checkpoint, atomic
// replacement when writing fails, validation of damaged files.
#include <hdf5.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include "common/errors.hpp"
#include "io/checkpoint_h5.hpp"
#include "io/forcefield_xml.hpp"
#include "io/pdb_reader.hpp"
#include "io/trajectory_h5.hpp"
#include "mdsim_version.hpp"
#include "model/forcefield.hpp"
#include "support/catch.hpp"

using namespace mdsim;
namespace fs = std::filesystem;

namespace {

const std::string kShared = MDSIM_TEST_DATA_DIR;
const std::string kSource = MDSIM_SOURCE_DIR;

bool same_bits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

bool same_vectors(const std::vector<Vec3d>& a, const std::vector<Vec3d>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (!same_bits(a[i].x, b[i].x) || !same_bits(a[i].y, b[i].y) || !same_bits(a[i].z, b[i].z)) return false;
  return true;
}

// A checkpoint of the ala2_water atoms with irregular values (full double precision).
Checkpoint make_checkpoint(const Topology& top) {
  Checkpoint c;
  const std::size_t n = top.atoms.size();
  std::vector<double> masses(n), charges(n);
  for (std::size_t i = 0; i < n; ++i) {
    const double t = static_cast<double>(i);
    c.positions_nm.push_back(top.positions_nm[i] + Vec3d(1e-13 * t, -std::sqrt(2.0) * 1e-7, std::exp(-t)));
    c.velocities_nm_per_ps.push_back(Vec3d(std::sin(t) / 3.0, std::cos(t) * 1.1, -0.1 * t / 7.0));
    masses[i] = 1.008 + 0.1 * static_cast<double>(i % 5);
    charges[i] = 0.4170 * ((i % 3) ? 1.0 : -2.0);
  }
  c.step = 123456789012LL;
  c.time_ps = 246913.578024;
  c.box = Boxd{{3.2853, 0, 0}, {0.3, 3.2862, 0}, {-0.2, 0.15, 3.1855}};
  c.seed = 0xfedcba9876543210ULL;
  c.rng_counter = 987654321ULL;
  c.barostat_state = {1.0 / 3.0, 25.0, -0.0};
  c.config_hash = content_hash_hex("integrator:\n  timestep: 2 fs\n");
  c.fingerprint = system_fingerprint(masses, charges);
  return c;
}

}  // namespace

TEST_CASE("checkpoint round trip is exact") {
  const Topology top = read_pdb(kShared + "/systems/ala2_water.pdb");
  const Checkpoint c = make_checkpoint(top);
  const std::string path = "checkpoint_roundtrip.h5";
  write_checkpoint(path, c);
  CHECK(!fs::exists(path + ".partial"));
  const Checkpoint r = read_checkpoint(path, c.fingerprint);
  CHECK(r.step == c.step);
  CHECK(same_bits(r.time_ps, c.time_ps));
  CHECK(same_vectors(r.positions_nm, c.positions_nm));
  CHECK(same_vectors(r.velocities_nm_per_ps, c.velocities_nm_per_ps));
  REQUIRE(r.box);
  CHECK(same_vectors({r.box->a, r.box->b, r.box->c}, {c.box->a, c.box->b, c.box->c}));
  CHECK(r.seed == c.seed);
  CHECK(r.rng_counter == c.rng_counter);
  REQUIRE(r.barostat_state.size() == 3);
  for (std::size_t i = 0; i < 3; ++i) CHECK(same_bits(r.barostat_state[i], c.barostat_state[i]));
  CHECK(r.config_hash == c.config_hash);
  CHECK(r.fingerprint == c.fingerprint);
  CHECK(r.mdsim_version == MDSIM_VERSION_STRING);

  SECTION("no box, no barostat state; overwriting an existing checkpoint") {
    Checkpoint v = c;
    v.box.reset();
    v.barostat_state.clear();
    v.step = 7;
    write_checkpoint(path, v);
    const Checkpoint w = read_checkpoint(path, v.fingerprint);
    CHECK(w.step == 7);
    CHECK(!w.box);
    CHECK(w.barostat_state.empty());
    CHECK(same_vectors(w.positions_nm, v.positions_nm));
  }
}

TEST_CASE("checkpoint of another system is refused, naming both fingerprints") {
  const Topology top = read_pdb(kShared + "/systems/ala2_water.pdb");
  const Checkpoint c = make_checkpoint(top);
  const std::string path = "checkpoint_other_system.h5";
  write_checkpoint(path, c);
  std::vector<double> masses(top.atoms.size(), 12.0), charges(top.atoms.size(), 0.0);
  const SystemFingerprint other = system_fingerprint(masses, charges);
  REQUIRE(!(other == c.fingerprint));
  REQUIRE_THROWS_WITH(read_checkpoint(path, other),
                      path + ": checkpoint is for a different system: the checkpoint has " + c.fingerprint.to_string() +
                          ", this system has " + other.to_string());
  const SystemFingerprint fewer = system_fingerprint({1.0, 2.0}, {0.0, 0.0});
  CHECK(fewer.to_string().rfind("2 atoms, ", 0) == 0);
  REQUIRE_THROWS_AS(read_checkpoint(path, fewer), InputError);
}

TEST_CASE("system fingerprint: masses and charges of a built System") {
  Topology top = read_pdb(kShared + "/systems/ala2_vacuum.pdb");
  const ForceFieldData ff = load_forcefields({"amber14-all.xml"}, kSource);
  create_topology_bonds(top, ff.standard);
  ForceFieldOptions options;
  options.nonbonded.method = NonbondedMethod::NoCutoff;
  const System plain = build_system(top, ff, options);
  options.hydrogen_mass_amu = 4.0;
  const System hmr = build_system(top, ff, options);
  const SystemFingerprint a = system_fingerprint(plain), b = system_fingerprint(hmr);
  CHECK(a.num_atoms == 22);
  CHECK(b.num_atoms == 22);
  CHECK(!(a == b));  // repartitioned masses make another system
  CHECK(system_fingerprint(plain) == a);  // deterministic
  // Last-bit differences do not matter; a changed charge does.
  std::vector<double> m = plain.mass_amu, q = plain.charge_e;
  m[3] = std::nextafter(m[3], 100.0);
  CHECK(system_fingerprint(m, q) == a);
  q[3] += 1e-6;
  CHECK(!(system_fingerprint(m, q) == a));
  // FNV-1a 64 test vectors.
  CHECK(content_hash_hex("") == "cbf29ce484222325");
  CHECK(content_hash_hex("a") == "af63dc4c8601ec8c");
  CHECK(content_hash_hex("foobar") == "85944171f73967e8");
}

TEST_CASE("checkpoint writing is atomic: a failed write keeps the previous checkpoint") {
  const Topology top = read_pdb(kShared + "/systems/ala2_water.pdb");
  const Checkpoint c = make_checkpoint(top);
  const std::string path = "checkpoint_atomic.h5";
  write_checkpoint(path, c);
  const auto size_before = fs::file_size(path);

  // A NaN state is not written over a good checkpoint.
  Checkpoint bad = c;
  bad.positions_nm[5].y = std::numeric_limits<double>::quiet_NaN();
  bad.step = c.step + 1;
  REQUIRE_THROWS_AS(write_checkpoint(path, bad), RuntimeError);
  CHECK(read_checkpoint(path, c.fingerprint).step == c.step);

  // The disk fills up while the next checkpoint is written (file size limit in a child process).
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    int code = 1;
    try {
      ::signal(SIGXFSZ, SIG_IGN);
      rlimit limit{};
      ::getrlimit(RLIMIT_FSIZE, &limit);
      limit.rlim_cur = 20000;
      ::setrlimit(RLIMIT_FSIZE, &limit);
      Checkpoint next = c;
      next.step = c.step + 1000;
      write_checkpoint(path, next);
    } catch (const RuntimeError& e) {
      const std::string m = e.what();
      code = (m.find(path) != std::string::npos && m.find("previous checkpoint is kept") != std::string::npos) ? 0 : 2;
    } catch (...) {
      code = 3;
    }
    ::_exit(code);
  }
  int status = 0;
  REQUIRE(::waitpid(pid, &status, 0) == pid);
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  CHECK(!fs::exists(path + ".partial"));
  CHECK(fs::file_size(path) == size_before);
  const Checkpoint r = read_checkpoint(path, c.fingerprint);
  CHECK(r.step == c.step);
  CHECK(same_vectors(r.positions_nm, c.positions_nm));
}

TEST_CASE("damaged or foreign checkpoint files give one clear InputError") {
  const SystemFingerprint any = system_fingerprint({1.0}, {0.0});
  REQUIRE_THROWS_WITH(read_checkpoint("no_such_checkpoint.h5", any), "no_such_checkpoint.h5: checkpoint file not found");
  {
    std::ofstream("checkpoint_text.h5") << "not hdf5\n";
  }
  REQUIRE_THROWS_AS(read_checkpoint("checkpoint_text.h5", any), InputError);
  {  // an HDF5 file that is not a checkpoint
    const Topology top = read_pdb(kShared + "/systems/ala2_vacuum.pdb");
    TrajectoryOptions o;
    o.periodic = false;
    TrajectoryWriter w("checkpoint_foreign.h5", top, o);
    w.close();
  }
  REQUIRE_THROWS_WITH(read_checkpoint("checkpoint_foreign.h5", any),
                      "checkpoint_foreign.h5: not an mdsim checkpoint (root attribute format is not "
                      "\"mdsim-checkpoint\")");
  REQUIRE_THROWS_WITH(write_checkpoint("no_such_folder_ckpt/c.h5", Checkpoint{}),
                      "no_such_folder_ckpt/c.h5: cannot write the checkpoint: folder 'no_such_folder_ckpt' does not "
                      "exist");

  // A checkpoint with a truncated positions dataset.
  const Topology top = read_pdb(kShared + "/systems/ala2_water.pdb");
  const Checkpoint c = make_checkpoint(top);
  write_checkpoint("checkpoint_damaged.h5", c);
  {
    H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
    const hid_t file = H5Fopen("checkpoint_damaged.h5", H5F_ACC_RDWR, H5P_DEFAULT);
    REQUIRE(file >= 0);
    REQUIRE(H5Ldelete(file, "velocities_nm_per_ps", H5P_DEFAULT) >= 0);
    const hsize_t dims[2] = {10, 3};
    const hid_t space = H5Screate_simple(2, dims, nullptr);
    const hid_t set = H5Dcreate2(file, "velocities_nm_per_ps", H5T_IEEE_F64LE, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    REQUIRE(set >= 0);
    H5Dclose(set);
    H5Sclose(space);
    H5Fclose(file);
  }
  REQUIRE_THROWS_WITH(read_checkpoint("checkpoint_damaged.h5", c.fingerprint),
                      "checkpoint_damaged.h5: checkpoint dataset /velocities_nm_per_ps has the wrong shape (expected "
                      "2269×3)");
}

// Found by fuzz/checkpoint.cpp (inputs in fuzz/regressions/checkpoint/): attributes and datasets of a shape
// the writer never makes. An array of strings where one string belongs overflowed the reader's buffer
// (ASan: stack-buffer-overflow in H5Aread); num_atoms = 2^32 + N passed as N atoms; a declared-only huge
// /barostat_state made the reader allocate its whole extent.
TEST_CASE("checkpoint attributes and datasets of the wrong shape give an InputError") {
  Checkpoint c;
  c.positions_nm = {{0.1, 0.2, 0.3}, {0.4, 0.5, 0.6}};
  c.velocities_nm_per_ps = {{0.0, 0.0, 0.0}, {0.1, 0.0, 0.0}};
  c.config_hash = "0123456789abcdef";
  c.fingerprint = system_fingerprint({1.0, 2.0}, {0.5, -0.5});
  const std::string path = "checkpoint_shapes.h5";
  const auto edit = [&](auto change) {
    write_checkpoint(path, c);
    H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
    const hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
    REQUIRE(file >= 0);
    change(file);
    H5Fclose(file);
  };
  const auto message = [&]() -> std::string {
    try {
      read_checkpoint(path, c.fingerprint);
    } catch (const InputError& e) {
      return e.what();
    }
    return "";
  };

  edit([](hid_t file) {  // mdsim_version as two variable-length strings
    REQUIRE(H5Adelete(file, "mdsim_version") >= 0);
    const hid_t type = H5Tcopy(H5T_C_S1);
    H5Tset_size(type, H5T_VARIABLE);
    const hsize_t two = 2;
    const hid_t space = H5Screate_simple(1, &two, nullptr);
    const hid_t attr = H5Acreate2(file, "mdsim_version", type, space, H5P_DEFAULT, H5P_DEFAULT);
    const char* values[2] = {"0.1.0", "0.2.0"};
    REQUIRE(H5Awrite(attr, type, values) >= 0);
    H5Aclose(attr);
    H5Sclose(space);
    H5Tclose(type);
  });
  CHECK(message() == path + ": damaged checkpoint: root attribute mdsim_version is missing or invalid");

  edit([](hid_t file) {  // config_hash as three fixed-length strings
    REQUIRE(H5Adelete(file, "config_hash") >= 0);
    const hid_t type = H5Tcopy(H5T_C_S1);
    H5Tset_size(type, 4);
    const hsize_t three = 3;
    const hid_t space = H5Screate_simple(1, &three, nullptr);
    const hid_t attr = H5Acreate2(file, "config_hash", type, space, H5P_DEFAULT, H5P_DEFAULT);
    REQUIRE(H5Awrite(attr, type, "abcdefghijkl") >= 0);
    H5Aclose(attr);
    H5Sclose(space);
    H5Tclose(type);
  });
  CHECK(message() == path + ": damaged checkpoint: root attribute config_hash is missing or invalid");

  edit([](hid_t file) {  // 2^32 + 2 atoms: as an int, 2
    REQUIRE(H5Adelete(file, "num_atoms") >= 0);
    const std::int64_t n = (std::int64_t{1} << 32) + 2;
    const hid_t space = H5Screate(H5S_SCALAR);
    const hid_t attr = H5Acreate2(file, "num_atoms", H5T_STD_I64LE, space, H5P_DEFAULT, H5P_DEFAULT);
    REQUIRE(H5Awrite(attr, H5T_NATIVE_INT64, &n) >= 0);
    H5Aclose(attr);
    H5Sclose(space);
  });
  CHECK(message() == path + ": damaged checkpoint: invalid num_atoms or system_hash");

  edit([](hid_t file) {  // a barostat state of 2^40 values, declared only
    REQUIRE(H5Ldelete(file, "barostat_state", H5P_DEFAULT) >= 0);
    const hsize_t huge = hsize_t{1} << 40;
    const hid_t space = H5Screate_simple(1, &huge, nullptr);
    const hid_t set = H5Dcreate2(file, "barostat_state", H5T_IEEE_F64LE, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    REQUIRE(set >= 0);
    H5Dclose(set);
    H5Sclose(space);
  });
  CHECK(message() == path + ": checkpoint dataset /barostat_state has the wrong shape (expected a vector of at most "
                            "65536 values)");

  c.barostat_state = {1.0, 2.0, 1.0, 5.0, 3.0};  // the real one still reads
  write_checkpoint(path, c);
  CHECK(read_checkpoint(path, c.fingerprint).barostat_state == c.barostat_state);
  std::filesystem::remove(path);
}
