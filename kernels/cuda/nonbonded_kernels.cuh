// Nonbonded kernels (included by cuda_forces.cu only): the tile kernel for the pair sum, and the
// exceptions kernel (scaled 1-4 pairs and Ewald exclusion corrections). The pair physics comes from
// physics/nonbonded.hpp, the same functions the CPU reference platform calls.
#pragma once

#include "kernels/cuda/bonded_kernels.cuh"
#include "kernels/cuda/device_types.cuh"
#include "kernels/cuda/fixed_point.cuh"
#include "kernels/cuda/replica_energy.cuh"
#include "kernels/cuda/neighbor_list.cuh"
#include "physics/nonbonded.hpp"

namespace mdsim::cuda {

// The tile kernel's constants: the pair step's (physics/nonbonded.hpp) plus what the tile
// geometry needs.
template <typename real>
struct TilePairParams {
  PairConstants<real> pair;  // cutoff, switch distance, alpha, reaction field
  real cutoff2;              // nm^2 (infinite for no cutoff)
  real image_limit;          // periodic: a tile whose block-I box half-diagonal h has 2h < image_limit is imaged
                             // once per atom, not per pair (half the smallest box height − cutoff − buffer)
};

// Loads from a shared-memory address held as a 32-bit window offset (see the tile kernel: the compiler
// otherwise recomputes the warp's shared-memory base from the thread index at every step).
__device__ __forceinline__ float4 load_shared(unsigned int address, const float4*) {
  float4 v;
  asm volatile("ld.shared.v4.f32 {%0, %1, %2, %3}, [%4];" : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w) : "r"(address) : "memory");
  return v;
}
__device__ __forceinline__ float2 load_shared(unsigned int address, const float2*) {
  float2 v;
  asm volatile("ld.shared.v2.f32 {%0, %1}, [%2];" : "=f"(v.x), "=f"(v.y) : "r"(address) : "memory");
  return v;
}
__device__ __forceinline__ double4_16a load_shared(unsigned int address, const double4_16a*) {
  double4_16a v;
  asm volatile("ld.shared.v2.f64 {%0, %1}, [%2];" : "=d"(v.x), "=d"(v.y) : "r"(address) : "memory");
  asm volatile("ld.shared.v2.f64 {%0, %1}, [%2 + 16];" : "=d"(v.z), "=d"(v.w) : "r"(address) : "memory");
  return v;
}
__device__ __forceinline__ double2 load_shared(unsigned int address, const double2*) {
  double2 v;
  asm volatile("ld.shared.v2.f64 {%0, %1}, [%2];" : "=d"(v.x), "=d"(v.y) : "r"(address) : "memory");
  return v;
}

// With a LJ type table (System::lj_types) the per-atom parameters hold, instead of (sigma/2, 2 sqrt(epsilon)), the
// bits of two ints: .x the atom's type t, .y its row offset t * num_types in the table of (c12, c6) entries; a
// pair's entry is table[row_i + t_j]. Bits, not values: no conversion in the pair step.
__device__ __forceinline__ int lj_type_bits(float v) { return __float_as_int(v); }
__device__ __forceinline__ int lj_type_bits(double v) { return static_cast<int>(__double_as_longlong(v)); }

// How a tile's pairs are imaged: not at all (a compact tile imaged once), or each pair by the minimum image, in
// BoxVectors' general form or in a rectangular box's (the same displacements, 6 fewer instructions a pair step).
enum class PairImage { None, General, Rectangular };

