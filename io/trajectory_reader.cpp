#include "io/trajectory_reader.hpp"

#include <hdf5.h>

#include <mutex>

#include <fmt/format.h>

#include "common/errors.hpp"
#include "io/h5_util.hpp"
#include "io/trajectory_h5.hpp"  // hdf5_mutex()

namespace mdsim {

namespace {

constexpr const char* kPosition = "particles/all/position/value";
constexpr const char* kStep = "particles/all/position/step";
constexpr const char* kTime = "particles/all/position/time";
constexpr const char* kVelocity = "particles/all/velocity/value";
constexpr const char* kForce = "particles/all/force/value";
constexpr const char* kEdges = "particles/all/box/edges/value";

bool exists(hid_t file, const char* path) {
  // Each link along the path must exist before H5Lexists may be asked about the next.
  std::string part;
  for (const char* p = path;; ++p) {
    if (*p == '/' || *p == '\0') {
      if (H5Lexists(file, part.c_str(), H5P_DEFAULT) <= 0) return false;
      if (*p == '\0') return true;
    }
    part += *p;
  }
}

// The extent of a dataset (empty when it cannot be opened).
std::vector<hsize_t> extent(hid_t file, const char* name) {
  H5Id set(H5Dopen2(file, name, H5P_DEFAULT), H5Dclose);
  if (!set.ok()) return {};
  H5Id space(H5Dget_space(set.id), H5Sclose);
  const int rank = H5Sget_simple_extent_ndims(space.id);
  if (rank < 1) return {};
  std::vector<hsize_t> dims(static_cast<std::size_t>(rank));
  H5Sget_simple_extent_dims(space.id, dims.data(), nullptr);
  return dims;
}

// Rows [first, first + 1) of a dataset of shape frames × d1 [× d2] into `out`.
template <typename T>
void read_row(hid_t file, const char* name, hid_t mem_type, std::int64_t frame, std::vector<T>& out,
              const std::string& path) {
  H5Id set(H5Dopen2(file, name, H5P_DEFAULT), H5Dclose);
  H5Id space(H5Dget_space(set.id), H5Sclose);
  const int rank = H5Sget_simple_extent_ndims(space.id);
  hsize_t dims[3] = {0, 1, 1};
  H5Sget_simple_extent_dims(space.id, dims, nullptr);
  hsize_t start[3] = {static_cast<hsize_t>(frame), 0, 0};
  hsize_t count[3] = {1, rank > 1 ? dims[1] : 1, rank > 2 ? dims[2] : 1};
  out.resize(static_cast<std::size_t>(count[1] * count[2]));
  H5Id mem(H5Screate_simple(rank, count, nullptr), H5Sclose);
  if (!set.ok() || H5Sselect_hyperslab(space.id, H5S_SELECT_SET, start, nullptr, count, nullptr) < 0 ||
      H5Dread(set.id, mem_type, mem.id, space.id, H5P_DEFAULT, out.data()) < 0)
    throw InputError(fmt::format("{}: cannot read frame {} of /{} (a damaged trajectory?)", path, frame, name));
}

}  // namespace

TrajectoryReader::TrajectoryReader(const std::string& path) : path_(path) {
  std::lock_guard<std::mutex> lock(hdf5_mutex());
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  const hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  if (file < 0) throw InputError(fmt::format("{}: cannot open the trajectory as an HDF5 file", path));
  file_ = file;
  try {
    if (!exists(file, kPosition) || !exists(file, kStep) || !exists(file, kTime))
      throw InputError(fmt::format("{}: not an mdsim trajectory (no /{})", path, kPosition));
    const std::vector<hsize_t> pos = extent(file, kPosition);
    if (pos.size() != 3 || pos[2] != 3) throw InputError(fmt::format("{}: /{} is not frames × atoms × 3", path, kPosition));
    atoms_ = static_cast<int>(pos[1]);
    const hsize_t frames = pos[0];
    const auto read_all = [&](const char* name, hid_t type, auto& out) {
      if (extent(file, name) != std::vector<hsize_t>{frames})
        throw InputError(fmt::format("{}: /{} does not have one entry per frame ({})", path, name, frames));
      out.resize(static_cast<std::size_t>(frames));
      H5Id set(H5Dopen2(file, name, H5P_DEFAULT), H5Dclose);
      if (frames > 0 && H5Dread(set.id, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, out.data()) < 0)
        throw InputError(fmt::format("{}: cannot read /{}", path, name));
    };
    read_all(kStep, H5T_NATIVE_INT64, steps_);
    read_all(kTime, H5T_NATIVE_DOUBLE, times_);
    const auto same_frames = [&](const char* name, std::vector<hsize_t> tail) {
      if (!exists(file, name)) return false;
      tail.insert(tail.begin(), frames);
      if (extent(file, name) != tail) throw InputError(fmt::format("{}: /{} has another shape than the positions", path, name));
      return true;
    };
    velocities_ = same_frames(kVelocity, {pos[1], 3});
    forces_ = same_frames(kForce, {pos[1], 3});
    periodic_ = same_frames(kEdges, {3, 3});
    H5Id root(H5Gopen2(file, "/", H5P_DEFAULT), H5Gclose);
    if (H5Aexists(root.id, "complete") > 0) {
      H5Id attr(H5Aopen(root.id, "complete", H5P_DEFAULT), H5Aclose);
      int value = 0;
      complete_ = H5Aread(attr.id, H5T_NATIVE_INT, &value) >= 0 && value == 1;
    }
    if (const std::optional<std::string> s = read_string_attr(root.id, "mdsim_selection")) selection_ = *s;
  } catch (...) {
    H5Fclose(file);
    file_ = -1;
    throw;
  }
}

TrajectoryReader::~TrajectoryReader() {
  std::lock_guard<std::mutex> lock(hdf5_mutex());
  if (file_ >= 0) H5Fclose(static_cast<hid_t>(file_));
}

TrajectoryFrame TrajectoryReader::read(std::int64_t frame) const {
  if (frame < 0 || frame >= frames())
    throw RuntimeError(fmt::format("{}: frame {} of {}", path_, frame, frames()));
  std::lock_guard<std::mutex> lock(hdf5_mutex());
  const hid_t file = static_cast<hid_t>(file_);
  TrajectoryFrame f;
  f.step = steps_[static_cast<std::size_t>(frame)];
  f.time_ps = times_[static_cast<std::size_t>(frame)];
  read_row(file, kPosition, H5T_NATIVE_FLOAT, frame, f.positions_nm, path_);
  if (velocities_) read_row(file, kVelocity, H5T_NATIVE_FLOAT, frame, f.velocities_nm_per_ps, path_);
  if (forces_) read_row(file, kForce, H5T_NATIVE_FLOAT, frame, f.forces_kj_per_mol_nm, path_);
  if (periodic_) {
    std::vector<double> e;
    read_row(file, kEdges, H5T_NATIVE_DOUBLE, frame, e, path_);
    f.box = Boxd{{e[0], e[1], e[2]}, {e[3], e[4], e[5]}, {e[6], e[7], e[8]}};
  }
  return f;
}

}  // namespace mdsim
