// HDF5 helpers shared by io/'s writers and readers (trajectory, checkpoint, plain arrays): an
// identifier closed on scope exit by the matching H5?close function, and string attributes.
//   H5Id file(H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose);
//   if (!file.ok()) ...
#pragma once

#include <hdf5.h>

#include <optional>
#include <string>

namespace mdsim {

struct H5Id {
  hid_t id = -1;
  herr_t (*closer)(hid_t) = nullptr;
  H5Id(hid_t i, herr_t (*c)(hid_t)) : id(i), closer(c) {}
  H5Id(const H5Id&) = delete;
  H5Id& operator=(const H5Id&) = delete;
  H5Id(H5Id&& o) noexcept : id(o.id), closer(o.closer) { o.id = -1; }
  ~H5Id() {
    if (id >= 0 && closer) closer(id);
  }
  bool ok() const { return id >= 0; }
};

// A scalar variable-length UTF-8 string attribute `name` on `obj`, replacing one of that name.
// Throws RuntimeError when HDF5 refuses.
void set_vlen_string_attr(hid_t obj, const char* name, const std::string& value);

// A string attribute (variable or fixed length; one element) of `obj`, nullopt when absent or of another kind.
std::optional<std::string> read_string_attr(hid_t obj, const char* name);

}  // namespace mdsim
