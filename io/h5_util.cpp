#include "io/h5_util.hpp"

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

}  // namespace mdsim
