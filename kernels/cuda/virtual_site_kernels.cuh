// Virtual sites on the device (physics/virtual_sites.hpp): placing them from their parents' positions before an
// evaluation, and spreading the force on each site onto its parents after all force kernels. One thread per site,
// kSiteThreads a block (a water box's few thousand sites spread over the SMs: each thread is a chain of dependent
// loads). Parents are never sites (platform/virtual_sites: check_virtual_sites), so a kernel's reads and writes
// never meet.
#pragma once

#include <cuda_runtime.h>

#include "kernels/cuda/device_atoms.cuh"
#include "kernels/cuda/fixed_point.cuh"
#include "physics/virtual_sites.hpp"

namespace mdsim::cuda {

constexpr int kSiteThreads = 64;

struct DeviceVirtualSite {
  int particle;
  int parents[3];  // the third unused by a TwoParticleAverage site
  VirtualSiteParams<double> params;
};

__device__ __forceinline__ void load_parents(const DeviceVirtualSite& s, const double4_16a* pos, Vec3d* r) {
  for (int k = 0; k < 3; ++k) r[k] = k < s.params.num_parents ? load_position(pos, s.parents[k]) : Vec3d(0, 0, 0);
}

// Each site's position from its parents' stored coordinates (no imaging, as OpenMM), in place.
__global__ void place_virtual_sites_kernel(int count, const DeviceVirtualSite* __restrict__ sites,
                                           double4_16a* __restrict__ pos) {
  const int k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k >= count) return;
  const DeviceVirtualSite s = sites[k];
  Vec3d r[3];
  load_parents(s, pos, r);
  store_position(pos, s.particle, virtual_site_position(s.params, r));
}

// Adds each site's force (its fixed-point row, kept: getState's convention) onto its parents' rows. Integer
// atomics: the sums do not depend on the order of the adds (bit-for-bit reproducible).
__global__ void spread_virtual_site_forces_kernel(int count, const DeviceVirtualSite* __restrict__ sites,
                                                  const double4_16a* __restrict__ pos,
                                                  unsigned long long* __restrict__ force, int stride) {
  const int k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k >= count) return;
  const DeviceVirtualSite s = sites[k];
  Vec3d r[3] = {Vec3d(0, 0, 0), Vec3d(0, 0, 0), Vec3d(0, 0, 0)}, share[3];
  // An average's shares are its weights times the force: no positions needed.
  const bool average =
      s.params.geometry == SiteGeometry::TwoParticleAverage || s.params.geometry == SiteGeometry::ThreeParticleAverage;
  if (!average) load_parents(s, pos, r);
  spread_virtual_site_force(s.params, r, load_force(force, stride, s.particle), share);
  for (int p = 0; p < s.params.num_parents; ++p) {
    const int i = s.parents[p];
    atomicAdd(&force[i], to_fixed(share[p].x));
    atomicAdd(&force[stride + i], to_fixed(share[p].y));
    atomicAdd(&force[2 * stride + i], to_fixed(share[p].z));
  }
}

// Zeroes the sites' rows of an N x 3 double array (a minimiser's gradient: a site is no coordinate of its own).
__global__ void zero_virtual_site_rows_kernel(int count, const DeviceVirtualSite* __restrict__ sites,
                                              Vec3d* __restrict__ rows) {
  const int k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k >= count) return;
  rows[sites[k].particle] = Vec3d(0, 0, 0);
}

}  // namespace mdsim::cuda