// The 32 pair steps of one tile (nonbonded_tile_kernel). Step k: this lane's atom i against the slot
// (lane + k) mod 32, read from the warp's doubled slot arrays at [lane + k] (no wrap-around
// arithmetic), while the slot forces fj rotate one lane down; fi and fj accumulate the forces on i and
// on the slot this lane holds. IMAGE: whether each pair takes the minimum image, and in which form
// (compile-time, so the step has no branch for it). A masked pair's distance is formed like any other's
// and its mask bit tested with the cutoff (one branch per step for both). MASKED: whether the tile has masks at
// all (an exclusion tile); a packed tile has none (its empty slots and padding atoms sit at NaN, whose pairs fail
// the cutoff test), so its steps test the cutoff alone.
// `steps` (a multiple of 4) steps are taken from the addresses and mask bit given: all 32, or the last
// 16 of a diagonal tile (see nonbonded_tile_kernel).
// TABLE: LJ from the type table lj_table (see lj_type_bits), a separate instantiation so that the path without a
// table is unchanged.
template <PairImage IMAGE, bool MASKED, typename real, CoulombMethod C, bool SWITCH, bool ENERGY, bool TABLE>
__device__ __forceinline__ void tile_steps(int steps, unsigned int pending, unsigned int pos_address,
                                           unsigned int par_address, const real4_t<real>& pi, const real2_t<real>& si,
                                           const SearchBox<real>& image_box, const TilePairParams<real>& params,
                                           const real2_t<real>* __restrict__ lj_table, Vec3<real>& fi, Vec3<real>& fj,
                                           double& tile_energy) {
  const int lane = threadIdx.x & 31;
  const int src = (lane + 1) & 31;  // shuffle source
#pragma unroll 1
  for (int k4 = 0; k4 < steps; k4 += 4) {
#pragma unroll
    for (int u = 0; u < 4; ++u) {
      const int k = k4 + u;
      const real4_t<real> pk =
          load_shared(pos_address + k * sizeof(real4_t<real>), static_cast<const real4_t<real>*>(nullptr));
      const real2_t<real> sk =
          load_shared(par_address + k * sizeof(real2_t<real>), static_cast<const real2_t<real>*>(nullptr));
      Vec3<real> d(pk.x - pi.x, pk.y - pi.y, pk.z - pi.z);
      if (IMAGE == PairImage::General) d = image_box.minimum_image(d);
      if (IMAGE == PairImage::Rectangular) d = image_box.minimum_image_rectangular(d);
      const real r2 = dot(d, d);
      if ((!MASKED || (pending & 1u) != 0u) && r2 < params.cutoff2) {
        const real inv_r = rsqrt(r2);
        // sorted_params hold the pair step's encoding (sigma/2, 2 sqrt(epsilon)); zero terms are not
        // skipped (a warp would diverge).
        // pi.w holds K q_i (Coulomb's constant folded in once per tile), so pi.w * pk.w is K q_i q_j.
        PairResult<real> pr;
        if constexpr (TABLE) {
          const real2_t<real> c = __ldg(&lj_table[lj_type_bits(si.y) + lj_type_bits(sk.x)]);  // (c12, c6)
          pr = nonbonded_pair_lj<real, C, SWITCH, false, true>(r2, inv_r, pi.w * pk.w, LjC12C6<real>{c.x, c.y},
                                                               params.pair);
        } else {
          pr = nonbonded_pair<real, C, SWITCH, false, true>(r2, inv_r, pi.w * pk.w, si.x + sk.x, si.y * sk.y,
                                                            params.pair);
        }
        // The slot's force +d f/r and i's -d f/r, each one fused multiply-add per axis.
        fj.x = fma(d.x, pr.f_over_r, fj.x), fj.y = fma(d.y, pr.f_over_r, fj.y), fj.z = fma(d.z, pr.f_over_r, fj.z);
        fi.x = fma(-d.x, pr.f_over_r, fi.x), fi.y = fma(-d.y, pr.f_over_r, fi.y), fi.z = fma(-d.z, pr.f_over_r, fi.z);
        if (ENERGY) tile_energy += double(pr.energy);
      }
      if (MASKED) pending >>= 1;  // bit 0: the next step's pair (a shift per step is cheaper than testing bit k)
      // Pass the slot force one lane down: lane l now gets what lane l+1 held.
      fj.x = __shfl_sync(0xffffffffu, fj.x, src);
      fj.y = __shfl_sync(0xffffffffu, fj.y, src);
      fj.z = __shfl_sync(0xffffffffu, fj.z, src);
    }
  }
}

