// Structure-aware libFuzzer target of the checkpoint reader (io/checkpoint_h5.hpp).
//
// HDF5's own parser is not fuzzed (HDF5 1.10 has known crashes on malformed bytes, and it is not ours):
// the input does not become the file's bytes. Instead each input
//   1. picks a valid checkpoint (atom count, box or none, barostat state, values) that the project's
//      writer, write_checkpoint, writes to a file in /dev/shm (or $TMPDIR);
//   2. then edits that file through the HDF5 C API with a list of mutations the input chooses: delete,
//      retype or reshape root attributes and datasets (strings for numbers, arrays for scalars, fixed- and
//      variable-length strings, empty dataspaces, groups where datasets belong, huge declared extents
//      with no data written), and write odd values (NaN, inf, huge, negative, mismatched counts, other
//      format versions, another system hash);
//   3. and calls read_checkpoint with the fingerprint of the system the checkpoint was written for (or,
//      chosen by the input, of another system).
// read_checkpoint is all the validation the resume path applies below the engine: engine/simulation.cpp's
// read_restart calls it with the system's fingerprint and then only compares the physics_settings key=value
// strings it returned with the config's (check_same_physics, which cannot index out of range). It documents
// InputError for a bad checkpoint; any other exception, a sanitizer report, a crash, a timeout or more than
// -rss_limit_mb of memory is a finding, and so is a checkpoint it accepts that breaks what the engine then
// relies on (checked below: as many finite positions and velocities as the system has atoms, finite time,
// a reduced box).
#include <fuzzer/FuzzedDataProvider.h>
#include <hdf5.h>
#include <unistd.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <string>
#include <vector>

#include "common/errors.hpp"
#include "io/checkpoint_h5.hpp"

