#include "io/checkpoint_h5.hpp"

#include <fcntl.h>
#include <hdf5.h>
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <limits>
#include <mutex>
#include <optional>

#include "common/errors.hpp"
#include "io/atomic_file.hpp"
#include "io/h5_util.hpp"
#include "io/trajectory_h5.hpp"  // hdf5_mutex()
#include "mdsim_version.hpp"

namespace mdsim {

namespace {

constexpr const char* kFormat = "mdsim-checkpoint";
constexpr const char* kEnsembleFormat = "mdsim-replica-checkpoint";
constexpr int kFormatVersion = 1;

class Fnv1a {
 public:
  void add(const void* data, std::size_t n) {
    const unsigned char* p = static_cast<const unsigned char*>(data);
    for (std::size_t i = 0; i < n; ++i) {
      h_ ^= p[i];
      h_ *= 0x100000001b3ULL;
    }
  }
  void add_i64(std::int64_t v) {
    unsigned char b[8];
    for (int i = 0; i < 8; ++i) b[i] = static_cast<unsigned char>((static_cast<std::uint64_t>(v) >> (8 * i)) & 0xff);
    add(b, 8);
  }
  std::uint64_t value() const { return h_; }

 private:
  std::uint64_t h_ = 0xcbf29ce484222325ULL;
};

template <typename T>
void write_scalar_attr(hid_t obj, const char* name, hid_t file_type, hid_t mem_type, T value) {
  H5Id space(H5Screate(H5S_SCALAR), H5Sclose);
  H5Id attr(H5Acreate2(obj, name, file_type, space.id, H5P_DEFAULT, H5P_DEFAULT), H5Aclose);
  if (!attr.ok() || H5Awrite(attr.id, mem_type, &value) < 0) throw RuntimeError(fmt::format("cannot write attribute {}", name));
}

void write_matrix(hid_t file, const char* name, const std::vector<double>& flat, hsize_t rows, hsize_t cols, int rank,
                  const char* unit) {
  const hsize_t dims[2] = {rows, cols};
  H5Id space(H5Screate_simple(rank, dims, nullptr), H5Sclose);
  H5Id set(H5Dcreate2(file, name, H5T_IEEE_F64LE, space.id, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), H5Dclose);
  if (!set.ok()) throw RuntimeError(fmt::format("cannot create dataset {}", name));
  if (!flat.empty() && H5Dwrite(set.id, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, flat.data()) < 0)
    throw RuntimeError(fmt::format("cannot write dataset {}", name));
  if (unit) set_vlen_string_attr(set.id, "unit", unit);
}

std::vector<double> flatten(const std::vector<Vec3d>& v) {
  std::vector<double> flat;
  flat.reserve(3 * v.size());
  for (const Vec3d& x : v) {
    flat.push_back(x.x);
    flat.push_back(x.y);
    flat.push_back(x.z);
  }
  return flat;
}

std::string h5_reason() {
  std::string reason;
  H5Ewalk2(
      H5E_DEFAULT, H5E_WALK_DOWNWARD,
      [](unsigned, const H5E_error2_t* e, void* data) -> herr_t {
        auto* r = static_cast<std::string*>(data);
        if (!e || !e->desc) return 0;
        const std::string d = e->desc;
        const std::size_t k = d.find("error message = '");
        if (k != std::string::npos) {
          const std::size_t start = k + std::strlen("error message = '");
          *r = d.substr(start, d.find('\'', start) - start);
        } else if (r->empty() || r->find(' ') != std::string::npos) {
          *r = d;
        }
        return 0;
      },
      &reason);
  return reason.empty() ? "HDF5 error" : reason;
}

// ---- reading ----

template <typename T>
std::optional<T> read_scalar_attr(hid_t obj, const char* name, hid_t mem_type) {
  if (H5Aexists(obj, name) <= 0) return std::nullopt;
  H5Id attr(H5Aopen(obj, name, H5P_DEFAULT), H5Aclose);
  H5Id space(H5Aget_space(attr.id), H5Sclose);
  if (!attr.ok() || H5Sget_simple_extent_npoints(space.id) != 1) return std::nullopt;
  T value{};
  if (H5Aread(attr.id, mem_type, &value) < 0) return std::nullopt;
  return value;
}

// The most values a dataset of any length (/barostat_state, 5 values) may hold: its extent is only declared,
// so a damaged file could otherwise ask for any amount of memory.
constexpr hsize_t kMaxAnyRows = 65536;

// Reads a float64 dataset of the given shape (cols 0 = rank 1). Returns false if absent.
bool read_matrix(hid_t file, const std::string& path, const char* name, hsize_t rows, hsize_t cols,
                 std::vector<double>& out, bool allow_any_rows = false) {
  if (H5Lexists(file, name, H5P_DEFAULT) <= 0) return false;
  H5Id set(H5Dopen2(file, name, H5P_DEFAULT), H5Dclose);
  H5Id space(H5Dget_space(set.id), H5Sclose);
  const int rank = H5Sget_simple_extent_ndims(space.id);
  hsize_t dims[2] = {0, 0};
  H5Sget_simple_extent_dims(space.id, dims, nullptr);
  const bool shape_ok = cols == 0 ? rank == 1 && (allow_any_rows ? dims[0] <= kMaxAnyRows : dims[0] == rows)
                                  : rank == 2 && dims[0] == rows && dims[1] == cols;
  if (!set.ok() || !shape_ok)
    throw InputError(allow_any_rows
                         ? fmt::format("{}: checkpoint dataset /{} has the wrong shape (expected a vector of at most {} "
                                       "values)", path, name, kMaxAnyRows)
                         : fmt::format("{}: checkpoint dataset /{} has the wrong shape (expected {}×{})", path, name, rows,
                                       cols));
  out.assign(cols == 0 ? dims[0] : rows * cols, 0.0);
  if (!out.empty() && H5Dread(set.id, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, out.data()) < 0)
    throw InputError(fmt::format("{}: cannot read checkpoint dataset /{}: {}", path, name, h5_reason()));
  for (double v : out)
    if (!std::isfinite(v)) throw InputError(fmt::format("{}: checkpoint dataset /{} holds NaN or infinite values", path, name));
  return true;
}

// InputError unless `obj`'s format_version is one this build reads (both kinds of checkpoint).
void check_format_version(hid_t obj, const std::string& path) {
  const auto version = read_scalar_attr<int>(obj, "format_version", H5T_NATIVE_INT);
  if (!version || *version < 1 || *version > kFormatVersion)
    throw InputError(fmt::format("{}: checkpoint format version {} is not supported by mdsim {} (expected {})", path,
                                 version ? fmt::format("{}", *version) : std::string("(missing)"), MDSIM_VERSION_STRING,
                                 kFormatVersion));
}

// A root attribute's value, or InputError naming it as missing.
template <typename T>
T required_attr(const std::optional<T>& value, const std::string& path, const char* name) {
  if (!value) throw InputError(fmt::format("{}: damaged checkpoint: root attribute {} is missing or invalid", path, name));
  return *value;
}

// A checkpoint's attributes and datasets on `obj` (the file's root, or a replica's group).
void write_checkpoint_object(hid_t obj, const Checkpoint& c) {
  const std::size_t n = c.positions_nm.size();
  set_vlen_string_attr(obj, "format", kFormat);
  write_scalar_attr(obj, "format_version", H5T_STD_I32LE, H5T_NATIVE_INT, kFormatVersion);
  set_vlen_string_attr(obj, "mdsim_version", MDSIM_VERSION_STRING);
  write_scalar_attr(obj, "step", H5T_STD_I64LE, H5T_NATIVE_INT64, c.step);
  write_scalar_attr(obj, "time_ps", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, c.time_ps);
  write_scalar_attr(obj, "seed", H5T_STD_U64LE, H5T_NATIVE_UINT64, c.seed);
  write_scalar_attr(obj, "rng_counter", H5T_STD_U64LE, H5T_NATIVE_UINT64, c.rng_counter);
  set_vlen_string_attr(obj, "config_hash", c.config_hash);
  std::string physics;
  for (const auto& [key, value] : c.physics) physics += key + "=" + value + "\n";
  set_vlen_string_attr(obj, "physics_settings", physics);
  write_scalar_attr(obj, "num_atoms", H5T_STD_I64LE, H5T_NATIVE_INT64, static_cast<std::int64_t>(n));
  set_vlen_string_attr(obj, "system_hash", fmt::format("{:016x}", c.fingerprint.hash));
  write_matrix(obj, "positions_nm", flatten(c.positions_nm), n, 3, 2, "nm");
  write_matrix(obj, "velocities_nm_per_ps", flatten(c.velocities_nm_per_ps), n, 3, 2, "nm/ps");
  if (c.box) {
    const Boxd& b = *c.box;
    write_matrix(obj, "box_nm", {b.a.x, b.a.y, b.a.z, b.b.x, b.b.y, b.b.z, b.c.x, b.c.y, b.c.z}, 3, 3, 2, "nm");
  }
  write_matrix(obj, "barostat_state", c.barostat_state, c.barostat_state.size(), 0, 1, nullptr);
  if (c.stage) {
    const CheckpointStage& st = *c.stage;
    write_scalar_attr(obj, "stage_index", H5T_STD_I64LE, H5T_NATIVE_INT64, static_cast<std::int64_t>(st.index));
    set_vlen_string_attr(obj, "stage_name", st.name);
    write_scalar_attr(obj, "stage_step", H5T_STD_I64LE, H5T_NATIVE_INT64, st.step_in_stage);
    std::string protocol;
    for (const std::string& line : st.protocol) protocol += line + "\n";
    set_vlen_string_attr(obj, "stages", protocol);
    if (!st.reference_nm.empty()) {
      write_scalar_attr(obj, "stage_reference_atoms", H5T_STD_I64LE, H5T_NATIVE_INT64,
                        static_cast<std::int64_t>(st.reference_nm.size()));
      write_matrix(obj, "stage_reference_nm", flatten(st.reference_nm), st.reference_nm.size(), 3, 2, "nm");
    }
  }
}

// Refuses a checkpoint whose arrays disagree or hold NaN/inf (RuntimeError: the previous file is kept).
void check_checkpoint_state(const std::string& path, const Checkpoint& c) {
  const std::size_t n = c.positions_nm.size();
  if (c.velocities_nm_per_ps.size() != n || static_cast<std::size_t>(c.fingerprint.num_atoms) != n)
    throw RuntimeError(fmt::format("{}: checkpoint of {} positions, {} velocities and a fingerprint of {} atoms", path,
                                   n, c.velocities_nm_per_ps.size(), c.fingerprint.num_atoms));
  const auto finite = [](const std::vector<Vec3d>& v) {
    for (const Vec3d& x : v)
      if (!std::isfinite(x.x) || !std::isfinite(x.y) || !std::isfinite(x.z)) return false;
    return true;
  };
  if (!finite(c.positions_nm) || !finite(c.velocities_nm_per_ps) || !std::isfinite(c.time_ps))
    throw RuntimeError(fmt::format("{}: refusing to write a checkpoint of step {} with NaN or infinite positions or "
                                   "velocities; the previous checkpoint is kept",
                                   path, c.step));
}

// Creates the HDF5 file `path` through "<path>.partial": `fill` writes its content, then it is flushed,
// closed, fsync'ed and renamed over `path` (the previous file stays on any failure).
template <typename Fill>
void write_checkpoint_file(const std::string& path, Fill&& fill) {
  namespace fs = std::filesystem;
  fs::path folder = fs::path(path).parent_path();
  if (folder.empty()) folder = ".";
  std::error_code ec;
  if (!fs::is_directory(folder, ec))
    throw InputError(fmt::format("{}: cannot write the checkpoint: folder '{}' does not exist", path, folder.string()));
  if (::access(folder.c_str(), W_OK | X_OK) != 0)
    throw InputError(fmt::format("{}: cannot write the checkpoint: folder '{}' is not writable ({})", path,
                                 folder.string(), std::strerror(errno)));

  const std::string tmp = partial_path(path);
  {
    std::lock_guard<std::mutex> lock(hdf5_mutex());
    H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
    const hid_t file = H5Fcreate(tmp.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    if (file < 0) throw RuntimeError(fmt::format("{}: cannot create the checkpoint file: {}", tmp, h5_reason()));
    bool ok = true;
    std::string what;
    try {
      fill(file);
      if (H5Fflush(file, H5F_SCOPE_LOCAL) < 0) throw RuntimeError("cannot flush");
    } catch (const RuntimeError& e) {
      ok = false;
      what = fmt::format("{}: {}", e.what(), h5_reason());
    }
    if (H5Fclose(file) < 0 && ok) {
      ok = false;
      what = h5_reason();
    }
    if (!ok) {
      std::remove(tmp.c_str());
      throw RuntimeError(fmt::format("{}: cannot write the checkpoint ({}); the previous checkpoint is kept", path, what));
    }
  }
  publish_partial(tmp, path, "the new checkpoint", /*durable=*/true);
}

}  // namespace

std::string SystemFingerprint::to_string() const { return fmt::format("{} atoms, {:016x}", num_atoms, hash); }

SystemFingerprint system_fingerprint(const std::vector<double>& mass_amu, const std::vector<double>& charge_e) {
  if (mass_amu.size() != charge_e.size())
    throw RuntimeError(fmt::format("system_fingerprint: {} masses but {} charges", mass_amu.size(), charge_e.size()));
  Fnv1a h;
  h.add_i64(static_cast<std::int64_t>(mass_amu.size()));
  for (std::size_t i = 0; i < mass_amu.size(); ++i) {
    h.add_i64(std::llround(mass_amu[i] * 1e6));
    h.add_i64(std::llround(charge_e[i] * 1e9));
  }
  return {static_cast<int>(mass_amu.size()), h.value()};
}

SystemFingerprint system_fingerprint(const System& system) { return system_fingerprint(system.mass_amu, system.charge_e); }

std::string content_hash_hex(std::string_view bytes) {
  Fnv1a h;
  h.add(bytes.data(), bytes.size());
  return fmt::format("{:016x}", h.value());
}

void write_checkpoint(const std::string& path, const Checkpoint& c) {
  check_checkpoint_state(path, c);
  write_checkpoint_file(path, [&c](hid_t file) { write_checkpoint_object(file, c); });
}

namespace {

// Opens a checkpoint file for reading (the caller holds hdf5_mutex()), or an InputError saying why not.
H5Id open_checkpoint_file(const std::string& path) {
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  if (!std::filesystem::exists(path)) throw InputError(fmt::format("{}: checkpoint file not found", path));
  H5Id file(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose);
  if (!file.ok()) {
    // HDF5's own words, but not its internals ("truncated file: eof = 4624, sblock->base_addr = 0, ...").
    std::string reason = h5_reason();
    if (reason.rfind("truncated file", 0) == 0) reason = "the file is truncated (cut short by a full disk or an "
                                                         "interrupted copy?)";
    else if (const std::size_t colon = reason.find(':'); colon != std::string::npos) reason.resize(colon);
    throw InputError(fmt::format("{}: cannot open the checkpoint as an HDF5 file: {}; resume from an intact "
                                 "checkpoint or start the run afresh",
                                 path, reason));
  }
  return file;
}

// A checkpoint from `obj` (the file's root, or a replica's group); `path` names it in messages.
Checkpoint read_checkpoint_object(hid_t obj, const std::string& path, const SystemFingerprint& expected) {
  const auto format = read_string_attr(obj, "format");
  if (format && *format == kEnsembleFormat)
    throw InputError(fmt::format("{}: this is the checkpoint of a replica ensemble (config 'replicas:'): resume it with "
                                 "the config that wrote it",
                                 path));
  if (!format || *format != kFormat)
    throw InputError(fmt::format("{}: not an mdsim checkpoint (root attribute format is not \"{}\")", path, kFormat));
  check_format_version(obj, path);
  const auto require = [&](auto value, const char* name) { return required_attr(value, path, name); };
  Checkpoint c;
  c.mdsim_version = require(read_string_attr(obj, "mdsim_version"), "mdsim_version");
  c.step = require(read_scalar_attr<std::int64_t>(obj, "step", H5T_NATIVE_INT64), "step");
  c.time_ps = require(read_scalar_attr<double>(obj, "time_ps", H5T_NATIVE_DOUBLE), "time_ps");
  if (!std::isfinite(c.time_ps))
    throw InputError(fmt::format("{}: damaged checkpoint: root attribute time_ps is not a finite number", path));
  c.seed = require(read_scalar_attr<std::uint64_t>(obj, "seed", H5T_NATIVE_UINT64), "seed");
  c.rng_counter = require(read_scalar_attr<std::uint64_t>(obj, "rng_counter", H5T_NATIVE_UINT64), "rng_counter");
  c.config_hash = require(read_string_attr(obj, "config_hash"), "config_hash");
  if (const std::optional<std::string> physics = read_string_attr(obj, "physics_settings")) {
    std::size_t begin = 0;
    while (begin < physics->size()) {
      const std::size_t end = std::min(physics->find('\n', begin), physics->size());
      const std::string line = physics->substr(begin, end - begin);
      const std::size_t eq = line.find('=');
      if (eq == std::string::npos)
        throw InputError(fmt::format("{}: damaged checkpoint: physics_settings line '{}' has no '='", path, line));
      c.physics.emplace_back(line.substr(0, eq), line.substr(eq + 1));
      begin = end + 1;
    }
  }
  const std::int64_t n = require(read_scalar_attr<std::int64_t>(obj, "num_atoms", H5T_NATIVE_INT64), "num_atoms");
  const std::string hash_text = require(read_string_attr(obj, "system_hash"), "system_hash");
  char* end = nullptr;
  c.fingerprint.hash = std::strtoull(hash_text.c_str(), &end, 16);
  // num_atoms beyond int would wrap in the fingerprint (2^32 + 3 atoms passing as 3) and then size the arrays.
  if (n < 0 || n > std::numeric_limits<int>::max() || hash_text.size() != 16 || !end || *end != '\0')
    throw InputError(fmt::format("{}: damaged checkpoint: invalid num_atoms or system_hash", path));
  c.fingerprint.num_atoms = static_cast<int>(n);
  if (!(c.fingerprint == expected))
    throw InputError(fmt::format("{}: checkpoint is for a different system: the checkpoint has {}, this system has {}",
                                 path, c.fingerprint.to_string(), expected.to_string()));

  const hsize_t rows = static_cast<hsize_t>(n);
  std::vector<double> flat;
  const auto vectors = [&](const char* name, std::vector<Vec3d>& out) {
    if (!read_matrix(obj, path, name, rows, 3, flat))
      throw InputError(fmt::format("{}: damaged checkpoint: dataset /{} is missing", path, name));
    out.resize(static_cast<std::size_t>(n));
    for (std::size_t i = 0; i < out.size(); ++i) out[i] = Vec3d(flat[3 * i], flat[3 * i + 1], flat[3 * i + 2]);
  };
  vectors("positions_nm", c.positions_nm);
  vectors("velocities_nm_per_ps", c.velocities_nm_per_ps);
  if (read_matrix(obj, path, "box_nm", 3, 3, flat)) {
    Boxd b{{flat[0], flat[1], flat[2]}, {flat[3], flat[4], flat[5]}, {flat[6], flat[7], flat[8]}};
    if (!(b.a.x > 0 && b.b.y > 0 && b.c.z > 0) || b.a.y != 0 || b.a.z != 0 || b.b.z != 0)
      throw InputError(fmt::format("{}: damaged checkpoint: /box_nm is not a reduced triclinic box", path));
    c.box = b;
  }
  if (!read_matrix(obj, path, "barostat_state", 0, 0, c.barostat_state, true))
    throw InputError(fmt::format("{}: damaged checkpoint: dataset /barostat_state is missing", path));
  if (const auto index = read_scalar_attr<std::int64_t>(obj, "stage_index", H5T_NATIVE_INT64)) {
    CheckpointStage st;
    const std::string protocol = require(read_string_attr(obj, "stages"), "stages");
    for (std::size_t begin = 0; begin < protocol.size();) {
      const std::size_t stop = std::min(protocol.find('\n', begin), protocol.size());
      st.protocol.push_back(protocol.substr(begin, stop - begin));
      begin = stop + 1;
    }
    if (*index < 0 || *index >= static_cast<std::int64_t>(st.protocol.size()))
      throw InputError(fmt::format("{}: damaged checkpoint: stage_index {} outside the {} stages", path, *index,
                                   st.protocol.size()));
    st.index = static_cast<int>(*index);
    st.name = require(read_string_attr(obj, "stage_name"), "stage_name");
    st.step_in_stage = require(read_scalar_attr<std::int64_t>(obj, "stage_step", H5T_NATIVE_INT64), "stage_step");
    if (st.step_in_stage < 0 || st.step_in_stage > c.step)
      throw InputError(fmt::format("{}: damaged checkpoint: stage_step {} outside 0..{}", path, st.step_in_stage, c.step));
    if (const auto m = read_scalar_attr<std::int64_t>(obj, "stage_reference_atoms", H5T_NATIVE_INT64)) {
      if (*m <= 0 || *m > n)
        throw InputError(fmt::format("{}: damaged checkpoint: stage_reference_atoms {} outside 1..{}", path, *m, n));
      if (!read_matrix(obj, path, "stage_reference_nm", static_cast<hsize_t>(*m), 3, flat))
        throw InputError(fmt::format("{}: damaged checkpoint: dataset /stage_reference_nm is missing", path));
      st.reference_nm.resize(static_cast<std::size_t>(*m));
      for (std::size_t i = 0; i < st.reference_nm.size(); ++i)
        st.reference_nm[i] = Vec3d(flat[3 * i], flat[3 * i + 1], flat[3 * i + 2]);
    }
    c.stage = std::move(st);
  }
  return c;
}


}  // namespace

Checkpoint read_checkpoint(const std::string& path, const SystemFingerprint& expected) {
  std::lock_guard<std::mutex> lock(hdf5_mutex());
  const H5Id file = open_checkpoint_file(path);
  return read_checkpoint_object(file.id, path, expected);
}

namespace {

std::string replica_group(std::size_t k) { return fmt::format("replica_{:04d}", k); }

}  // namespace

void write_ensemble_checkpoint(const std::string& path, const EnsembleCheckpoint& e) {
  if (e.replicas.empty()) throw RuntimeError(fmt::format("{}: an ensemble checkpoint without replicas", path));
  for (std::size_t k = 0; k < e.replicas.size(); ++k) {
    const std::string label = fmt::format("{} ({})", path, replica_group(k));
    check_checkpoint_state(label, e.replicas[k]);
    if (e.replicas[k].step != e.step)
      throw RuntimeError(fmt::format("{}: replica at step {}, the ensemble at {}", label, e.replicas[k].step, e.step));
  }
  write_checkpoint_file(path, [&e](hid_t file) {
    set_vlen_string_attr(file, "format", kEnsembleFormat);
    write_scalar_attr(file, "format_version", H5T_STD_I32LE, H5T_NATIVE_INT, kFormatVersion);
    set_vlen_string_attr(file, "mdsim_version", MDSIM_VERSION_STRING);
    write_scalar_attr(file, "step", H5T_STD_I64LE, H5T_NATIVE_INT64, e.step);
    write_scalar_attr(file, "num_replicas", H5T_STD_I64LE, H5T_NATIVE_INT64, static_cast<std::int64_t>(e.replicas.size()));
    set_vlen_string_attr(file, "exchange", e.exchange);
    write_scalar_attr(file, "ensemble_seed", H5T_STD_U64LE, H5T_NATIVE_UINT64, e.ensemble_seed);
    write_scalar_attr(file, "exchange_seed", H5T_STD_U64LE, H5T_NATIVE_UINT64, e.exchange_seed);
    write_matrix(file, "temperatures_k", e.temperatures_k, e.temperatures_k.size(), 0, 1, "K");
    write_matrix(file, "exchange_state", e.exchange_state, e.exchange_state.size(), 0, 1, nullptr);
    for (std::size_t k = 0; k < e.replicas.size(); ++k) {
      H5Id group(H5Gcreate2(file, replica_group(k).c_str(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), H5Gclose);
      if (!group.ok()) throw RuntimeError(fmt::format("cannot create group /{}", replica_group(k)));
      write_checkpoint_object(group.id, e.replicas[k]);
    }
  });
}

EnsembleCheckpoint read_ensemble_checkpoint(const std::string& path, const SystemFingerprint& expected) {
  std::lock_guard<std::mutex> lock(hdf5_mutex());
  const H5Id file = open_checkpoint_file(path);
  const auto format = read_string_attr(file.id, "format");
  if (format && *format == kFormat)
    throw InputError(fmt::format("{}: the checkpoint of a single run, not of a replica ensemble: a config with "
                                 "'replicas:' resumes only its own ensemble's checkpoint",
                                 path));
  if (!format || *format != kEnsembleFormat)
    throw InputError(fmt::format("{}: not an mdsim ensemble checkpoint (root attribute format is not \"{}\")", path,
                                 kEnsembleFormat));
  check_format_version(file.id, path);
  const auto require = [&](auto value, const char* name) { return required_attr(value, path, name); };
  EnsembleCheckpoint e;
  e.step = require(read_scalar_attr<std::int64_t>(file.id, "step", H5T_NATIVE_INT64), "step");
  const std::int64_t n = require(read_scalar_attr<std::int64_t>(file.id, "num_replicas", H5T_NATIVE_INT64), "num_replicas");
  if (n < 1 || n > 100000) throw InputError(fmt::format("{}: damaged checkpoint: num_replicas {}", path, n));
  e.exchange = require(read_string_attr(file.id, "exchange"), "exchange");
  e.ensemble_seed = require(read_scalar_attr<std::uint64_t>(file.id, "ensemble_seed", H5T_NATIVE_UINT64), "ensemble_seed");
  e.exchange_seed = require(read_scalar_attr<std::uint64_t>(file.id, "exchange_seed", H5T_NATIVE_UINT64), "exchange_seed");
  if (!read_matrix(file.id, path, "temperatures_k", 0, 0, e.temperatures_k, true))
    throw InputError(fmt::format("{}: damaged checkpoint: dataset /temperatures_k is missing", path));
  if (!read_matrix(file.id, path, "exchange_state", 0, 0, e.exchange_state, true))
    throw InputError(fmt::format("{}: damaged checkpoint: dataset /exchange_state is missing", path));
  for (std::int64_t k = 0; k < n; ++k) {
    const std::string name = replica_group(static_cast<std::size_t>(k));
    if (H5Lexists(file.id, name.c_str(), H5P_DEFAULT) <= 0)
      throw InputError(fmt::format("{}: damaged checkpoint: group /{} is missing ({} replicas)", path, name, n));
    H5Id group(H5Gopen2(file.id, name.c_str(), H5P_DEFAULT), H5Gclose);
    if (!group.ok()) throw InputError(fmt::format("{}: damaged checkpoint: cannot open group /{}", path, name));
    const std::string label = fmt::format("{} (/{})", path, name);
    Checkpoint c = read_checkpoint_object(group.id, label, expected);
    if (c.step != e.step)
      throw InputError(fmt::format("{}: damaged checkpoint: at step {}, the ensemble at {}", label, c.step, e.step));
    e.replicas.push_back(std::move(c));
  }
  return e;
}

}  // namespace mdsim