// The tile's steps in the instantiation its imaging and masks call for: each pair imaged (per_pair_image) in a
// rectangular box's form or the general one (which takes the masked steps whether or not the tile has masks), or
// the atoms imaged once already (image_once). `rectangular` is image_box.rectangular, read by the caller: taken
// from the reference here, the compiler evaluated the box's triclinic test again for every tile.
template <typename real, CoulombMethod C, bool SWITCH, bool ENERGY, bool TABLE>
__device__ __forceinline__ void run_tile_steps(bool per_pair_image, bool rectangular, bool masked, int steps,
                                               unsigned int pending, unsigned int pos_address, unsigned int par_address,
                                               const real4_t<real>& pi, const real2_t<real>& si,
                                               const SearchBox<real>& image_box, const TilePairParams<real>& params,
                                               const real2_t<real>* __restrict__ lj_table, Vec3<real>& fi,
                                               Vec3<real>& fj, double& tile_energy) {
  if (per_pair_image && rectangular && masked) {
    tile_steps<PairImage::Rectangular, true, real, C, SWITCH, ENERGY, TABLE>(
        steps, pending, pos_address, par_address, pi, si, image_box, params, lj_table, fi, fj, tile_energy);
  } else if (per_pair_image && rectangular) {
    tile_steps<PairImage::Rectangular, false, real, C, SWITCH, ENERGY, TABLE>(
        steps, pending, pos_address, par_address, pi, si, image_box, params, lj_table, fi, fj, tile_energy);
  } else if (per_pair_image) {
    tile_steps<PairImage::General, true, real, C, SWITCH, ENERGY, TABLE>(
        steps, pending, pos_address, par_address, pi, si, image_box, params, lj_table, fi, fj, tile_energy);
  } else if (masked) {
    tile_steps<PairImage::None, true, real, C, SWITCH, ENERGY, TABLE>(
        steps, pending, pos_address, par_address, pi, si, image_box, params, lj_table, fi, fj, tile_energy);
  } else {
    tile_steps<PairImage::None, false, real, C, SWITCH, ENERGY, TABLE>(
        steps, pending, pos_address, par_address, pi, si, image_box, params, lj_table, fi, fj, tile_energy);
  }
}

// A compact tile (I, its slots) in a large enough box: this lane's atom i and slot atom put in the image nearest
// block I's centre once (then no pair needs the minimum-image convention: its true image is the one found). Returns
// whether it did; if not, each pair is imaged.
template <typename real>
__device__ __forceinline__ bool image_once(int I, real4_t<real>& pi, real4_t<real>& pj,
                                           const real4_t<real>* __restrict__ block_center,
                                           const real4_t<real>* __restrict__ block_half, const SearchBox<real>& box,
                                           const TilePairParams<real>& params) {
  const real4_t<real> h = block_half[I];
  if (real(2) * sqrt(h.x * h.x + h.y * h.y + h.z * h.z) < params.image_limit) {
    const real4_t<real> c = block_center[I];
    const Vec3<real> ci(c.x, c.y, c.z);
    const Vec3<real> xi = ci + box.minimum_image(Vec3<real>(pi.x, pi.y, pi.z) - ci);
    const Vec3<real> xj = ci + box.minimum_image(Vec3<real>(pj.x, pj.y, pj.z) - ci);
    pi.x = xi.x, pi.y = xi.y, pi.z = xi.z;
    pj.x = xj.x, pj.y = xj.y, pj.z = xj.z;
    return true;
  }
  return false;
}

// A tile's forces on atom i (original index oi, -1 for padding) and on this lane's slot atom j_own (-1: none) to
// their original atoms (perm: -1 for a padding slot), as 64-bit fixed point.
template <typename real>
__device__ __forceinline__ void add_tile_forces(int oi, int j_own, const int* __restrict__ perm, int stride,
                                                unsigned long long* __restrict__ force, const Vec3<real>& fi,
                                                const Vec3<real>& fj) {
  if (oi >= 0) {
    atomic_add_fixed(&force[oi], fi.x);
    atomic_add_fixed(&force[stride + oi], fi.y);
    atomic_add_fixed(&force[2 * stride + oi], fi.z);
  }
  const int oj = j_own >= 0 ? perm[j_own] : -1;
  if (oj >= 0) {
    atomic_add_fixed(&force[oj], fj.x);
    atomic_add_fixed(&force[stride + oj], fj.y);
    atomic_add_fixed(&force[2 * stride + oj], fj.z);
  }
}