namespace {

const char* const kRootAttributes[] = {"format",      "format_version", "mdsim_version", "step",
                                       "time_ps",     "seed",           "rng_counter",   "config_hash",
                                       "physics_settings", "num_atoms", "system_hash"};
const char* const kDatasets[] = {"positions_nm", "velocities_nm_per_ps", "box_nm", "barostat_state"};

std::string scratch_path() {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path dir = fs::is_directory("/dev/shm", ec) ? fs::path("/dev/shm") : fs::temp_directory_path();
  return (dir / ("mdsim_fuzz_checkpoint_" + std::to_string(::getpid()) + ".h5")).string();
}

// An "odd" double: the ones readers mishandle, or any bit pattern.
double odd_double(FuzzedDataProvider& in) {
  switch (in.ConsumeIntegralInRange<int>(0, 9)) {
    case 0: return std::numeric_limits<double>::quiet_NaN();
    case 1: return std::numeric_limits<double>::infinity();
    case 2: return -std::numeric_limits<double>::infinity();
    case 3: return std::numeric_limits<double>::max();
    case 4: return -1.0;
    case 5: return 0.0;
    case 6: return std::numeric_limits<double>::denorm_min();
    case 7: return 1e300;
    case 8: return static_cast<double>(in.ConsumeIntegral<std::int64_t>());
    default: {
      const auto bits = in.ConsumeIntegral<std::uint64_t>();
      double d;
      static_assert(sizeof d == sizeof bits);
      __builtin_memcpy(&d, &bits, sizeof d);
      return d;
    }
  }
}

std::int64_t odd_integer(FuzzedDataProvider& in) {
  switch (in.ConsumeIntegralInRange<int>(0, 7)) {
    case 0: return -1;
    case 1: return 0;
    case 2: return std::numeric_limits<std::int64_t>::max();
    case 3: return std::numeric_limits<std::int64_t>::min();
    case 4: return (std::int64_t{1} << 32) + in.ConsumeIntegralInRange<int>(0, 8);  // wraps to a small int
    case 5: return std::numeric_limits<int>::max() + std::int64_t{1};
    case 6: return in.ConsumeIntegralInRange<int>(-4, 8);
    default: return in.ConsumeIntegral<std::int64_t>();
  }
}

// An extent: small, or huge (declared only: nothing is written, HDF5 allocates no storage).
hsize_t odd_extent(FuzzedDataProvider& in, bool& huge) {
  switch (in.ConsumeIntegralInRange<int>(0, 5)) {
    case 0: huge = true; return (hsize_t{1} << 32) + in.ConsumeIntegralInRange<int>(0, 8);
    case 1: huge = true; return hsize_t{1} << in.ConsumeIntegralInRange<int>(20, 40);
    default: return in.ConsumeIntegralInRange<hsize_t>(0, 9);
  }
}

hid_t make_space(FuzzedDataProvider& in, bool& huge, hsize_t& points) {
  huge = false;
  points = 1;
  const int kind = in.ConsumeIntegralInRange<int>(0, 5);
  if (kind == 0) {
    points = 0;
    return H5Screate(H5S_NULL);
  }
  if (kind <= 2) return H5Screate(H5S_SCALAR);
  const int rank = kind - 2;  // 1..3
  hsize_t dims[3];
  for (int i = 0; i < rank; ++i) {
    dims[i] = odd_extent(in, huge);
    points *= dims[i];
  }
  return H5Screate_simple(rank, dims, nullptr);
}

// Writes an attribute or dataset `name` on `obj` of a type and shape the input picks; values are written
// only when there are few of them (a huge extent stays declared-only).
void write_object(FuzzedDataProvider& in, hid_t obj, const char* name, bool dataset) {
  bool huge = false;
  hsize_t points = 0;
  const hid_t space = make_space(in, huge, points);
  const int type_kind = in.ConsumeIntegralInRange<int>(0, 6);
  hid_t file_type = -1, mem_type = -1;
  bool owned_types = false;
  switch (type_kind) {
    case 0: file_type = H5T_IEEE_F64LE; mem_type = H5T_NATIVE_DOUBLE; break;
    case 1: file_type = H5T_IEEE_F32LE; mem_type = H5T_NATIVE_DOUBLE; break;
    case 2: file_type = H5T_STD_I32LE; mem_type = H5T_NATIVE_INT64; break;
    case 3: file_type = H5T_STD_I64BE; mem_type = H5T_NATIVE_INT64; break;
    case 4: file_type = H5T_STD_U64LE; mem_type = H5T_NATIVE_INT64; break;
    case 5: {  // fixed-length string
      file_type = H5Tcopy(H5T_C_S1);
      H5Tset_size(file_type, in.ConsumeIntegralInRange<std::size_t>(1, 40));
      mem_type = file_type;
      owned_types = true;
      break;
    }
    default: {  // variable-length string
      file_type = H5Tcopy(H5T_C_S1);
      H5Tset_size(file_type, H5T_VARIABLE);
      H5Tset_cset(file_type, in.ConsumeBool() ? H5T_CSET_UTF8 : H5T_CSET_ASCII);
      mem_type = file_type;
      owned_types = true;
    }
  }
  hid_t id = -1;
  if (dataset) {
    id = H5Dcreate2(obj, name, file_type, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  } else {
    id = H5Acreate2(obj, name, file_type, space, H5P_DEFAULT, H5P_DEFAULT);
  }
  if (id >= 0 && !huge && points > 0 && points <= 4096) {
    if (type_kind <= 1) {
      std::vector<double> v(points);
      for (auto& x : v) x = in.ConsumeBool() ? odd_double(in) : in.ConsumeFloatingPointInRange<double>(-10.0, 10.0);
      dataset ? H5Dwrite(id, mem_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, v.data()) : H5Awrite(id, mem_type, v.data());
    } else if (type_kind <= 4) {
      std::vector<std::int64_t> v(points);
      for (auto& x : v) x = odd_integer(in);
      dataset ? H5Dwrite(id, mem_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, v.data()) : H5Awrite(id, mem_type, v.data());
    } else if (type_kind == 5) {
      std::vector<char> v(points * H5Tget_size(file_type));
      for (auto& c : v) c = static_cast<char>(in.ConsumeIntegral<std::uint8_t>());
      dataset ? H5Dwrite(id, mem_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, v.data()) : H5Awrite(id, mem_type, v.data());
    } else {
      std::vector<std::string> text(points);
      std::vector<const char*> v(points);
      for (hsize_t i = 0; i < points; ++i) {
        text[i] = in.ConsumeRandomLengthString(64);
        v[i] = text[i].c_str();
      }
      dataset ? H5Dwrite(id, mem_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, v.data()) : H5Awrite(id, mem_type, v.data());
    }
  }
  if (id >= 0) dataset ? H5Dclose(id) : H5Aclose(id);
  if (owned_types) H5Tclose(file_type);
  H5Sclose(space);
}

void write_vlen_string_attr(hid_t obj, const char* name, const std::string& value) {
  if (H5Aexists(obj, name) > 0) H5Adelete(obj, name);
  const hid_t type = H5Tcopy(H5T_C_S1);
  H5Tset_size(type, H5T_VARIABLE);
  H5Tset_cset(type, H5T_CSET_UTF8);
  const hid_t space = H5Screate(H5S_SCALAR);
  const hid_t attr = H5Acreate2(obj, name, type, space, H5P_DEFAULT, H5P_DEFAULT);
  const char* p = value.c_str();
  if (attr >= 0) {
    H5Awrite(attr, type, &p);
    H5Aclose(attr);
  }
  H5Sclose(space);
  H5Tclose(type);
}

void write_int64_attr(hid_t obj, const char* name, std::int64_t value) {
  if (H5Aexists(obj, name) > 0) H5Adelete(obj, name);
  const hid_t space = H5Screate(H5S_SCALAR);
  const hid_t attr = H5Acreate2(obj, name, H5T_STD_I64LE, space, H5P_DEFAULT, H5P_DEFAULT);
  if (attr >= 0) {
    H5Awrite(attr, H5T_NATIVE_INT64, &value);
    H5Aclose(attr);
  }
  H5Sclose(space);
}

void mutate(FuzzedDataProvider& in, hid_t file) {
  const char* attr = kRootAttributes[in.ConsumeIntegralInRange<std::size_t>(0, std::size(kRootAttributes) - 1)];
  const char* set = kDatasets[in.ConsumeIntegralInRange<std::size_t>(0, std::size(kDatasets) - 1)];
  switch (in.ConsumeIntegralInRange<int>(0, 9)) {
    case 0:  // drop an attribute
      if (H5Aexists(file, attr) > 0) H5Adelete(file, attr);
      break;
    case 1:  // retype / reshape an attribute
      if (H5Aexists(file, attr) > 0) H5Adelete(file, attr);
      write_object(in, file, attr, false);
      break;
    case 2:  // an integer attribute with an odd value (num_atoms, format_version, step ...)
      write_int64_attr(file, attr, odd_integer(in));
      break;
    case 3:  // a string attribute with other text (format, system_hash, physics_settings ...)
      write_vlen_string_attr(file, attr, in.ConsumeRandomLengthString(80));
      break;
    case 4:  // drop a dataset
      if (H5Lexists(file, set, H5P_DEFAULT) > 0) H5Ldelete(file, set, H5P_DEFAULT);
      break;
    case 5:  // retype / reshape a dataset
      if (H5Lexists(file, set, H5P_DEFAULT) > 0) H5Ldelete(file, set, H5P_DEFAULT);
      write_object(in, file, set, true);
      break;
    case 6: {  // a group where a dataset belongs
      if (H5Lexists(file, set, H5P_DEFAULT) > 0) H5Ldelete(file, set, H5P_DEFAULT);
      const hid_t g = H5Gcreate2(file, set, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
      if (g >= 0) H5Gclose(g);
      break;
    }
    case 7: {  // an odd value into one element of an existing dataset
      if (H5Lexists(file, set, H5P_DEFAULT) <= 0) break;
      const hid_t d = H5Dopen2(file, set, H5P_DEFAULT);
      if (d < 0) break;
      const hid_t space = H5Dget_space(d);
      const hssize_t n = H5Sget_simple_extent_npoints(space);
      if (n > 0 && n <= 4096) {
        std::vector<double> v(static_cast<std::size_t>(n));
        if (H5Dread(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, v.data()) >= 0) {
          v[in.ConsumeIntegralInRange<std::size_t>(0, v.size() - 1)] = odd_double(in);
          H5Dwrite(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, v.data());
        }
      }
      H5Sclose(space);
      H5Dclose(d);
      break;
    }
    case 8:  // another format version
      write_int64_attr(file, "format_version", in.ConsumeIntegralInRange<int>(-2, 3));
      break;
    default:  // an attribute on a dataset, or a root attribute of another name (ignored by the reader)
      write_object(in, file, in.ConsumeBool() ? "unexpected" : attr, false);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const std::string path = scratch_path();
  FuzzedDataProvider in(data, size);

  // 1. A valid checkpoint, written by the project's writer.
  const int n = in.ConsumeIntegralInRange<int>(0, 5);
  std::vector<double> mass(static_cast<std::size_t>(n)), charge(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) {
    mass[static_cast<std::size_t>(i)] = 1.0 + i;
    charge[static_cast<std::size_t>(i)] = 0.1 * i;
  }
  mdsim::Checkpoint c;
  c.fingerprint = mdsim::system_fingerprint(mass, charge);
  c.step = in.ConsumeIntegral<std::int64_t>();
  c.time_ps = in.ConsumeFloatingPointInRange<double>(-1e6, 1e6);
  c.seed = in.ConsumeIntegral<std::uint64_t>();
  c.rng_counter = in.ConsumeIntegral<std::uint64_t>();
  c.config_hash = in.ConsumeRandomLengthString(20);
  for (int i = in.ConsumeIntegralInRange<int>(0, 3); i > 0; --i)
    c.physics.emplace_back(in.ConsumeRandomLengthString(12), in.ConsumeRandomLengthString(12));
  for (int i = 0; i < n; ++i) {
    c.positions_nm.emplace_back(in.ConsumeFloatingPointInRange<double>(-10, 10), i, 0.5);
    c.velocities_nm_per_ps.emplace_back(in.ConsumeFloatingPointInRange<double>(-10, 10), 0, -1);
  }
  if (in.ConsumeBool()) c.box = mdsim::Boxd{{3, 0, 0}, {in.ConsumeFloatingPointInRange<double>(-1, 1), 3, 0}, {0, 0, 3}};
  for (int i = in.ConsumeIntegralInRange<int>(0, 3); i > 0; --i) c.barostat_state.push_back(i);
  try {
    mdsim::write_checkpoint(path, c);
  } catch (const mdsim::InputError&) {
    return 0;  // a physics key or value the writer refuses (e.g. with a newline): not this target's subject
  } catch (const mdsim::RuntimeError&) {
    return 0;
  }

  // 2. Mutations through the HDF5 C API.
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  const hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
  if (file < 0) std::abort();  // the writer's own file must open
  for (int k = in.ConsumeIntegralInRange<int>(0, 6); k > 0 && in.remaining_bytes() > 0; --k) mutate(in, file);
  H5Fclose(file);

  // 3. Read it back as --resume does.
  mdsim::SystemFingerprint expected = c.fingerprint;
  if (in.ConsumeIntegralInRange<int>(0, 7) == 0) expected.num_atoms = static_cast<int>(odd_integer(in));
  mdsim::Checkpoint r;
  try {
    r = mdsim::read_checkpoint(path, expected);
  } catch (const mdsim::InputError&) {
    return 0;
  }
  const auto n_read = static_cast<std::size_t>(expected.num_atoms);
  if (!(r.fingerprint == expected) || r.positions_nm.size() != n_read || r.velocities_nm_per_ps.size() != n_read)
    std::abort();
  for (const auto* v : {&r.positions_nm, &r.velocities_nm_per_ps})
    for (const auto& x : *v)
      if (!std::isfinite(x.x) || !std::isfinite(x.y) || !std::isfinite(x.z)) std::abort();
  for (double x : r.barostat_state)
    if (!std::isfinite(x)) std::abort();
  if (!std::isfinite(r.time_ps)) std::abort();
  if (r.box && !(r.box->a.x > 0 && r.box->b.y > 0 && r.box->c.z > 0)) std::abort();
  return 0;
}
