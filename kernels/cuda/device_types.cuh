// Precision-generic vector types for CUDA kernels: real = float ("mixed" precision) or double.
#pragma once

#include <cuda_runtime.h>

#include <type_traits>

#include "physics/pbc.hpp"
#include "physics/vec3.hpp"

namespace mdsim::cuda {

template <typename real>
struct VecTypes;

template <>
struct VecTypes<float> {
  using real2 = float2;
  using real4 = float4;
  static __host__ __device__ __forceinline__ float4 make4(float x, float y, float z, float w) {
    return make_float4(x, y, z, w);
  }
  static __host__ __device__ __forceinline__ float2 make2(float x, float y) { return make_float2(x, y); }
};

template <>
struct VecTypes<double> {
  using real2 = double2;
  using real4 = double4_16a;
  static __host__ __device__ __forceinline__ double4_16a make4(double x, double y, double z, double w) {
    return make_double4_16a(x, y, z, w);
  }
  static __host__ __device__ __forceinline__ double2 make2(double x, double y) { return make_double2(x, y); }
};

template <typename real>
using real4_t = typename VecTypes<real>::real4;
template <typename real>
using real2_t = typename VecTypes<real>::real2;

template <typename V>
__host__ __device__ __forceinline__ auto xyz(const V& v) -> Vec3<decltype(v.x)> {
  return {v.x, v.y, v.z};
}

template <typename real>
BoxVectors<real> box_as(const BoxVectors<double>& b) {
  return {Vec3<real>(b.a), Vec3<real>(b.b), Vec3<real>(b.c)};
}

}  // namespace mdsim::cuda