// One warp per tile. Lane l owns atom i = I*32 + l and slot l. The slot atoms' positions and
// parameters go to the warp's shared memory; at step k lane l reads slot (l + k) mod 32 there, while
// the force on that slot rotates round the warp by shuffles (tile_steps), so after 32 steps every (i, slot) pair
// has been seen once and each slot force is back in its own lane. Forces go to the original atom
// order as 64-bit fixed point. The energy of each tile is reduced and converted to fixed point on its
// own, so the total does not depend on which warp took which tile. At most 48 registers, so that 5 blocks
// fit per SM (the compiler alone would take more).
// The grid is resident as a whole (Evaluator::pair_kernel_blocks: 3 to 5 blocks per SM by the atoms per SM, leaving
// room for the PME and bonded streams' kernels beside it); its warps take tiles kTileChunk at a time from a cursor
// in the list's status, which the last warp to finish sets back to zero.
constexpr int kTileChunk = 2;

// A batch's k-th tile (0 <= k < tile_start[replicas]): tile k - tile_start[r] of replica r's region.
__device__ __forceinline__ int replica_tile(const ReplicaLists& lists, int k) {
  int lo = 0, hi = lists.replicas - 1;  // the last r with tile_start[r] <= k
  while (lo < hi) {
    const int mid = (lo + hi + 1) >> 1;
    if (lists.tile_start[mid] <= k) lo = mid;
    else hi = mid - 1;
  }
  return lo * lists.region + (k - lists.tile_start[lo]);
}

