// Virtual sites, written once for host and device (MDSIM_HD), templated on the real type T: the site's position
// from its parents' positions, and the spreading of the force on the site onto its parents by the chain rule of
// that position function (F_parent = (d r_site / d r_parent)^T F_site), so that energy is conserved.
// Geometries as OpenMM's TwoParticleAverageSite, ThreeParticleAverageSite, OutOfPlaneSite and LocalCoordinatesSite
// (three parents). Positions are the parents' stored coordinates, no periodic imaging (as OpenMM). Units: nm,
// forces kJ/mol/nm.
#pragma once

#include "physics/math.hpp"
#include "physics/vec3.hpp"

namespace mdsim {

enum class SiteGeometry : int { TwoParticleAverage = 0, ThreeParticleAverage = 1, OutOfPlane = 2, LocalCoordinates = 3 };

template <typename T>
struct VirtualSiteParams {
  SiteGeometry geometry;
  int num_parents;  // 2 for TwoParticleAverage, else 3
  // Averages: r = sum w[i] r_i. OutOfPlane: w = {w12, w13, wcross}, r = r1 + w12 r12 + w13 r13 + wcross r12 x r13.
  T w[3];
  // LocalCoordinates: origin = sum wo r_i, X = sum wx r_i, Y = sum wy r_i; z = X x Y, x = X/|X|, z = z/|z|,
  // y = z x x; r = origin + local.x x + local.y y + local.z z.
  T wo[3], wx[3], wy[3];
  Vec3<T> local_nm;
};

namespace vsite_detail {

// The local frame of a LocalCoordinates site: unnormalised X, Y, Z = X x Y and the unit axes.
template <typename T>
struct LocalFrame {
  Vec3<T> origin, big_x, big_y, big_z, x, y, z;
};

template <typename T>
MDSIM_HD LocalFrame<T> local_frame(const VirtualSiteParams<T>& p, const Vec3<T>* r) {
  LocalFrame<T> f;
  f.origin = r[0] * p.wo[0] + r[1] * p.wo[1] + r[2] * p.wo[2];
  f.big_x = r[0] * p.wx[0] + r[1] * p.wx[1] + r[2] * p.wx[2];
  f.big_y = r[0] * p.wy[0] + r[1] * p.wy[1] + r[2] * p.wy[2];
  f.big_z = cross(f.big_x, f.big_y);
  f.x = f.big_x / pmath::sqrt_(dot(f.big_x, f.big_x));
  f.z = f.big_z / pmath::sqrt_(dot(f.big_z, f.big_z));
  f.y = cross(f.z, f.x);
  return f;
}

// Gradient of phi with respect to V when phi depends on V only through u = V/|V| (g = d phi / d u).
template <typename T>
MDSIM_HD Vec3<T> through_normalisation(const Vec3<T>& g, const Vec3<T>& u, const Vec3<T>& big_v) {
  return (g - u * dot(g, u)) / pmath::sqrt_(dot(big_v, big_v));
}

}  // namespace vsite_detail

// An average site's position (TwoParticleAverage: two parents, ThreeParticleAverage: three): sum w[i] r[i]. Parent
// i's share of the force f on such a site is w[i] f.
template <typename T>
MDSIM_HD Vec3<T> average_site_position(const T* w, const Vec3<T>* r, int num_parents) {
  return num_parents == 2 ? r[0] * w[0] + r[1] * w[1] : r[0] * w[0] + r[1] * w[1] + r[2] * w[2];
}

// The site's position from its parents' positions r[0 .. num_parents).
template <typename T>
MDSIM_HD Vec3<T> virtual_site_position(const VirtualSiteParams<T>& p, const Vec3<T>* r) {
  switch (p.geometry) {
    case SiteGeometry::TwoParticleAverage: return average_site_position(p.w, r, 2);
    case SiteGeometry::ThreeParticleAverage: return average_site_position(p.w, r, 3);
    case SiteGeometry::OutOfPlane: {
      const Vec3<T> r12 = r[1] - r[0], r13 = r[2] - r[0];
      return r[0] + r12 * p.w[0] + r13 * p.w[1] + cross(r12, r13) * p.w[2];
    }
    case SiteGeometry::LocalCoordinates:
    default: {
      const vsite_detail::LocalFrame<T> f = vsite_detail::local_frame(p, r);
      return f.origin + f.x * p.local_nm.x + f.y * p.local_nm.y + f.z * p.local_nm.z;
    }
  }
}

// The force on each parent (out[0 .. num_parents)) from the force f on the site: (d r_site / d r_i)^T f.
template <typename T>
MDSIM_HD void spread_virtual_site_force(const VirtualSiteParams<T>& p, const Vec3<T>* r, const Vec3<T>& f,
                                        Vec3<T>* out) {
  switch (p.geometry) {
    case SiteGeometry::TwoParticleAverage:
      out[0] = f * p.w[0];
      out[1] = f * p.w[1];
      return;
    case SiteGeometry::ThreeParticleAverage:
      out[0] = f * p.w[0];
      out[1] = f * p.w[1];
      out[2] = f * p.w[2];
      return;
    case SiteGeometry::OutOfPlane: {
      // d/dr12 of f.(wc r12 x r13) = wc r13 x f; d/dr13 = wc f x r12.
      const Vec3<T> r12 = r[1] - r[0], r13 = r[2] - r[0];
      out[1] = f * p.w[0] + cross(r13, f) * p.w[2];
      out[2] = f * p.w[1] + cross(f, r12) * p.w[2];
      out[0] = f - out[1] - out[2];
      return;
    }
    case SiteGeometry::LocalCoordinates:
    default: {
      // phi = f . r_site. Through the unit axes (y = z x x): d phi/dx = lx f + ly f x z, d phi/dz = lz f + ly x x f;
      // then through the normalisations, and Z = X x Y: d phi/dX += Y x g_Z, d phi/dY = g_Z x X.
      const vsite_detail::LocalFrame<T> fr = vsite_detail::local_frame(p, r);
      const Vec3<T> g_x = f * p.local_nm.x + cross(f, fr.z) * p.local_nm.y;
      const Vec3<T> g_z = f * p.local_nm.z + cross(fr.x, f) * p.local_nm.y;
      const Vec3<T> g_big_z = vsite_detail::through_normalisation(g_z, fr.z, fr.big_z);
      const Vec3<T> g_big_x = vsite_detail::through_normalisation(g_x, fr.x, fr.big_x) + cross(fr.big_y, g_big_z);
      const Vec3<T> g_big_y = cross(g_big_z, fr.big_x);
      for (int i = 0; i < 3; ++i) out[i] = f * p.wo[i] + g_big_x * p.wx[i] + g_big_y * p.wy[i];
      return;
    }
  }
}

}  // namespace mdsim
