#include "io/hdf5_arrays.hpp"

#include <hdf5.h>

#include <cstdio>
#include <filesystem>

#include <fmt/format.h>

#include "common/errors.hpp"
#include "io/atomic_file.hpp"
#include "io/h5_util.hpp"

namespace mdsim {

namespace {

void write_vec3(hid_t file, const char* name, const std::vector<Vec3d>& v, const char* unit, const std::string& path) {
  const hsize_t dims[2] = {v.size(), 3};
  H5Id space{H5Screate_simple(2, dims, nullptr), H5Sclose};
  H5Id set{H5Dcreate2(file, name, H5T_IEEE_F64LE, space.id, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), H5Dclose};
  if (set.id < 0) throw RuntimeError(fmt::format("{}: cannot create dataset {}", path, name));
  std::vector<double> flat;
  flat.reserve(v.size() * 3);
  for (const Vec3d& x : v) {
    flat.push_back(x.x);
    flat.push_back(x.y);
    flat.push_back(x.z);
  }
  if (H5Dwrite(set.id, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, flat.data()) < 0)
    throw RuntimeError(fmt::format("{}: cannot write dataset {}", path, name));
  H5Id str{H5Tcopy(H5T_C_S1), H5Tclose};
  H5Tset_size(str.id, std::char_traits<char>::length(unit));
  H5Id aspace{H5Screate(H5S_SCALAR), H5Sclose};
  H5Id attr{H5Acreate2(set.id, "unit", str.id, aspace.id, H5P_DEFAULT, H5P_DEFAULT), H5Aclose};
  if (attr.id < 0 || H5Awrite(attr.id, str.id, unit) < 0)
    throw RuntimeError(fmt::format("{}: cannot write the unit of {}", path, name));
}

}  // namespace

void write_forces_h5(const std::string& path, const std::vector<Vec3d>& positions_nm,
                     const std::vector<Vec3d>& forces_kj_per_mol_nm) {
  const std::string tmp = partial_path(path);
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);  // errors become exceptions, not HDF5's stack dump
  {
    H5Id file{H5Fcreate(tmp.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT), H5Fclose};
    if (file.id < 0) throw InputError(fmt::format("{}: cannot create the HDF5 file", path));
    try {
      write_vec3(file.id, "positions", positions_nm, "nm", path);
      write_vec3(file.id, "forces", forces_kj_per_mol_nm, "kJ/mol/nm", path);
    } catch (...) {
      std::remove(tmp.c_str());
      throw;
    }
  }
  publish_partial(tmp, path, "the finished file", /*durable=*/false);
}

std::vector<Vec3d> read_vec3_dataset_h5(const std::string& path, const std::string& dataset) {
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  H5Id file{H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose};
  if (file.id < 0) throw InputError(fmt::format("{}: cannot open as HDF5", path));
  H5Id set{H5Dopen2(file.id, dataset.c_str(), H5P_DEFAULT), H5Dclose};
  if (set.id < 0) throw InputError(fmt::format("{}: no dataset {}", path, dataset));
  H5Id space{H5Dget_space(set.id), H5Sclose};
  hsize_t dims[2] = {0, 0};
  if (H5Sget_simple_extent_ndims(space.id) != 2 || H5Sget_simple_extent_dims(space.id, dims, nullptr) < 0 || dims[1] != 3)
    throw InputError(fmt::format("{}: dataset {} is not N×3", path, dataset));
  std::vector<double> flat(dims[0] * 3);
  if (H5Dread(set.id, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, flat.data()) < 0)
    throw InputError(fmt::format("{}: cannot read dataset {}", path, dataset));
  std::vector<Vec3d> out(dims[0]);
  for (hsize_t i = 0; i < dims[0]; ++i) out[i] = Vec3d(flat[3 * i], flat[3 * i + 1], flat[3 * i + 2]);
  return out;
}

}  // namespace mdsim