template <typename real, CoulombMethod C, bool PERIODIC, bool SWITCH, bool ENERGY, bool TABLE>
__global__ void __launch_bounds__(256, 5) nonbonded_tile_kernel(
    const int* __restrict__ tile_count, int capacity, const int* __restrict__ tile_row,
    const int* __restrict__ tile_atoms, const unsigned int* __restrict__ masks,
    const real4_t<real>* __restrict__ sorted_posq, const real2_t<real>* __restrict__ sorted_params,
    const int* __restrict__ perm, int stride, unsigned long long* __restrict__ force,
    unsigned long long* __restrict__ energy, ReplicaEnergies replicas, const real4_t<real>* __restrict__ block_center,
    const real4_t<real>* __restrict__ block_half, BoxVectors<real> box, TilePairParams<real> params,
    int* __restrict__ rebuild_flag, int* __restrict__ tile_cursor, const real2_t<real>* __restrict__ lj_table,
    ReplicaLists lists) {
  // Each warp's 32 slot atoms, twice over (slot s at [s] and [s + 32]), so that step k reads [lane + k].
  __shared__ real4_t<real> slot_posq[8][2 * kTileSize];  // 256 threads: 8 warps
  __shared__ real2_t<real> slot_params[8][2 * kTileSize];
  const int lane = threadIdx.x & 31;
  real4_t<real>* my_posq = slot_posq[threadIdx.x / 32];
  real2_t<real>* my_params = slot_params[threadIdx.x / 32];
  // An overflowed list is redone by the host. A batch's tiles are its replicas' regions, walked through
  // lists.tile_start.
  const bool batch = lists.tile_start != nullptr;
  const int count = batch ? lists.tile_start[lists.replicas] : min(*tile_count, capacity);
  const SearchBox<real> image_box(box);  // same images as box.minimum_image for every pair in range
  unsigned long long energy_fixed = 0;
  if (blockIdx.x == 0 && threadIdx.x == 0) *rebuild_flag = 0;  // the build has read it
  if (batch && blockIdx.x == 0)
    for (int r = threadIdx.x; r < lists.replicas; r += blockDim.x) lists.rebuild[r] = 0;
  // Tiles are taken kTileChunk at a time from a shared cursor, the next chunk asked for as the current one
  // starts (the atomic's latency hidden behind its tiles), so that warps finish together.
  auto take_chunk = [&]() { return lane == 0 ? atomicAdd(tile_cursor, kTileChunk) : 0; };
  int next = __shfl_sync(0xffffffffu, take_chunk(), 0);
  for (int chunk = next; chunk < count; chunk = next) {
    const int asked = take_chunk();
    const int chunk_end = min(chunk + kTileChunk, count);
    for (int k = chunk; k < chunk_end; ++k) {
      const int t = batch ? replica_tile(lists, k) : k;
      // A diagonal tile (block I against itself, row stored as ~I) needs only steps 16..31: its mask keeps
      // each pair once at a step k >= 16 (exclusion_tile_masks_kernel), and after them every slot force is
      // back in its own lane as after 32 steps.
      int I = tile_row[t];
      const bool diagonal = I < 0;
      if (diagonal) I = ~I;
      const int first_step = diagonal ? kTileSize / 2 : 0;
      const int i = I * kTileSize + lane;
      const int oi = perm[i];
      const int j_own = tile_atoms[t * kTileSize + lane];
      // A padding atom i and an empty slot sit at NaN: each of their pairs fails the cutoff test (NaN < x is false,
      // imaged or not), so a packed tile needs no masks for them.
      const real nan = real(__int_as_float(0x7fffffff));
      real4_t<real> pi = sorted_posq[i];
      if (oi < 0) pi.x = pi.y = pi.z = nan;
      const real2_t<real> si = sorted_params[i];
      real4_t<real> pj = j_own >= 0 ? sorted_posq[j_own] : VecTypes<real>::make4(nan, nan, nan, real(0));  // the slot
      const real2_t<real> sj = j_own >= 0 ? sorted_params[j_own] : si;
      bool per_pair_image = PERIODIC;
      if (PERIODIC && image_once(I, pi, pj, block_center, block_half, image_box, params)) per_pair_image = false;
      pi.w *= real(kOneFourPiEps0);  // the i-charge carries Coulomb's constant through the tile's steps
      // Bit k of `pending`: the pair with slot (lane + k) mod 32 is computed (the mask rotated so that
      // step k reads bit 0 after k shifts).
      const unsigned int mask = masks[t * kTileSize + lane];
      const unsigned int pending = ~__funnelshift_r(mask, mask, lane) >> first_step;
      const bool masked = __any_sync(0xffffffffu, mask != 0u);  // an exclusion tile
      __syncwarp();  // the previous tile's reads are done
      my_posq[lane] = pj;
      my_posq[lane + kTileSize] = pj;
      my_params[lane] = sj;
      my_params[lane + kTileSize] = sj;
      __syncwarp();
      // Shared addresses of this lane's first slot, held opaque so that they stay in registers (the
      // compiler otherwise recomputes the warp's shared-memory base from the thread index at every step).
      unsigned int pos_address = static_cast<unsigned int>(__cvta_generic_to_shared(my_posq + lane + first_step));
      unsigned int par_address = static_cast<unsigned int>(__cvta_generic_to_shared(my_params + lane + first_step));
      asm volatile("" : "+r"(pos_address), "+r"(par_address));
      Vec3<real> fi(0, 0, 0), fj(0, 0, 0);
      double tile_energy = 0.0;
      run_tile_steps<real, C, SWITCH, ENERGY, TABLE>(per_pair_image, image_box.rectangular, masked,
                                                     kTileSize - first_step, pending, pos_address, par_address, pi,
                                                     si, image_box, params, lj_table, fi, fj, tile_energy);
      add_tile_forces(oi, j_own, perm, stride, force, fi, fj);
      if (ENERGY) {
        for (int off = 16; off > 0; off >>= 1) tile_energy += __shfl_down_sync(0xffffffffu, tile_energy, off);
        // Lane 0's value is the tile's sum. A batch's tile belongs to its block I's replica (blocks are
        // replica-pure; a block's first slot, lane 0's atom i, is an atom): added tile by tile.
        if (replicas.count == 1) {
          energy_fixed += to_fixed(tile_energy);
        } else if (lane == 0 && tile_energy != 0.0) {
          atomicAdd(energy + static_cast<long long>(replicas.replica_of(oi)) * replicas.stride,
                    to_fixed(tile_energy));
        }
      }
    }
    next = __shfl_sync(0xffffffffu, asked, 0);
  }
  if (ENERGY && lane == 0 && energy_fixed != 0) atomicAdd(energy, energy_fixed);
  // The last warp to finish leaves the cursor zero for the next launch: every warp's last take has returned
  // (its value ended the loop) before the warp counts itself here, so no take can follow the reset, and the
  // count needs no __threadfence (which would wait on the warp's force atomics).
  if (lane == 0) {
    const int warps = gridDim.x * blockDim.x / 32;
    if (atomicAdd(&tile_cursor[1], 1) == warps - 1) {
      tile_cursor[0] = 0;
      tile_cursor[1] = 0;
    }
  }
}

template <typename real>
struct ExceptionData {
  int2 atoms;
  ExceptionParams<real> params;  // physics/nonbonded.hpp
};

