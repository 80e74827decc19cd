#include "io/h5_util.hpp"

#include <cstring>

#include <fmt/format.h>

#include "common/errors.hpp"

namespace mdsim {

void set_vlen_string_attr(hid_t obj, const char* name, const std::string& value) {
  H5Id type(H5Tcopy(H5T_C_S1), H5Tclose);
  H5Tset_size(type.id, H5T_VARIABLE);
  H5Tset_cset(type.id, H5T_CSET_UTF8);
  H5Id space(H5Screate(H5S_SCALAR), H5Sclose);
  if (H5Aexists(obj, name) > 0) H5Adelete(obj, name);
  H5Id attr(H5Acreate2(obj, name, type.id, space.id, H5P_DEFAULT, H5P_DEFAULT), H5Aclose);
  const char* p = value.c_str();
  if (!attr.ok() || H5Awrite(attr.id, type.id, &p) < 0)
    throw RuntimeError(fmt::format("cannot write attribute {}", name));
}

// One string (a scalar, or one element): H5Aread writes every element, so an array of strings would
// overflow the single pointer or buffer read into.
std::optional<std::string> read_string_attr(hid_t obj, const char* name) {
  if (H5Aexists(obj, name) <= 0) return std::nullopt;
  H5Id attr(H5Aopen(obj, name, H5P_DEFAULT), H5Aclose);
  H5Id type(H5Aget_type(attr.id), H5Tclose);
  H5Id space(H5Aget_space(attr.id), H5Sclose);
  if (!attr.ok() || H5Tget_class(type.id) != H5T_STRING || H5Sget_simple_extent_npoints(space.id) != 1)
    return std::nullopt;
  if (H5Tis_variable_str(type.id) > 0) {
    H5Id mem(H5Tcopy(H5T_C_S1), H5Tclose);
    H5Tset_size(mem.id, H5T_VARIABLE);
    H5Tset_cset(mem.id, H5Tget_cset(type.id));
    char* p = nullptr;
    if (H5Aread(attr.id, mem.id, &p) < 0 || !p) return std::nullopt;
    std::string s(p);
    H5free_memory(p);
    return s;
  }
  std::string s(H5Tget_size(type.id), '\0');
  if (H5Aread(attr.id, type.id, s.data()) < 0) return std::nullopt;
  s.resize(std::strlen(s.c_str()));
  return s;
}

}  // namespace mdsim
