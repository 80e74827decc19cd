#include "io/trajectory_h5.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <hdf5.h>
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <type_traits>
#include <utility>

#include "common/errors.hpp"
#include "io/atomic_file.hpp"
#include "io/h5_util.hpp"
#include "mdsim_version.hpp"

static_assert(std::is_same_v<hid_t, std::int64_t>, "TrajectoryWriter stores hid_t as int64_t");

namespace mdsim {

std::mutex& hdf5_mutex() {
  static std::mutex m;
  return m;
}

namespace {

constexpr double kPi = 3.141592653589793;

enum DatasetSlot { kPos, kVel, kFrc, kStep, kTime, kEdges, kCellLengths, kCellAngles, kNumSlots };

// The innermost reason on HDF5's error stack, e.g. "No space left on device" (from the system
// error HDF5 reports), else the innermost description.
std::string h5_error_reason() {
  std::vector<std::string> descriptions;
  H5Ewalk2(
      H5E_DEFAULT, H5E_WALK_DOWNWARD,
      [](unsigned, const H5E_error2_t* e, void* data) -> herr_t {
        if (e && e->desc) static_cast<std::vector<std::string>*>(data)->emplace_back(e->desc);
        return 0;
      },
      &descriptions);
  for (auto it = descriptions.rbegin(); it != descriptions.rend(); ++it) {
    const std::string& d = *it;
    const std::size_t k = d.find("error message = '");
    if (k != std::string::npos) {
      const std::size_t start = k + std::strlen("error message = '");
      const std::size_t end = d.find('\'', start);
      return d.substr(start, end == std::string::npos ? std::string::npos : end - start);
    }
  }
  if (!descriptions.empty()) return descriptions.back();
  return "unknown HDF5 error";
}

void set_vlen_string_array_attr(hid_t obj, const char* name, const std::vector<std::string>& values) {
  H5Id type(H5Tcopy(H5T_C_S1), H5Tclose);
  H5Tset_size(type.id, H5T_VARIABLE);
  H5Tset_cset(type.id, H5T_CSET_UTF8);
  const hsize_t dims[1] = {values.size()};
  H5Id space(H5Screate_simple(1, dims, nullptr), H5Sclose);
  H5Id attr(H5Acreate2(obj, name, type.id, space.id, H5P_DEFAULT, H5P_DEFAULT), H5Aclose);
  std::vector<const char*> ptrs;
  for (const std::string& v : values) ptrs.push_back(v.c_str());
  if (!attr.ok() || H5Awrite(attr.id, type.id, ptrs.data()) < 0)
    throw RuntimeError(fmt::format("cannot write attribute {}", name));
}

template <typename T>
void set_scalar_attr(hid_t obj, const char* name, hid_t file_type, hid_t mem_type, T value) {
  H5Id space(H5Screate(H5S_SCALAR), H5Sclose);
  H5Id attr(H5Aexists(obj, name) > 0 ? H5Aopen(obj, name, H5P_DEFAULT)
                                       : H5Acreate2(obj, name, file_type, space.id, H5P_DEFAULT, H5P_DEFAULT),
            H5Aclose);
  if (!attr.ok() || H5Awrite(attr.id, mem_type, &value) < 0)
    throw RuntimeError(fmt::format("cannot write attribute {}", name));
}

void set_int_array_attr(hid_t obj, const char* name, const std::vector<int>& values) {
  const hsize_t dims[1] = {values.size()};
  H5Id space(H5Screate_simple(1, dims, nullptr), H5Sclose);
  H5Id attr(H5Acreate2(obj, name, H5T_STD_I32LE, space.id, H5P_DEFAULT, H5P_DEFAULT), H5Aclose);
  if (!attr.ok() || H5Awrite(attr.id, H5T_NATIVE_INT, values.data()) < 0)
    throw RuntimeError(fmt::format("cannot write attribute {}", name));
}

// The mdsim_stage_* root attributes of a staged run (replaced when they exist: an appending run rewrites them).
void set_stage_attrs(hid_t file, const std::vector<TrajectoryStage>& stages) {
  std::vector<std::string> names;
  std::vector<std::int64_t> first, last;
  for (const TrajectoryStage& st : stages) {
    names.push_back(st.name);
    first.push_back(st.first_step);
    last.push_back(st.last_step);
  }
  for (const char* name : {"mdsim_stage_names", "mdsim_stage_first_step", "mdsim_stage_last_step"})
    if (H5Aexists(file, name) > 0 && H5Adelete(file, name) < 0)
      throw RuntimeError(fmt::format("cannot replace attribute {}", name));
  if (stages.empty()) return;
  set_vlen_string_array_attr(file, "mdsim_stage_names", names);
  const hsize_t dims[1] = {stages.size()};
  for (const auto& [name, values] : {std::pair{"mdsim_stage_first_step", &first}, std::pair{"mdsim_stage_last_step", &last}}) {
    H5Id space(H5Screate_simple(1, dims, nullptr), H5Sclose);
    H5Id attr(H5Acreate2(file, name, H5T_STD_I64LE, space.id, H5P_DEFAULT, H5P_DEFAULT), H5Aclose);
    if (!attr.ok() || H5Awrite(attr.id, H5T_NATIVE_INT64, values->data()) < 0)
      throw RuntimeError(fmt::format("cannot write attribute {}", name));
  }
}

hid_t make_group(hid_t parent, const char* name) {
  const hid_t g = H5Gcreate2(parent, name, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  if (g < 0) throw RuntimeError(fmt::format("cannot create group {}", name));
  return g;
}

// Extendible dataset of shape (0, tail...) chunked as (chunk_frames, tail...).
hid_t make_extendible(hid_t parent, const char* name, hid_t file_type, std::vector<hsize_t> tail, hsize_t chunk_frames,
                      int gzip_level) {
  std::vector<hsize_t> dims{0}, maxdims{H5S_UNLIMITED}, chunk{chunk_frames};
  for (hsize_t t : tail) {
    dims.push_back(t);
    maxdims.push_back(t);
    chunk.push_back(t);
  }
  const int rank = static_cast<int>(dims.size());
  H5Id space(H5Screate_simple(rank, dims.data(), maxdims.data()), H5Sclose);
  H5Id dcpl(H5Pcreate(H5P_DATASET_CREATE), H5Pclose);
  H5Pset_chunk(dcpl.id, rank, chunk.data());
  if (gzip_level > 0) {
    H5Pset_shuffle(dcpl.id);
    H5Pset_deflate(dcpl.id, static_cast<unsigned>(gzip_level));
  }
  const hid_t d = H5Dcreate2(parent, name, file_type, space.id, H5P_DEFAULT, dcpl.id, H5P_DEFAULT);
  if (d < 0) throw RuntimeError(fmt::format("cannot create dataset {}", name));
  return d;
}

void hard_link(hid_t file, const char* existing, const char* link_name) {
  if (H5Lcreate_hard(file, existing, file, link_name, H5P_DEFAULT, H5P_DEFAULT) < 0)
    throw RuntimeError(fmt::format("cannot link {} to {}", link_name, existing));
}

// File access: the metadata cache never writes on its own (no evictions), only at H5Fflush /
// H5Fclose, so the file on disk always is the state of the last flush. No file locking, so that
// readers can look at the flushed frames while the simulation runs.
hid_t make_fapl() {
  const hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
  H5Pset_fapl_sec2(fapl);
#if H5_VERSION_GE(1, 12, 1) || (H5_VERS_MAJOR == 1 && H5_VERS_MINOR == 10 && H5_VERS_RELEASE >= 7)
  H5Pset_file_locking(fapl, false, true);
#endif
  H5AC_cache_config_t config;
  std::memset(&config, 0, sizeof config);
  config.version = H5AC__CURR_CACHE_CONFIG_VERSION;
  if (H5Pget_mdc_config(fapl, &config) >= 0) {
    config.evictions_enabled = false;
    config.incr_mode = H5C_incr__off;
    config.flash_incr_mode = H5C_flash_incr__off;
    config.decr_mode = H5C_decr__off;
    H5Pset_mdc_config(fapl, &config);
  }
  return fapl;
}

std::string json_escape(const std::string& s) {
  std::string out;
  for (const char ch : s) {
    const unsigned char c = static_cast<unsigned char>(ch);
    if (c == '"') out += "\\\"";
    else if (c == '\\') out += "\\\\";
    else if (c < 0x20) out += fmt::format("\\u{:04x}", static_cast<unsigned>(c));
    else out.push_back(ch);
  }
  return out;
}

void check_folder_writable(const std::string& path) {
  namespace fs = std::filesystem;
  fs::path folder = fs::path(path).parent_path();
  if (folder.empty()) folder = ".";
  std::error_code ec;
  if (!fs::exists(folder, ec))
    throw InputError(fmt::format("{}: cannot write the trajectory: folder '{}' does not exist", path, folder.string()));
  if (!fs::is_directory(folder, ec))
    throw InputError(fmt::format("{}: cannot write the trajectory: '{}' is not a folder", path, folder.string()));
  if (::access(folder.c_str(), W_OK | X_OK) != 0)
    throw InputError(fmt::format("{}: cannot write the trajectory: folder '{}' is not writable ({})", path,
                                 folder.string(), std::strerror(errno)));
}

// Chunk length (frames) of the small per-frame datasets: step, time, box edges, cell lengths and angles.
constexpr hsize_t kSmallChunk = 256;

// The root attributes: MDTraj's (Pande conventions) and mdsim's own; complete stays 0 until a clean close.
void write_root_attributes(hid_t file, const TrajectoryOptions& options) {
  set_vlen_string_attr(file, "conventions", "Pande");
  set_vlen_string_attr(file, "conventionVersion", "1.1");
  set_vlen_string_attr(file, "program", "mdsim");
  set_vlen_string_attr(file, "programVersion", MDSIM_VERSION_STRING);
  set_vlen_string_attr(file, "title", options.title);
  set_vlen_string_attr(file, "application", "mdsim");
  set_vlen_string_attr(file, "mdsim_selection", options.selection);
  if (options.seed) set_scalar_attr(file, "seed", H5T_STD_U64LE, H5T_NATIVE_UINT64, std::uint64_t{*options.seed});
  if (!options.config_hash.empty()) set_vlen_string_attr(file, "config_hash", options.config_hash);
  if (!options.stages.empty()) set_stage_attrs(file, options.stages);
  set_scalar_attr(file, "complete", H5T_STD_I32LE, H5T_NATIVE_INT, 0);
}

// H5MD's /h5md: version, author and creator.
void write_h5md_group(hid_t file) {
  H5Id h5md(make_group(file, "h5md"), H5Gclose);
  set_int_array_attr(h5md.id, "version", {1, 1});
  H5Id author(make_group(h5md.id, "author"), H5Gclose);
  const char* user = std::getenv("USER");
  set_vlen_string_attr(author.id, "name", user && *user ? user : "unknown");
  H5Id creator(make_group(h5md.id, "creator"), H5Gclose);
  set_vlen_string_attr(creator.id, "name", "mdsim");
  set_vlen_string_attr(creator.id, "version", MDSIM_VERSION_STRING);
}

// Frames per chunk of the per-atom datasets: compressed chunks are written once, whole (one frame each);
// uncompressed ones are rewritten in place as frames fill them (about 64 KiB each).
hsize_t per_atom_chunk_frames(hsize_t num_atoms, int gzip_level) {
  const hsize_t frame_bytes = num_atoms * 3 * sizeof(float);
  return gzip_level > 0 ? 1 : std::clamp<hsize_t>((64 * 1024) / std::max<hsize_t>(frame_bytes, 1), 1, 256);
}

// The frames×N×3 float32 `value` of a /particles/all group, with its unit (H5MD) and units (MDTraj).
struct PerAtomValues {
  hsize_t num_atoms;
  hsize_t chunk_frames;
  int gzip_level;

  void create(hid_t group, const char* unit, const char* units, std::int64_t& id) const {
    id = make_extendible(group, "value", H5T_IEEE_F32LE, {num_atoms, 3}, chunk_frames, gzip_level);
    set_vlen_string_attr(id, "unit", unit);
    set_vlen_string_attr(id, "units", units);
  }
};

// /particles/all/position: the positions, and the step and time datasets every other group shares.
void create_position_group(hid_t all, const PerAtomValues& values, std::vector<std::int64_t>& ids) {
  H5Id position(make_group(all, "position"), H5Gclose);
  values.create(position.id, "nm", "nanometers", ids[kPos]);
  ids[kStep] = make_extendible(position.id, "step", H5T_STD_I64LE, {}, kSmallChunk, 0);
  ids[kTime] = make_extendible(position.id, "time", H5T_IEEE_F64LE, {}, kSmallChunk, 0);
  set_vlen_string_attr(ids[kTime], "unit", "ps");
  set_vlen_string_attr(ids[kTime], "units", "picoseconds");
}

// /particles/all/box: H5MD's dimension and boundary, and the box edges of each frame when periodic.
void create_box_group(hid_t file, hid_t all, bool periodic, std::vector<std::int64_t>& ids) {
  H5Id box(make_group(all, "box"), H5Gclose);
  set_scalar_attr(box.id, "dimension", H5T_STD_I32LE, H5T_NATIVE_INT, 3);
  const std::string boundary = periodic ? "periodic" : "none";
  set_vlen_string_array_attr(box.id, "boundary", {boundary, boundary, boundary});
  if (periodic) {
    H5Id edges(make_group(box.id, "edges"), H5Gclose);
    ids[kEdges] = make_extendible(edges.id, "value", H5T_IEEE_F64LE, {3, 3}, kSmallChunk, 0);
    set_vlen_string_attr(ids[kEdges], "unit", "nm");
    hard_link(file, "particles/all/position/step", "particles/all/box/edges/step");
    hard_link(file, "particles/all/position/time", "particles/all/box/edges/time");
  }
}

// /particles/all/<name> (velocity, force): per-atom values with the position's step and time.
void create_per_atom_group(hid_t file, hid_t all, const char* name, const PerAtomValues& values, const char* unit,
                           const char* units, std::int64_t& id) {
  H5Id group(make_group(all, name), H5Gclose);
  values.create(group.id, unit, units, id);
  const std::string path = std::string("particles/all/") + name;
  hard_link(file, "particles/all/position/step", (path + "/step").c_str());
  hard_link(file, "particles/all/position/time", (path + "/time").c_str());
}

// MDTraj's names of the positions and times (hard links: one copy of the data), and its cell lengths and
// angles of each frame when periodic.
void create_mdtraj_datasets(hid_t file, bool periodic, std::vector<std::int64_t>& ids) {
  hard_link(file, "particles/all/position/value", "coordinates");
  hard_link(file, "particles/all/position/time", "time");
  if (periodic) {
    ids[kCellLengths] = make_extendible(file, "cell_lengths", H5T_IEEE_F32LE, {3}, kSmallChunk, 0);
    set_vlen_string_attr(ids[kCellLengths], "units", "nanometers");
    ids[kCellAngles] = make_extendible(file, "cell_angles", H5T_IEEE_F32LE, {3}, kSmallChunk, 0);
    set_vlen_string_attr(ids[kCellAngles], "units", "degrees");
  }
}

// MDTraj's /topology: a one-element fixed-length string array holding JSON.
void write_topology_json(hid_t file, const std::string& json) {
  H5Id type(H5Tcopy(H5T_C_S1), H5Tclose);
  H5Tset_size(type.id, std::max<std::size_t>(json.size(), 1));
  H5Tset_strpad(type.id, H5T_STR_NULLPAD);
  const hsize_t one[1] = {1};
  H5Id space(H5Screate_simple(1, one, nullptr), H5Sclose);
  H5Id set(H5Dcreate2(file, "topology", type.id, space.id, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), H5Dclose);
  if (!set.ok() || H5Dwrite(set.id, type.id, H5S_ALL, H5S_ALL, H5P_DEFAULT, json.c_str()) < 0)
    throw RuntimeError("cannot write /topology");
}

std::string read_topology_string(hid_t file) {
  H5Id set(H5Dopen2(file, "topology", H5P_DEFAULT), H5Dclose);
  if (!set.ok()) return {};
  H5Id type(H5Dget_type(set.id), H5Tclose);
  if (H5Tget_class(type.id) != H5T_STRING || H5Tis_variable_str(type.id) > 0) return {};
  const std::size_t size = H5Tget_size(type.id);
  std::string s(size, '\0');
  if (H5Dread(set.id, type.id, H5S_ALL, H5S_ALL, H5P_DEFAULT, s.data()) < 0) return {};
  s.resize(std::strlen(s.c_str()));
  return s;
}

}  // namespace

std::string mdtraj_topology_json(const Topology& topology, const std::vector<int>& atoms) {
  const int n = topology.num_atoms();
  std::vector<int> new_index(static_cast<std::size_t>(n), -1);
  for (std::size_t k = 0; k < atoms.size(); ++k) new_index[static_cast<std::size_t>(atoms[k])] = static_cast<int>(k);

  std::string json = "{\"chains\": [";
  int chain_count = 0, residue_count = 0;
  for (const TopologyChain& chain : topology.chains) {
    std::string residues_json;
    int residues_here = 0;
    for (int r : chain.residues) {
      const TopologyResidue& residue = topology.residues[static_cast<std::size_t>(r)];
      std::string atoms_json;
      int atoms_here = 0;
      for (int a : residue.atoms) {
        const int k = new_index[static_cast<std::size_t>(a)];
        if (k < 0) continue;
        const TopologyAtom& atom = topology.atoms[static_cast<std::size_t>(a)];
        atoms_json += fmt::format("{}{{\"index\": {}, \"name\": \"{}\", \"element\": \"{}\"}}", atoms_here ? ", " : "",
                                  k, json_escape(atom.name), json_escape(atom.element));
        ++atoms_here;
      }
      if (atoms_here == 0) continue;
      residues_json += fmt::format(
          "{}{{\"index\": {}, \"name\": \"{}\", \"resSeq\": {}, \"segmentID\": \"\", \"atoms\": [{}]}}",
          residues_here ? ", " : "", residue_count, json_escape(residue.name), residue.number, atoms_json);
      ++residues_here;
      ++residue_count;
    }
    if (residues_here == 0) continue;
    json += fmt::format("{}{{\"index\": {}, \"chain_id\": \"{}\", \"residues\": [{}]}}", chain_count ? ", " : "",
                        chain_count, json_escape(chain.id), residues_json);
    ++chain_count;
  }
  json += "], \"bonds\": [";
  const auto& bonds = topology.bonds.empty() ? topology.conect : topology.bonds;
  bool first = true;
  for (const auto& [i, j] : bonds) {
    if (i < 0 || j < 0 || i >= n || j >= n) continue;
    const int a = new_index[static_cast<std::size_t>(i)], b = new_index[static_cast<std::size_t>(j)];
    if (a < 0 || b < 0) continue;
    json += fmt::format("{}[{}, {}]", first ? "" : ", ", a, b);
    first = false;
  }
  json += "]}";
  return json;
}

TrajectoryWriter::TrajectoryWriter(const std::string& path, const Topology& topology, TrajectoryOptions options)
    : path_(path), options_(std::move(options)), total_atoms_(topology.num_atoms()), ids_(kNumSlots, -1) {
  if (total_atoms_ == 0) throw InputError(fmt::format("{}: cannot write a trajectory of a system without atoms", path_));
  if (options_.atoms.empty()) {
    atoms_.resize(static_cast<std::size_t>(total_atoms_));
    for (int i = 0; i < total_atoms_; ++i) atoms_[static_cast<std::size_t>(i)] = i;
  } else {
    atoms_ = options_.atoms;
    for (std::size_t k = 0; k < atoms_.size(); ++k) {
      if (atoms_[k] < 0 || atoms_[k] >= total_atoms_)
        throw InputError(fmt::format("{}: selected atom index {} is outside 0..{}", path_, atoms_[k], total_atoms_ - 1));
      if (k > 0 && atoms_[k] <= atoms_[k - 1])
        throw InputError(fmt::format("{}: selected atom indices must be sorted and unique", path_));
    }
  }
  if (options_.gzip_level < 0 || options_.gzip_level > 9)
    throw InputError(fmt::format("{}: gzip level must be 0..9 (got {})", path_, options_.gzip_level));
  check_folder_writable(path_);
  const std::optional<std::uint64_t> fault_bytes = fault_injection_bytes_from_environment();

  std::lock_guard<std::mutex> lock(hdf5_mutex());
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  try {
    bool appended = false;
    if (options_.append_after_step && std::filesystem::exists(path_)) appended = open_for_append(topology, *options_.append_after_step);
    if (!appended) create(topology);
    if (fault_bytes) {
      hsize_t size = 0;
      if (H5Fget_filesize(file_id_, &size) < 0) throw RuntimeError(fmt::format("{}: cannot read the file size", path_));
      fault_limit_bytes_ = size + *fault_bytes;
    }
  } catch (...) {
    close_handles();
    throw;
  }
}

std::optional<std::uint64_t> TrajectoryWriter::fault_injection_bytes_from_environment() {
  const char* text = std::getenv(kFaultInjectionVariable);
  if (text == nullptr || *text == '\0') return std::nullopt;
  const std::string value(text);
  if (!std::all_of(value.begin(), value.end(), [](unsigned char c) { return std::isdigit(c) != 0; }) ||
      value.size() > 18)
    throw InputError(fmt::format("{}: expected a whole number of bytes (a testing hook: the trajectory fails as on a "
                                 "full disk once it would grow by more than that), got '{}'",
                                 kFaultInjectionVariable, value));
  return std::stoull(value);
}

void TrajectoryWriter::create(const Topology& topology) {
  // Built under a temporary name and renamed once complete and flushed: a run killed while the
  // file is set up leaves no unreadable file (and an older file at `path` is replaced only then).
  const std::string partial = partial_path(path_);
  {
    H5Id fapl(make_fapl(), H5Pclose);
    file_id_ = H5Fcreate(partial.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl.id);
  }
  if (file_id_ < 0)
    throw InputError(fmt::format("{}: cannot create the trajectory file: {}", path_, h5_error_reason()));
  const hid_t file = file_id_;
  try {
    write_root_attributes(file, options_);
    write_h5md_group(file);
    const PerAtomValues values{atoms_.size(), per_atom_chunk_frames(atoms_.size(), options_.gzip_level),
                               options_.gzip_level};
    frames_per_chunk_ = static_cast<std::size_t>(values.chunk_frames);

    H5Id particles(make_group(file, "particles"), H5Gclose);
    H5Id all(make_group(particles.id, "all"), H5Gclose);
    create_position_group(all.id, values, ids_);
    create_box_group(file, all.id, options_.periodic, ids_);
    if (options_.velocities) {
      create_per_atom_group(file, all.id, "velocity", values, "nm ps-1", "nanometers/picosecond", ids_[kVel]);
      hard_link(file, "particles/all/velocity/value", "velocities");
    }
    if (options_.forces)
      create_per_atom_group(file, all.id, "force", values, "kJ mol-1 nm-1", "kilojoules/mole/nanometer", ids_[kFrc]);
    create_mdtraj_datasets(file, options_.periodic, ids_);
    write_topology_json(file, mdtraj_topology_json(topology, atoms_));
    if (H5Fflush(file, H5F_SCOPE_LOCAL) < 0) throw RuntimeError("cannot flush");
  } catch (const RuntimeError& e) {
    const std::string reason = h5_error_reason();
    close_handles();
    std::remove(partial.c_str());
    throw RuntimeError(fmt::format("{}: cannot set up the trajectory file ({}): {}", path_, e.what(), reason));
  }
  try {
    publish_partial(partial, path_, "the new trajectory file", /*durable=*/false);
  } catch (...) {
    close_handles();
    throw;
  }
}

bool TrajectoryWriter::open_for_append(const Topology& topology, std::int64_t after_step) {
  {
    H5Id fapl(make_fapl(), H5Pclose);
    file_id_ = H5Fopen(path_.c_str(), H5F_ACC_RDWR, fapl.id);
  }
  if (file_id_ < 0)
    throw InputError(fmt::format("{}: cannot reopen the trajectory to append to it: {}", path_, h5_error_reason()));
  const hid_t file = file_id_;
  const auto open = [&](DatasetSlot slot, const char* name, bool wanted) {
    const bool exists = H5Lexists(file, name, H5P_DEFAULT) > 0;
    if (exists != wanted)
      throw InputError(fmt::format("{}: cannot append: the existing trajectory {} dataset {} but this run {} it", path_,
                                   exists ? "has" : "lacks", name, wanted ? "writes" : "does not write"));
    if (wanted) {
      ids_[slot] = H5Dopen2(file, name, H5P_DEFAULT);
      if (ids_[slot] < 0) throw InputError(fmt::format("{}: cannot append: cannot open {}", path_, name));
    }
  };
  open(kPos, "particles/all/position/value", true);
  open(kStep, "particles/all/position/step", true);
  open(kTime, "particles/all/position/time", true);
  open(kVel, "particles/all/velocity/value", options_.velocities);
  open(kFrc, "particles/all/force/value", options_.forces);
  open(kEdges, "particles/all/box/edges/value", options_.periodic);
  open(kCellLengths, "cell_lengths", options_.periodic);
  open(kCellAngles, "cell_angles", options_.periodic);

  hsize_t dims[3] = {0, 0, 0};
  {
    H5Id space(H5Dget_space(ids_[kPos]), H5Sclose);
    if (H5Sget_simple_extent_ndims(space.id) != 3 || H5Sget_simple_extent_dims(space.id, dims, nullptr) < 0 ||
        dims[1] != atoms_.size() || dims[2] != 3)
      throw InputError(fmt::format("{}: cannot append: the existing trajectory holds {} atoms per frame, this run "
                                   "writes {}",
                                   path_, dims[1], atoms_.size()));
  }
  if (read_topology_string(file) != mdtraj_topology_json(topology, atoms_))
    throw InputError(fmt::format("{}: cannot append: the existing trajectory was written for other atoms (its "
                                 "/topology differs from this run's system and selection)",
                                 path_));
  std::vector<std::int64_t> steps(dims[0]);
  if (dims[0] > 0 && H5Dread(ids_[kStep], H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, steps.data()) < 0)
    throw InputError(fmt::format("{}: cannot append: cannot read its steps", path_));
  std::int64_t keep = 0;
  while (keep < static_cast<std::int64_t>(steps.size()) && steps[static_cast<std::size_t>(keep)] <= after_step) ++keep;
  try {
    for (int slot = 0; slot < kNumSlots; ++slot) {
      if (ids_[slot] < 0) continue;
      H5Id space(H5Dget_space(ids_[slot]), H5Sclose);
      hsize_t d[3] = {0, 0, 0};
      const int rank = H5Sget_simple_extent_dims(space.id, d, nullptr);
      if (rank < 1) throw RuntimeError("cannot read a dataset's shape");
      d[0] = static_cast<hsize_t>(keep);
      if (H5Dset_extent(ids_[slot], d) < 0) throw RuntimeError("cannot drop the frames after the restart step");
    }
    set_scalar_attr(file, "complete", H5T_STD_I32LE, H5T_NATIVE_INT, 0);
    set_stage_attrs(file, options_.stages);
    if (H5Fflush(file, H5F_SCOPE_LOCAL) < 0) throw RuntimeError("cannot flush");
  } catch (const RuntimeError& e) {
    throw RuntimeError(fmt::format("{}: cannot append ({}): {}", path_, e.what(), h5_error_reason()));
  }
  frames_ = keep;
  flushed_frames_ = keep;
  return true;
}

TrajectoryWriter::~TrajectoryWriter() {
  if (closed_) return;
  std::lock_guard<std::mutex> lock(hdf5_mutex());
  close_handles();  // complete stays 0
  if (!failed_) trim_reserved_tail();
}

bool TrajectoryWriter::close_handles() noexcept {
  bool ok = true;
  for (std::int64_t& id : ids_) {
    if (id >= 0) ok = H5Dclose(id) >= 0 && ok;
    id = -1;
  }
  // A failed H5Fclose leaves a half-closed file behind in HDF5 that must not be touched again.
  if (file_id_ >= 0 && H5Fclose(file_id_) < 0) ok = false;
  file_id_ = -1;
  return ok;
}

void TrajectoryWriter::fail(const std::string& what) { fail_with_reason(what, h5_error_reason()); }

void TrajectoryWriter::fail_with_reason(const std::string& what, const std::string& reason) {
  poison();
  throw RuntimeError(fmt::format("{}: {}: {}; the frames up to the last successful flush ({}) are kept and the "
                                 "file is marked incomplete (complete=0)",
                                 path_, what, reason, flushed_frames_));
}

int TrajectoryWriter::file_descriptor() const {
  int* handle = nullptr;
  if (H5Fget_vfd_handle(file_id_, H5P_DEFAULT, reinterpret_cast<void**>(&handle)) < 0 || !handle) return -1;
  return *handle;
}

void TrajectoryWriter::reserve_space(std::size_t bytes_to_add, const std::string& what) {
  hsize_t size = 0;  // the larger of HDF5's end of allocation and end of file
  if (H5Fget_filesize(file_id_, &size) < 0) fail(what);
  const std::uint64_t length = bytes_to_add + kSpaceReserveBytes;
  if (fault_limit_bytes_ > 0 && size + bytes_to_add > fault_limit_bytes_)
    fail_with_reason(what, fmt::format("No space left on device (fault injection: limit {} bytes)", fault_limit_bytes_));
  if (!reserve_supported_) return;
  const int fd = file_descriptor();
  if (fd < 0) return;
  // Allocate the blocks the frame and the next flush's metadata will use: a full disk (ENOSPC) or a
  // file-size limit (EFBIG) is reported here, before anything is written, not half-way through a
  // flush. The file grows past HDF5's end of allocation (harmless for readers); close() trims it.
  if (::fallocate(fd, 0, static_cast<off_t>(size), static_cast<off_t>(length)) != 0) {
    const int err = errno;
    if (err == EOPNOTSUPP || err == ENOSYS || err == EINVAL)
      reserve_supported_ = false;  // file system without fallocate: writes may still fail, poison() covers that
    else
      fail_with_reason(what, std::strerror(err));
  }
}

void TrajectoryWriter::trim_reserved_tail() noexcept {
  // Cut the space reserved beyond the end of allocation recorded in the closed file's superblock.
  haddr_t eoa = 0;
  {
    H5Id fapl(make_fapl(), H5Pclose);
    H5Id file(H5Fopen(path_.c_str(), H5F_ACC_RDONLY, fapl.id), H5Fclose);
    if (!file.ok() || H5Fget_eoa(file.id, &eoa) < 0 || eoa == 0) return;
  }
  std::error_code ec;
  const auto size = std::filesystem::file_size(path_, ec);
  if (!ec && size > eoa) {
    const int rc = ::truncate(path_.c_str(), static_cast<off_t>(eoa));
    (void)rc;
  }
}

void TrajectoryWriter::poison() noexcept {
  // After a failed write nothing more may reach the file: HDF5's descriptor is pointed at an
  // anonymous in-memory file, so the close (which flushes everything not yet written) succeeds
  // without touching the state of the last successful flush on disk.
  failed_ = true;
  const int fd = file_descriptor();
  if (fd < 0) return;
  int scratch = ::memfd_create("mdsim-discarded-trajectory-writes", MFD_CLOEXEC);
  if (scratch < 0) {
    char name[] = "/tmp/mdsim-discarded-XXXXXX";
    scratch = ::mkostemp(name, O_CLOEXEC);
    if (scratch >= 0) ::unlink(name);
  }
  if (scratch < 0) return;
  ::dup2(scratch, fd);
  ::close(scratch);
}

void TrajectoryWriter::write_frame(const FrameView& frame) {
  std::lock_guard<std::mutex> lock(hdf5_mutex());
  if (closed_) throw RuntimeError(fmt::format("{}: write_frame after close", path_));
  if (failed_) throw RuntimeError(fmt::format("{}: the trajectory already failed; no more frames are written", path_));
  const std::size_t floats = 3 * static_cast<std::size_t>(total_atoms_);
  const auto check = [&](std::span<const float> s, bool wanted, const char* what) {
    if (wanted && s.size() != floats)
      throw RuntimeError(fmt::format("{}: {} of step {} have {} values, expected {} (3 per atom)", path_, what,
                                     frame.step, s.size(), floats));
  };
  check(frame.positions_nm, true, "positions");
  check(frame.velocities_nm_per_ps, options_.velocities, "velocities");
  check(frame.forces_kj_per_mol_nm, options_.forces, "forces");
  if (options_.periodic && !frame.box)
    throw RuntimeError(fmt::format("{}: frame of step {} has no box but the trajectory is periodic", path_, frame.step));
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);

