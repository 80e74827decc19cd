// Small 3-vector used by host and device code alike. Pure value type, no allocation.
#pragma once

#if defined(__CUDACC__)
#define MDSIM_HD __host__ __device__ __forceinline__
#else
#define MDSIM_HD inline
#endif

#include <cmath>

namespace mdsim {

template <typename T>
struct Vec3 {
  T x{}, y{}, z{};

  Vec3() = default;  // defaulted: host and device alike
  MDSIM_HD Vec3(T x_, T y_, T z_) : x(x_), y(y_), z(z_) {}
  template <typename U>
  MDSIM_HD explicit Vec3(const Vec3<U>& o) : x(T(o.x)), y(T(o.y)), z(T(o.z)) {}

  MDSIM_HD T& operator[](int i) { return i == 0 ? x : (i == 1 ? y : z); }
  MDSIM_HD const T& operator[](int i) const { return i == 0 ? x : (i == 1 ? y : z); }

  MDSIM_HD Vec3 operator+(const Vec3& o) const { return {x + o.x, y + o.y, z + o.z}; }
  MDSIM_HD Vec3 operator-(const Vec3& o) const { return {x - o.x, y - o.y, z - o.z}; }
  MDSIM_HD Vec3 operator-() const { return {-x, -y, -z}; }
  MDSIM_HD Vec3 operator*(T s) const { return {x * s, y * s, z * s}; }
  MDSIM_HD Vec3 operator/(T s) const { return {x / s, y / s, z / s}; }
  MDSIM_HD Vec3& operator+=(const Vec3& o) { x += o.x; y += o.y; z += o.z; return *this; }
  MDSIM_HD Vec3& operator-=(const Vec3& o) { x -= o.x; y -= o.y; z -= o.z; return *this; }
  MDSIM_HD Vec3& operator*=(T s) { x *= s; y *= s; z *= s; return *this; }
};

template <typename T>
MDSIM_HD Vec3<T> operator*(T s, const Vec3<T>& v) { return v * s; }
template <typename T>
MDSIM_HD T dot(const Vec3<T>& a, const Vec3<T>& b) { return a.x * b.x + a.y * b.y + a.z * b.z; }
template <typename T>
MDSIM_HD Vec3<T> cross(const Vec3<T>& a, const Vec3<T>& b) {
  return {a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x};
}
template <typename T>
MDSIM_HD T norm2(const Vec3<T>& a) { return dot(a, a); }
template <typename T>
MDSIM_HD T norm(const Vec3<T>& a) { return sqrt(dot(a, a)); }

using Vec3d = Vec3<double>;
using Vec3f = Vec3<float>;

}  // namespace mdsim