// A rigid water's three excluded pairs (O-H1, O-H2, H1-H2) under PME, handled together by
// exceptions_kernel's first blocks instead of as three separate exceptions. In a 4-site water whose
// oxygen has no charge, `o` is its charge site (M-H1, M-H2, H1-H2).
template <typename real>
struct WaterExclusionData {
  int o, h1, h2;
  real qq_oh1, qq_oh2, qq_hh;  // e^2
};

// Energy, and the force on the second atom (the first gets its negative), of one exception at
// displacement d = x_b - x_a (formed in double and rounded once to real: in float, absolute coordinates
// of a few nm would leave an error of ~1e-7 nm in short bonded distances).
template <typename real, bool EWALD, bool ENERGY>
__device__ __forceinline__ Vec3<real> exception_force(const ExceptionParams<real>& ex, const Vec3<real>& d,
                                                      const BoxVectors<real>& box, real alpha, double& energy_sum) {
  Vec3<real> f(0, 0, 0);
  if (exception_interacts(ex)) {
    const PairResult<real> pr = exception_interaction(ex, sqrt(dot(d, d)));
    f += d * pr.f_over_r;
    if (ENERGY) energy_sum += double(pr.energy);
  }
  if (EWALD && ex.atoms_charge_product_e2 != real(0)) {
    const Vec3<real> dm = box.minimum_image(d);
    const PairResult<real> pr = exception_ewald_correction(ex, sqrt(dot(dm, dm)), alpha);
    f += dm * pr.f_over_r;
    if (ENERGY) energy_sum += double(pr.energy);
  }
  return f;
}

// One thread per System exception: its own Coulomb + LJ (no cutoff, no periodic images, as OpenMM),
// and with PME the removal of the pair's reciprocal-space share (minimum image). The first
// `water_blocks` thread blocks take one rigid water each instead (PME only): its three pairs'
// corrections, computed exactly as for three exceptions, but each atom's two terms summed before its
// atomics: 9 atomic adds and 3 position loads per water instead of 18 and 6.
template <typename real, bool EWALD, bool ENERGY>
__global__ void exceptions_kernel(int count, const ExceptionData<real>* __restrict__ exceptions, int water_count,
                                  const WaterExclusionData<real>* __restrict__ waters, int water_blocks,
                                  const double4_16a* __restrict__ pos, int stride,
                                  unsigned long long* __restrict__ force, unsigned long long* __restrict__ energy,
                                  ReplicaEnergies replicas, BoxVectors<real> box, real alpha) {
  double energy_sum = 0.0;
  int first_atom = -1;  // of this thread's water or exception: its replica's energy
  if (static_cast<int>(blockIdx.x) < water_blocks) {  // block-uniform
    const int w = blockIdx.x * blockDim.x + threadIdx.x;
    if (w < water_count) {
      const WaterExclusionData<real> x = waters[w];
      first_atom = x.o;
      const double4_16a o = pos[x.o], h1 = pos[x.h1], h2 = pos[x.h2];
      auto pair = [&](const double4_16a& a, const double4_16a& b, real qq) {
        const ExceptionParams<real> ex{real(0), real(0), real(0), qq};  // a pure exclusion
        return exception_force<real, EWALD, ENERGY>(ex, delta<real>(a, b), box, alpha, energy_sum);
      };
      const Vec3<real> f1 = pair(o, h1, x.qq_oh1), f2 = pair(o, h2, x.qq_oh2), f3 = pair(h1, h2, x.qq_hh);
      add_force(force, stride, x.o, -(f1 + f2));
      add_force(force, stride, x.h1, f1 - f3);
      add_force(force, stride, x.h2, f2 + f3);
    }
  } else {
    const int e = (blockIdx.x - water_blocks) * blockDim.x + threadIdx.x;
    if (e < count) {
      const ExceptionData<real> ex = exceptions[e];
      first_atom = ex.atoms.x;
      const Vec3<real> f =
          exception_force<real, EWALD, ENERGY>(ex.params, delta<real>(pos, ex.atoms.x, ex.atoms.y), box, alpha, energy_sum);
      if (f.x != real(0) || f.y != real(0) || f.z != real(0)) {
        add_force(force, stride, ex.atoms.y, f);
        add_force(force, stride, ex.atoms.x, -f);
      }
    }
  }
  if (ENERGY) add_energy_by_replica(energy, replicas.stride, first_atom >= 0 ? replicas.replica_of(first_atom) : -1, energy_sum);
}

}  // namespace mdsim::cuda
