// Periodic box in OpenMM's reduced triclinic form (rows a, b, c; nm):
//   a = (ax, 0, 0), b = (bx, by, 0), c = (cx, cy, cz), with ax > 0, by > 0, cz > 0,
//   |bx| <= ax/2, |cx| <= ax/2, |cy| <= by/2.
// Minimum-image displacement for that form, usable from host and device code.
#pragma once

#include "physics/vec3.hpp"

namespace mdsim {

template <typename T>
struct BoxVectors {
  Vec3<T> a, b, c;  // nm

  MDSIM_HD T volume() const { return a.x * b.y * c.z; }
  // The smallest of the box's heights (the distances between opposite faces: a.x, b.y, c.z in this form); a cutoff
  // must stay within half of it.
  MDSIM_HD T smallest_height() const {
    const T ab = a.x < b.y ? a.x : b.y;
    return ab < c.z ? ab : c.z;
  }
  MDSIM_HD bool triclinic() const { return b.x != T(0) || c.x != T(0) || c.y != T(0); }

  // Displacement d wrapped to its minimum image (exact for the reduced form when the
  // cutoff is at most half the smallest box height, which callers check).
  MDSIM_HD Vec3<T> minimum_image(Vec3<T> d) const {
    T s = floor(d.z / c.z + T(0.5));
    d -= c * s;
    s = floor(d.y / b.y + T(0.5));
    d -= b * s;
    s = floor(d.x / a.x + T(0.5));
    d -= a * s;
    return d;
  }
};

using Boxd = BoxVectors<double>;

// Reciprocal box vectors (rows) of a reduced triclinic box: recip[i] . box_j = delta_ij when
// read as columns, i.e. the fractional coordinate along axis d of x is sum_k x_k recip[k][d].
template <typename T>
MDSIM_HD void reciprocal_box_vectors(const BoxVectors<T>& box, Vec3<T> recip[3]) {
  const T ax = box.a.x, bx = box.b.x, by = box.b.y, cx = box.c.x, cy = box.c.y, cz = box.c.z;
  const T inv_det = T(1) / (ax * by * cz);
  recip[0] = Vec3<T>(by * cz, T(0), T(0)) * inv_det;
  recip[1] = Vec3<T>(-bx * cz, ax * cz, T(0)) * inv_det;
  recip[2] = Vec3<T>(bx * cy - by * cx, -ax * cy, ax * by) * inv_det;
}

}  // namespace mdsim