  const hsize_t n = atoms_.size();
  const hsize_t f = static_cast<hsize_t>(frames_);
  const std::size_t per_array = static_cast<std::size_t>(n) * 3 * sizeof(float);
  const std::string what = fmt::format("cannot write frame {} (step {})", frames_, frame.step);
  // Room for this frame (a new chunk may hold up to `frames_per_chunk_` frames) and its metadata.
  reserve_space(per_array * (1 + options_.velocities + options_.forces) * frames_per_chunk_ + 4096, what);
  const auto extend = [&](DatasetSlot slot, hsize_t d1, hsize_t d2) {
    const hsize_t dims[3] = {f + 1, d1, d2};  // entries beyond the dataset's rank are ignored
    if (H5Dset_extent(ids_[slot], dims) < 0) fail(what);
  };
  const auto write_rows = [&](DatasetSlot slot, int rank, hsize_t d1, hsize_t d2, hid_t mem_type, const void* data) {
    const hsize_t start[3] = {f, 0, 0};
    const hsize_t count[3] = {1, d1, d2};
    H5Id file_space(H5Dget_space(ids_[slot]), H5Sclose);
    H5Id mem_space(H5Screate_simple(rank, count, nullptr), H5Sclose);
    if (!file_space.ok() || !mem_space.ok() ||
        H5Sselect_hyperslab(file_space.id, H5S_SELECT_SET, start, nullptr, count, nullptr) < 0 ||
        H5Dwrite(ids_[slot], mem_type, mem_space.id, file_space.id, H5P_DEFAULT, data) < 0)
      fail(what);
  };
  const auto gather = [&](std::span<const float> all) -> const float* {
    if (n == static_cast<hsize_t>(total_atoms_)) return all.data();
    scratch_.resize(static_cast<std::size_t>(n) * 3);
    for (std::size_t k = 0; k < n; ++k) {
      const std::size_t a = 3 * static_cast<std::size_t>(atoms_[k]);
      scratch_[3 * k] = all[a];
      scratch_[3 * k + 1] = all[a + 1];
      scratch_[3 * k + 2] = all[a + 2];
    }
    return scratch_.data();
  };

  extend(kPos, n, 3);
  write_rows(kPos, 3, n, 3, H5T_NATIVE_FLOAT, gather(frame.positions_nm));
  if (options_.velocities) {
    extend(kVel, n, 3);
    write_rows(kVel, 3, n, 3, H5T_NATIVE_FLOAT, gather(frame.velocities_nm_per_ps));
  }
  if (options_.forces) {
    extend(kFrc, n, 3);
    write_rows(kFrc, 3, n, 3, H5T_NATIVE_FLOAT, gather(frame.forces_kj_per_mol_nm));
  }
  extend(kStep, 0, 0);
  write_rows(kStep, 1, 0, 0, H5T_NATIVE_INT64, &frame.step);
  extend(kTime, 0, 0);
  write_rows(kTime, 1, 0, 0, H5T_NATIVE_DOUBLE, &frame.time_ps);
  if (options_.periodic) {
    const Boxd& b = *frame.box;
    const double edges[9] = {b.a.x, b.a.y, b.a.z, b.b.x, b.b.y, b.b.z, b.c.x, b.c.y, b.c.z};
    extend(kEdges, 3, 3);
    write_rows(kEdges, 3, 3, 3, H5T_NATIVE_DOUBLE, edges);
    const auto len = [](const Vec3d& v) { return std::sqrt(v.x * v.x + v.y * v.y + v.z * v.z); };
    const auto angle = [&](const Vec3d& u, const Vec3d& v) {
      const double c = (u.x * v.x + u.y * v.y + u.z * v.z) / (len(u) * len(v));
      return std::acos(std::clamp(c, -1.0, 1.0)) * 180.0 / kPi;
    };
    const float lengths[3] = {static_cast<float>(len(b.a)), static_cast<float>(len(b.b)), static_cast<float>(len(b.c))};
    const float angles[3] = {static_cast<float>(angle(b.b, b.c)), static_cast<float>(angle(b.a, b.c)),
                             static_cast<float>(angle(b.a, b.b))};
    extend(kCellLengths, 3, 0);
    write_rows(kCellLengths, 2, 3, 0, H5T_NATIVE_FLOAT, lengths);
    extend(kCellAngles, 3, 0);
    write_rows(kCellAngles, 2, 3, 0, H5T_NATIVE_FLOAT, angles);
  }
  ++frames_;
}

void TrajectoryWriter::flush() {
  std::lock_guard<std::mutex> lock(hdf5_mutex());
  if (closed_ || failed_) return;
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  const std::string what = fmt::format("cannot flush after {} frames", frames_);
  reserve_space(0, what);
  if (H5Fflush(file_id_, H5F_SCOPE_LOCAL) < 0) fail(what);
  flushed_frames_ = frames_;
}

void TrajectoryWriter::close() {
  std::lock_guard<std::mutex> lock(hdf5_mutex());
  if (closed_) return;
  if (failed_)
    throw RuntimeError(fmt::format("{}: the trajectory failed earlier and stays marked incomplete", path_));
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  // Everything on disk first; only then the mark that the file is complete.
  const std::string what = fmt::format("cannot flush after {} frames", frames_);
  reserve_space(0, what);
  if (H5Fflush(file_id_, H5F_SCOPE_LOCAL) < 0) fail(what);
  flushed_frames_ = frames_;
  try {
    set_scalar_attr(file_id_, "complete", H5T_STD_I32LE, H5T_NATIVE_INT, 1);
  } catch (const RuntimeError&) {
    fail("cannot mark the trajectory complete");
  }
  const bool ok = close_handles();
  closed_ = true;
  trim_reserved_tail();
  if (!ok) {
    failed_ = true;
    throw RuntimeError(fmt::format("{}: cannot close the trajectory: {}", path_, h5_error_reason()));
  }
}

}  // namespace mdsim
