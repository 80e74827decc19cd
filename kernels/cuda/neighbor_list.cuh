// Tile neighbour list kernels (included by cuda_forces.cu only).
//
// Atoms are sorted spatially (Morton order of their cell, or columns for periodic systems) and cut
// into blocks of 32. A tile pairs the 32 atoms of block I with 32 "slot" atoms, either
//   - an exclusion tile: all atoms of one block J >= I such that some atom of I and some atom of J form
//     an excluded (exception) pair, and always J = I (the diagonal tile: each pair once, in its last 16
//     steps; its row is stored as ~I). Which block
//     pairs these are depends only on which atoms share a block, so they and their 32 exclusion masks
//     (bit k of mask l: pair (I*32+l, slot k) is skipped: padding, the diagonal's other half,
//     excluded pairs) are found once per sort (exclusion_keys_kernel, a sort + unique on the host's
//     stream, exclusion_tile_masks_kernel), not at every list build; or
//   - a packed tile: atoms of other blocks J > I that lie within cutoff + buffer of some atom of I
//     (blocks found by bounding boxes, then atoms by I's box, then by I's atoms; RowPacker::atom_filter),
//     32 to a tile regardless of their block (GPU neighbour lists pack "interacting atoms" this way;
//     it keeps most computed pairs within the cutoff). No excluded pair can occur in them, so their
//     masks are 0: the tile kernel places empty slots (-1) and padding atoms of I at NaN, whose pairs fail
//     its cutoff test, and takes such a tile's steps without mask tests.
// Every list build copies each row's exclusion tiles into the list and packs the rest.
//
// The rebuild kernels all read `rebuild_flag` first and return at once when it is 0, so the list is
// rebuilt on the device only when needed, without the host looking.
//
// A replica batch (CudaOptions::replicas) keeps one list per replica (ReplicaLists): each replica's tiles in its own
// region of the tile buffers, rebuilt only when its own atoms have moved past half the buffer (or at a sort or a
// forced rebuild), so that every replica's list is built at the steps it would be alone; `rebuild_flag` is then set
// when any replica rebuilds.
//
// Pair classes (PairClasses): bit 0 of an atom's class says it is charged, bit 1 that it has Lennard-Jones. Two
// atoms whose classes share no bit interact with exactly zero force and energy. When a system has many uncharged
// atoms (the oxygen of a 4- or 5-site water: LJ only, its charge on a virtual site), the sort puts them in blocks
// of their own (each column holds two sub-columns, the uncharged atoms' over a coarser grid), and a row leaves out
// the blocks and exclusion tiles whose classes share no bit with its block's, and a row without LJ the uncharged
// candidates: a water's hydrogens and charge sites never meet an oxygen in a tile. The pairs computed are the same
// nonzero ones; only zeros are dropped. Systems without uncharged atoms (TIP3P) are sorted and searched as before.
#pragma once

#include "kernels/cuda/build_items.hpp"
#include "kernels/cuda/dependent_launch.cuh"
#include "kernels/cuda/device_types.cuh"

namespace mdsim::cuda {

constexpr int kTileSize = 32;

constexpr unsigned char kClassCharged = 1, kClassLj = 2, kClassAll = 3;

// Each block's pair class (the OR of its atoms'; padding adds nothing); null when the list does not filter by
// class (then every pair in range is kept, as without classes).
struct PairClasses {
  const unsigned char* block;
  __device__ __forceinline__ bool blocks_meet(int I, int J) const {
    return block == nullptr || (block[I] & block[J]) != 0;
  }
};

// 30-bit Morton code of a point given as fractions (each in [0, 1)) of a reference box.
__device__ __forceinline__ unsigned int morton_spread(unsigned int v) {
  v &= 0x3ffu;
  v = (v | (v << 16)) & 0x030000ffu;
  v = (v | (v << 8)) & 0x0300f00fu;
  v = (v | (v << 4)) & 0x030c30c3u;
  v = (v | (v << 2)) & 0x09249249u;
  return v;
}

__device__ __forceinline__ unsigned int morton_code(double fx, double fy, double fz) {
  auto q = [](double f) {
    int v = static_cast<int>(f * 1024.0);
    return static_cast<unsigned int>(v < 0 ? 0 : (v > 1023 ? 1023 : v));
  };
  return (morton_spread(q(fx)) << 2) | (morton_spread(q(fy)) << 1) | morton_spread(q(fz));
}

// Sort keys (64-bit). Periodic: atoms are binned into columns on an ncx × ny grid over the box's
// first two axes and ordered by their fractional height within the column (the column index in the
// high word), so that after padding each column to a multiple of 32 every block is a compact slab of
// one column, as GROMACS lays out its clusters. Non-periodic (small systems): one column, Morton order
// over a fixed frame (0.25 nm cells over [-128, 128) nm; atoms outside share the edge cells), not over
// the positions' bounding box, so that the order depends on the current positions alone (a run
// resumed from a checkpoint sorts as the uninterrupted run did).
// A replica batch (CudaOptions::replicas) has each replica's own columns, replica r's after replica r - 1's
// (column index r ncx ncy + cy ncx + cx; one column per replica without a box): a block never holds two
// replicas' atoms, and each replica is sorted exactly as it would be alone.
// With `atom_class` (periodic only; see PairClasses), every column is two sub-columns, 2 column + u: u = 1 holds
// the uncharged atoms, binned on a grid `group` times coarser (their column is that of the coarse cell's first
// fine column), so that their blocks are about as compact as the others at their lower density.
__global__ void spatial_keys_kernel(int n, const double4_16a* __restrict__ pos, bool periodic, BoxVectors<double> box,
                                    int ncx, int ncy, int atoms_per_replica,
                                    const unsigned char* __restrict__ atom_class, int group,
                                    unsigned long long* __restrict__ keys, int* __restrict__ values) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const double4_16a p = pos[i];
  const unsigned long long replica_column = static_cast<unsigned long long>(i / atoms_per_replica) * (ncx * ncy);
  unsigned long long key;
  if (periodic) {
    // Reduced triclinic form: fractional coordinates from c, then b, then a, wrapped into [0, 1).
    double z = p.z / box.c.z;
    double y = (p.y - z * box.c.y) / box.b.y;
    double x = (p.x - z * box.c.x - y * box.b.x) / box.a.x;
    x -= floor(x);
    y -= floor(y);
    z -= floor(z);
    // max(0, ...): a non-finite position (a blown-up run, flagged by the block bounds) converts to INT_MIN.
    int cx = max(0, min(ncx - 1, static_cast<int>(x * ncx)));
    int cy = max(0, min(ncy - 1, static_cast<int>(y * ncy)));
    const double zq = min(z * 4294967296.0, 4294967295.0);
    unsigned long long column = replica_column + static_cast<unsigned long long>(cy * ncx + cx);
    if (atom_class != nullptr) {
      const bool uncharged = (atom_class[i] & kClassCharged) == 0;
      if (uncharged) cx = cx / group * group, cy = cy / group * group;
      column = 2 * (replica_column + static_cast<unsigned long long>(cy * ncx + cx)) + (uncharged ? 1 : 0);
    }
    key = (column << 32) | static_cast<unsigned long long>(zq);
  } else {
    constexpr double kFrameLow = -128.0, kFrameSize = 256.0;  // nm
    key = (replica_column << 32) |
          morton_code((p.x - kFrameLow) / kFrameSize, (p.y - kFrameLow) / kFrameSize, (p.z - kFrameLow) / kFrameSize);
  }
  keys[i] = key;
  values[i] = i;
}

// Exclusive prefix sums of count(i) for i in [0, n) into out[0..n] (out[n]: the total, also returned to every
// thread), by one block of kScanThreads threads, kScanThreads values at a time.
constexpr int kScanThreads = 1024;
template <typename Count>
__device__ int block_exclusive_scan(int n, Count count, int* __restrict__ out) {
  __shared__ int warp_sums[kScanThreads / 32];
  __shared__ int carry;
  const int lane = threadIdx.x & 31, warp = threadIdx.x / 32;
  if (threadIdx.x == 0) carry = 0;
  for (int base = 0; base < n; base += kScanThreads) {
    const int i = base + static_cast<int>(threadIdx.x);
    const int value = i < n ? count(i) : 0;
    int sum = value;  // inclusive scan within the warp, then over the warps' totals
    for (int off = 1; off < 32; off <<= 1) {
      const int up = __shfl_up_sync(0xffffffffu, sum, off);
      if (lane >= off) sum += up;
    }
    __syncthreads();  // the previous chunk's reads of warp_sums and carry are done
    if (lane == 31) warp_sums[warp] = sum;
    __syncthreads();
    if (warp == 0) {
      int w = warp_sums[lane];
      for (int off = 1; off < 32; off <<= 1) {
        const int up = __shfl_up_sync(0xffffffffu, w, off);
        if (lane >= off) w += up;
      }
      warp_sums[lane] = w;  // inclusive over the warps
    }
    __syncthreads();
    if (i < n) out[i] = carry + (warp > 0 ? warp_sums[warp - 1] : 0) + sum - value;
    __syncthreads();  // every thread has read carry
    if (threadIdx.x == 0) carry += warp_sums[kScanThreads / 32 - 1];
  }
  __syncthreads();
  const int total = carry;
  if (threadIdx.x == 0) out[n] = total;
  return total;
}

// After sorting: start[c] for c in [0, ncolumns] (start[ncolumns] = n), the first sorted position of column c, or of
// the next column holding atoms where c holds none. The keys are sorted, so the position where a column's run of
// keys begins fills the starts of the columns since the previous run: no atomics. n + 1 threads.
__global__ void column_starts_kernel(int n, int ncolumns, const unsigned long long* __restrict__ sorted_keys,
                                     int* __restrict__ start) {
  const int u = blockIdx.x * blockDim.x + threadIdx.x;
  if (u > n) return;
  const int column = u < n ? static_cast<int>(sorted_keys[u] >> 32) : ncolumns;
  const int previous = u > 0 ? static_cast<int>(sorted_keys[u - 1] >> 32) : -1;
  for (int c = previous + 1; c <= column; ++c) start[c] = u;
}

// Start of each column padded to whole blocks (padded_start[0..ncolumns]) from the unpadded starts; the number of
// blocks in use. One block.
__global__ void __launch_bounds__(kScanThreads) column_scan_kernel(int ncolumns, const int* __restrict__ raw_start,
                                                                   int* __restrict__ padded_start,
                                                                   int* __restrict__ nblocks_used) {
  const int padded = block_exclusive_scan(
      ncolumns,
      [&](int c) { return (raw_start[c + 1] - raw_start[c] + kTileSize - 1) / kTileSize * kTileSize; },
      padded_start);
  if (threadIdx.x == 0) *nblocks_used = padded / kTileSize;
}

// After sorting: sorted slot of every atom (its column's padded start + its rank in the column), as
// perm (slot -> atom; slots left over are padding, perm = -1, preset by the caller) and slot_of
// (atom -> slot).
__global__ void scatter_sorted_kernel(int n, const unsigned long long* __restrict__ sorted_keys,
                                      const int* __restrict__ sorted_values, const int* __restrict__ raw_start,
                                      const int* __restrict__ padded_start, int* __restrict__ perm,
                                      int* __restrict__ slot_of) {
  const int u = blockIdx.x * blockDim.x + threadIdx.x;
  if (u >= n) return;
  const int c = static_cast<int>(sorted_keys[u] >> 32);
  const int slot = padded_start[c] + (u - raw_start[c]);
  perm[slot] = sorted_values[u];
  slot_of[sorted_values[u]] = slot;
}

// Exclusion tiles, after a sort: key (I << 32) | J, I <= J, of the blocks holding each excluded pair
// (`pairs`, original atom indices), then one diagonal key (I, I) per block slot (all ones, sorting last,
// for the blocks past the last one in use). Sorted and made unique by the caller.
__global__ void exclusion_keys_kernel(int npairs, const int2* __restrict__ pairs, int max_blocks,
                                      const int* __restrict__ nblocks_used, const int* __restrict__ slot_of,
                                      unsigned long long* __restrict__ keys) {
  const int e = blockIdx.x * blockDim.x + threadIdx.x;
  if (e < npairs) {
    const int a = slot_of[pairs[e].x] / kTileSize, b = slot_of[pairs[e].y] / kTileSize;
    keys[e] = (static_cast<unsigned long long>(min(a, b)) << 32) | static_cast<unsigned long long>(max(a, b));
  } else if (e < npairs + max_blocks) {
    const int d = e - npairs;
    keys[e] = d < *nblocks_used ? (static_cast<unsigned long long>(d) << 32) | static_cast<unsigned long long>(d)
                                : ~0ull;
  }
}

// The neighbour list's state in device memory, written by the kernels and read by the host only at
// synchronising calls. Plain ints so that kernels can update them with atomics.
struct NeighborListStatus {
  int rebuild;             // nonzero: this evaluation rebuilds the tile list (set by the displacement check)
  int tile_count;          // tiles in the current list (may exceed the capacity: an overflow); a batch's: ReplicaLists
  int tile_overflow;       // the last build found more tiles than the list holds
  int builds;              // list builds so far
  int column_excess[2];    // the farthest any block's atoms reach outside their column in x and y since the
                           // last sort (nm, float bits; non-negative floats order as their bit patterns)
  int exclusion_overflow;  // more exclusion tiles than their buffers hold (set after a sort, cleared by the host)
  int nonfinite;           // an atom's position is NaN, infinite or absurdly far (physics/stability.hpp)
  int tile_cursor[2];      // the tile kernel's next tile and its warps finished (it leaves both zero)
};

// A replica batch's per-replica rebuild flags and tile counts (a single system: the status' own, one replica).
// Replica r's tiles are [r region, r region + tile_count[r]) of the tile buffers; tile_start (a batch's) is the
// exclusive prefix sum of the counts, which the tile kernel walks.
struct ReplicaLists {
  int replicas;              // 1: a single system
  int atoms_per_replica;
  int* rebuild;              // [replicas]: this evaluation rebuilds the replica's list
  int* tile_count;           // [replicas]
  int region;                // tiles per replica (the capacity without a batch)
  const int* block_replica;  // [blocks]: the replica of each block (after a sort)
  int* tile_start;           // [replicas + 1] (null without a batch)
};

// Block range of every column after a sort: blocks [start[c], start[c + 1]) hold column c; and the
// column of every block in use, and its replica (columns_per_replica columns each).
__global__ void column_blocks_kernel(int ncolumns, const int* __restrict__ padded_start, const int* __restrict__ nblocks_used,
                                     int* __restrict__ column_block_start, int* __restrict__ block_column,
                                     int columns_per_replica, int* __restrict__ block_replica) {
  const int c = blockIdx.x * blockDim.x + threadIdx.x;
  if (c > ncolumns) return;
  const int begin = c < ncolumns ? padded_start[c] / kTileSize : *nblocks_used;
  column_block_start[c] = begin;
  if (c == ncolumns) return;
  const int end = c + 1 < ncolumns ? padded_start[c + 1] / kTileSize : *nblocks_used;
  for (int b = begin; b < end; ++b) {
    block_column[b] = c;
    block_replica[b] = c / columns_per_replica;
  }
}

// Per-atom parameters and charges in sorted order (zero for padding); asks for a list rebuild. With `atom_class`
// (System order), each block's class (PairClasses; whole warps, one block each: npad and the thread blocks are
// multiples of 32).
template <typename real>
__global__ void sorted_params_kernel(int npad, const int* __restrict__ perm, const real2_t<real>* __restrict__ params,
                                     const real* __restrict__ charge, real2_t<real>* __restrict__ sorted_params,
                                     real* __restrict__ sorted_charge, NeighborListStatus* __restrict__ status,
                                     ReplicaLists lists, const unsigned char* __restrict__ atom_class,
                                     unsigned char* __restrict__ block_class) {
  const int s = blockIdx.x * blockDim.x + threadIdx.x;
  if (s < lists.replicas) lists.rebuild[s] = 1;  // every replica's list (npad >= replicas)
  if (s == 0) {
    status->rebuild = 1;
    status->column_excess[0] = 0;  // new columns: no block reaches out of its column yet
    status->column_excess[1] = 0;
  }
  if (s >= npad) return;
  const int orig = perm[s];
  sorted_params[s] = orig >= 0 ? params[orig] : VecTypes<real>::make2(real(0), real(0));
  sorted_charge[s] = orig >= 0 ? charge[orig] : real(0);
  if (atom_class != nullptr) {
    const unsigned char c = orig >= 0 ? atom_class[orig] : 0;
    const bool charged = __ballot_sync(0xffffffffu, (c & kClassCharged) != 0) != 0u;
    const bool lj = __ballot_sync(0xffffffffu, (c & kClassLj) != 0) != 0u;
    if ((threadIdx.x & 31) == 0) block_class[s / kTileSize] = (charged ? kClassCharged : 0) | (lj ? kClassLj : 0);
  }
}

// Per evaluation: positions (double, original order) → posq in sorted order, and in original order
// when `posq` is non-null; flags a rebuild when an atom has moved more than half the buffer since the
// last build, comparing the sorted copy with the one the list was built from (block_bounds_kernel
// keeps it): per slot, so both reads are coalesced. A batch flags the atom's replica.
template <typename real>
__global__ void prepare_positions_kernel(int npad, const double4_16a* __restrict__ pos,
                                         const real* __restrict__ sorted_charge, const int* __restrict__ perm,
                                         real4_t<real>* __restrict__ posq, real4_t<real>* __restrict__ sorted_posq,
                                         const real4_t<real>* __restrict__ sorted_at_build, real half_buffer2,
                                         int* __restrict__ rebuild_flag, int* __restrict__ nonfinite_flag,
                                         ReplicaLists lists) {
  const int s = blockIdx.x * blockDim.x + threadIdx.x;
  if (s >= npad) return;
  int orig = perm[s];
  const bool real_atom = orig >= 0;
  if (!real_atom) {
    // Padding copies its block's first atom (so the block's bounding box does not grow), charge 0;
    // blocks past the last column are empty: charge 0 too (the PME spread reads every slot).
    orig = perm[s & ~(kTileSize - 1)];
    if (orig < 0) {
      sorted_posq[s] = VecTypes<real>::make4(real(0), real(0), real(0), real(0));
      return;
    }
  }
  const double4_16a p = pos[orig];
  const real4_t<real> v = VecTypes<real>::make4(real(p.x), real(p.y), real(p.z), sorted_charge[s]);
  sorted_posq[s] = v;
  if (!real_atom) return;
  if (!position_in_range(p.x, p.y, p.z)) *nonfinite_flag = 1;  // a blown-up step; read at the next synchronisation
  if (posq != nullptr) posq[orig] = v;
  const real4_t<real> b = sorted_at_build[s];
  const real dx = v.x - b.x, dy = v.y - b.y, dz = v.z - b.z;
  if (dx * dx + dy * dy + dz * dz > half_buffer2) {  // benign races: all write 1
    *rebuild_flag = 1;
    lists.rebuild[orig / lists.atoms_per_replica] = 1;
  }
}

// One warp per block: bounding box of the block's atoms (imaged next to its first atom), and the
// sorted positions the next displacement checks compare against. Thread blocks of kBoundsThreads. A
// batch's blocks of replicas that do not rebuild keep theirs; the first block of each replica that does
// starts its tile count again.
constexpr int kBoundsThreads = 256;
template <typename real, bool PERIODIC>
__global__ void __launch_bounds__(kBoundsThreads) block_bounds_kernel(
    const int* __restrict__ nblocks_used, const real4_t<real>* __restrict__ sorted_posq, BoxVectors<real> box,
    const int* __restrict__ rebuild_flag, real4_t<real>* __restrict__ block_center, real4_t<real>* __restrict__ block_half,
    real4_t<real>* __restrict__ sorted_at_build, int* __restrict__ overflow, int* __restrict__ build_count,
    const int* __restrict__ block_column, int ncx, int ncy, int sub_columns, int* __restrict__ column_excess,
    ReplicaLists lists) {
  wait_for_prior_grid();  // may be a dependent launch (launch_kernel)
  if (*rebuild_flag == 0) return;
  const int warp = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
  const int lane = threadIdx.x & 31;
  const int replica = warp < *nblocks_used ? lists.block_replica[warp] : 0;
  // warp-uniform; no early return: the block reduces below
  const bool active = warp < *nblocks_used && lists.rebuild[replica] != 0;
  if (active && lane == 0 && (warp == 0 || lists.block_replica[warp - 1] != replica)) {
    lists.tile_count[replica] = 0;
    if (lists.replicas == 1) *overflow = 0;  // a batch's stays set until the host has grown the list
    atomicAdd(build_count, 1);
  }
  const int s = warp * kTileSize + lane;
  Vec3<real> x(0, 0, 0);
  if (active) {
    const real4_t<real> p = sorted_posq[s];
    sorted_at_build[s] = p;
    x = xyz(p);
  }
  const Vec3<real> ref(__shfl_sync(0xffffffffu, x.x, 0), __shfl_sync(0xffffffffu, x.y, 0),
                       __shfl_sync(0xffffffffu, x.z, 0));
  if (PERIODIC) x = ref + box.minimum_image(x - ref);
  Vec3<real> lo = x, hi = x;
  for (int off = 16; off > 0; off >>= 1) {
    lo.x = min(lo.x, __shfl_xor_sync(0xffffffffu, lo.x, off));
    lo.y = min(lo.y, __shfl_xor_sync(0xffffffffu, lo.y, off));
    lo.z = min(lo.z, __shfl_xor_sync(0xffffffffu, lo.z, off));
    hi.x = max(hi.x, __shfl_xor_sync(0xffffffffu, hi.x, off));
    hi.y = max(hi.y, __shfl_xor_sync(0xffffffffu, hi.y, off));
    hi.z = max(hi.z, __shfl_xor_sync(0xffffffffu, hi.z, off));
  }
  if (PERIODIC && block_column != nullptr) {
    // How far this block's atoms lie outside its column (rectangular box; column (cx, cy) covers
    // [cx wx, (cx + 1) wx) x [cy wy, (cy + 1) wy), periodically): tile_build_columns_kernel widens its
    // window of columns by the largest such distance since the last sort. Reduced over the thread
    // block before the one atomic per axis (one per warp, all on the same two words, cost more than
    // the rest of the kernel). An uncharged atoms' block (sub-column 1 of a coarse cell) counts from its fine
    // column, so its cell's other columns count as excess too: a wider window for every row, never a pair missed.
    __shared__ float block_excess[2][kBoundsThreads / 32];
    real ex = 0, ey = 0;
    if (active) {
      const int column = block_column[warp] / sub_columns % (ncx * ncy);  // within its replica
      const real wx = box.a.x / real(ncx), wy = box.b.y / real(ncy);
      const real center_x = (real(column % ncx) + real(0.5)) * wx, center_y = (real(column / ncx) + real(0.5)) * wy;
      real dx = x.x - center_x, dy = x.y - center_y;
      dx -= box.a.x * round(dx / box.a.x);
      dy -= box.b.y * round(dy / box.b.y);
      ex = max(real(0), abs(dx) - real(0.5) * wx), ey = max(real(0), abs(dy) - real(0.5) * wy);
    }
    for (int off = 16; off > 0; off >>= 1) {
      ex = max(ex, __shfl_xor_sync(0xffffffffu, ex, off));
      ey = max(ey, __shfl_xor_sync(0xffffffffu, ey, off));
    }
    if (lane == 0) {
      block_excess[0][threadIdx.x / 32] = static_cast<float>(ex);
      block_excess[1][threadIdx.x / 32] = static_cast<float>(ey);
    }
    __syncthreads();
    if (threadIdx.x < 2) {
      float e = 0.0f;
      for (int w = 0; w < kBoundsThreads / 32; ++w) e = fmaxf(e, block_excess[threadIdx.x][w]);
      atomicMax(&column_excess[threadIdx.x], __float_as_int(e * 1.0001f + 1e-6f));
    }
  }
  if (!active) return;
  if (lane == 0) {
    block_center[warp] = VecTypes<real>::make4(real(0.5) * (lo.x + hi.x), real(0.5) * (lo.y + hi.y),
                                               real(0.5) * (lo.z + hi.z), real(0));
    block_half[warp] = VecTypes<real>::make4(real(0.5) * (hi.x - lo.x), real(0.5) * (hi.y - lo.y),
                                             real(0.5) * (hi.z - lo.z), real(0));
  }
}

// Squared distance of a point at displacement d from a box's centre to the box (half-extents `half` per axis).
template <typename real>
__device__ __forceinline__ real gap2_beyond(const Vec3<real>& d, const Vec3<real>& half) {
  const real gx = max(real(0), abs(d.x) - half.x), gy = max(real(0), abs(d.y) - half.y),
             gz = max(real(0), abs(d.z) - half.z);
  return gx * gx + gy * gy + gz * gz;
}

// Nearest image for the neighbour search and the tile kernel: BoxVectors::minimum_image with its three
// divisions replaced by multiplications with precomputed reciprocals (an IEEE division is about a
// dozen instructions, and both kernels take many images). The two can differ only for a displacement
// within rounding of half a box height along some axis, where both images lie farther than any search
// range or cutoff (which stay below half the smallest height): no search decision changes, and every
// pair in range gets the same displacement, bit for bit. gap2_to_nearest_image gives the search its
// distances between boxes (see there).
template <typename real>
struct SearchBox {
  BoxVectors<real> v;
  real inv_ax, inv_by, inv_cz;  // 1/nm; infinite for a non-periodic system's zero box (never used)
  real smallest_height;  // nm
  bool rectangular;
  __device__ explicit SearchBox(const BoxVectors<real>& b)
      : v(b), inv_ax(real(1) / b.a.x), inv_by(real(1) / b.b.y), inv_cz(real(1) / b.c.z),
        smallest_height(b.smallest_height()), rectangular(!b.triclinic()) {}
  __device__ __forceinline__ Vec3<real> minimum_image(Vec3<real> d) const {
    d -= v.c * nearest_integer(d.z, inv_cz);
    d -= v.b * nearest_integer(d.y, inv_by);
    d -= v.a * nearest_integer(d.x, inv_ax);
    return d;
  }
  // minimum_image for a rectangular box (b and c along their axes): the same image for every displacement shorter
  // than half the box on each axis, without the products with the zero components (the tile kernel's per-pair step).
  __device__ __forceinline__ Vec3<real> minimum_image_rectangular(Vec3<real> d) const {
    d.z = fma(-v.c.z, nearest_integer(d.z, inv_cz), d.z);
    d.y = fma(-v.b.y, nearest_integer(d.y, inv_by), d.y);
    d.x = fma(-v.a.x, nearest_integer(d.x, inv_ax), d.x);
    return d;
  }
  // x * inv rounded to the nearest integer. Float: by adding and subtracting 1.5 * 2^23 (|x * inv| < 2^22 here): a
  // fused multiply-add and an add on the FMA pipe, in place of a multiply and a round (FRND, on the slower pipe
  // that the pair step's rsqrt, exp2 and reciprocal share: ncu, villin 16 replicas, pair kernel 253 -> 244 us).
  // Ties (|x| half a box) may round either way.
  __device__ __forceinline__ static float nearest_integer(float x, float inv) {
    constexpr float kMagic = 12582912.0f;  // 1.5 * 2^23
    return __fsub_rn(__fmaf_rn(x, inv, kMagic), kMagic);
  }
  __device__ __forceinline__ static double nearest_integer(double x, double inv) { return floor(x * inv + 0.5); }

  // Squared distance between a box of half-extents `half` (per axis, nm) and a point or box at displacement d from
  // its centre (for two boxes, half holds both half-extents summed): the per-axis gaps beyond half, taken at the
  // image of d that makes it smallest, wherever that is smaller than range. In a rectangular box that is the
  // minimum image (it shortens each axis on its own). In a triclinic box another image can be nearer when d is
  // long, so there every image whose gaps could all be below range is tried, unless the minimum image is short
  // enough to rule the others out: each is at least smallest_height - |u| long (u: the minimum image), so its gap
  // is at least that less |half|.
  // TRICLINIC: the box may be triclinic (a separate instantiation of the search kernels, whose rectangular
  // one keeps its registers).
  template <bool TRICLINIC>
  __device__ __forceinline__ real gap2_to_nearest_image(Vec3<real> d, const Vec3<real>& half, real range2) const {
    d = minimum_image(d);
    real best = gap2_beyond(d, half);
    if (!TRICLINIC) return best;
    const real range = sqrt(range2);
    if (smallest_height - sqrt(dot(d, d)) - sqrt(dot(half, half)) >= range) return best;
    // Images u + kc c + kb b + ka a (u = d, the minimum image), each axis's multiples bounded by
    // |w_axis| < range + half_axis (the box's vectors are in reduced form: c alone moves z, b then y, a then x).
    const real rz = range + half.z, ry = range + half.y, rx = range + half.x;
    for (int kc = static_cast<int>(ceil((-rz - d.z) * inv_cz)); kc <= static_cast<int>(floor((rz - d.z) * inv_cz));
         ++kc) {
      const Vec3<real> wc = d + v.c * real(kc);
      for (int kb = static_cast<int>(ceil((-ry - wc.y) * inv_by)); kb <= static_cast<int>(floor((ry - wc.y) * inv_by));
           ++kb) {
        const Vec3<real> wb = wc + v.b * real(kb);
        for (int ka = static_cast<int>(ceil((-rx - wb.x) * inv_ax));
             ka <= static_cast<int>(floor((rx - wb.x) * inv_ax)); ++ka)
          best = min(best, gap2_beyond(wb + v.a * real(ka), half));
      }
    }
    return best;
  }
};

template <typename real, bool PERIODIC, bool TRICLINIC = false>
__device__ __forceinline__ bool blocks_in_range(const real4_t<real>& ci, const real4_t<real>& hi,
                                                const real4_t<real>& cj, const real4_t<real>& hj,
                                                const SearchBox<real>& box, real range2) {
  const Vec3<real> d(cj.x - ci.x, cj.y - ci.y, cj.z - ci.z);
  const Vec3<real> half(hi.x + hj.x, hi.y + hj.y, hi.z + hj.z);
  return (PERIODIC ? box.template gap2_to_nearest_image<TRICLINIC>(d, half, range2) : gap2_beyond(d, half)) < range2;
}

struct ExclusionView {
  const unsigned long long* window;  // per atom: bit (b - a + 32) set when b is excluded
  const int* start;                  // CSR of partners outside the window
  const int* partner;
  const int2* range;                 // [min, max] of those partners (lo > hi: none)
};

struct TileListView {
  int* tile_count;           // per replica (ReplicaLists)
  int* overflow;
  int capacity;
  int region;                // tiles per replica: replica r's are [r region, (r + 1) region)
  const int* block_replica;  // the replica of each block
  int* tile_row;             // block I of each tile (~I: the diagonal tile of row I)
  int* tile_atoms;           // 32 sorted atom indices per tile (-1 = empty slot)
  unsigned int* tile_masks;  // 32 masks per tile: bit k of mask l = pair (I*32+l, slot k) is skipped
};

// The exclusion tiles of the current sort: unique sorted keys (I << 32) | J (a final all-ones key
// marks unused block slots), 32 masks per key, and where each row's keys start.
struct ExclusionTiles {
  const unsigned long long* keys;
  const unsigned int* masks;
  const int* row_start;  // row I's keys are [row_start[I], row_start[I + 1]) (exclusion_row_start_kernel)
  int capacity;  // tiles the masks buffer holds; the keys past it are left out (and the overflow flagged)
};

// First index in sorted keys[0, n) whose key is >= v.
__device__ __forceinline__ int lower_bound_key(const unsigned long long* __restrict__ keys, int n, unsigned long long v) {
  int lo = 0, hi = n;
  while (lo < hi) {
    const int mid = (lo + hi) >> 1;
    if (keys[mid] < v) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

// Tiles reserved for a row: [first, first + count), those below `end` (its replica's region's end) written.
struct ReservedTiles {
  int first, end;
};

// Reserves `tiles` consecutive tiles of row I's replica's region (one atomic per call) and writes their row
// (~I for the first when `first_is_diagonal`: the tile kernel's mark of a diagonal tile). Tiles past the
// region are counted but not written (the overflow is flagged and the host redoes the evaluation with a
// larger list; every tile below the region's end is written, so the tile kernel never reads an unwritten
// one). Whole warp.
__device__ __forceinline__ ReservedTiles reserve_tiles(int I, int tiles, const TileListView& list,
                                                       bool first_is_diagonal = false) {
  const int lane = threadIdx.x & 31;
  const int replica = list.block_replica[I];
  int t0 = 0;
  if (lane == 0) t0 = atomicAdd(&list.tile_count[replica], tiles);
  t0 = __shfl_sync(0xffffffffu, t0, 0);
  if (t0 + tiles > list.region && lane == 0) atomicExch(list.overflow, 1);
  const ReservedTiles r{replica * list.region + t0, (replica + 1) * list.region};
  for (int q = lane; q < tiles && r.first + q < r.end; q += kTileSize)
    list.tile_row[r.first + q] = q == 0 && first_is_diagonal ? ~I : I;
  return r;
}

// Writes this lane's slot (-1 = empty) and mask of tile t (nothing past the region's end).
__device__ __forceinline__ void write_tile_lane(int t, const ReservedTiles& reserved, int slot, unsigned int mask,
                                                const TileListView& list) {
  if (t >= reserved.end) return;
  const int lane = threadIdx.x & 31;
  list.tile_atoms[t * kTileSize + lane] = slot;
  list.tile_masks[t * kTileSize + lane] = mask;
}

// One warp per exclusion tile (grid-stride), after a sort: the tile's 32 exclusion masks. Bit k of
// lane l's mask skips the pair (atom I*32+l, atom J*32+k): padding, excluded pairs, and in the
// diagonal tile (J = I) every pair but one of each unordered pair {l, k}: the one the tile kernel meets
// at a step d = (k - l) mod 32 >= 16 (d in 17..31, or d = 16 from lanes l < 16), so that the diagonal
// tile takes only the last 16 of its 32 steps (nonbonded_tile_kernel).
__global__ void __launch_bounds__(256) exclusion_tile_masks_kernel(const unsigned long long* __restrict__ keys,
                                                                    const int* __restrict__ count, int capacity,
                                                                    const int* __restrict__ perm, ExclusionView excl,
                                                                    unsigned int* __restrict__ masks,
                                                                    int* __restrict__ overflow) {
  const int lane = threadIdx.x & 31;
  const int tiles = min(*count, capacity);
  if (blockIdx.x == 0 && threadIdx.x == 0 && *count > capacity) *overflow = 1;
  const int warps = gridDim.x * blockDim.x / 32;
  for (int t = (blockIdx.x * blockDim.x + threadIdx.x) / 32; t < tiles; t += warps) {
    const unsigned long long key = keys[t];
    if (key == ~0ull) continue;  // the unused-slots marker
    const int I = static_cast<int>(key >> 32), J = static_cast<int>(key & 0xffffffffull);
    const int a = perm[I * kTileSize + lane];  // original index of this lane's i-atom (-1: padding)
    const int slot_orig = perm[J * kTileSize + lane];
    const bool diagonal = I == J;
    // Is (original-order) atom b excluded from atom a's pair sum? Partners within [a-32, a+31] (nearly
    // all: bonded neighbours sit close in the file) are bits of a 64-bit window mask; the rest are in a
    // short sorted CSR list, bounded by [lo, hi] so most pairs never read it.
    const unsigned long long window = a >= 0 ? excl.window[a] : 0ull;
    const int2 outside = a >= 0 ? excl.range[a] : make_int2(1, 0);
    unsigned int mask = 0;
    for (int k = 0; k < kTileSize; ++k) {
      const int b = __shfl_sync(0xffffffffu, slot_orig, k);
      const int d = (k - lane) & (kTileSize - 1);
      bool skip = a < 0 || b < 0 || (diagonal && (d < kTileSize / 2 || (d == kTileSize / 2 && lane >= kTileSize / 2)));
      if (!skip) {
        const int offset = b - a + 32;
        if (offset >= 0 && offset < 64) {
          skip = (window >> offset) & 1ull;
        } else if (b >= outside.x && b <= outside.y) {
          for (int q = excl.start[a]; q < excl.start[a + 1] && !skip; ++q) skip = excl.partner[q] == b;
        }
      }
      if (skip) mask |= 1u << k;
    }
    masks[t * kTileSize + lane] = mask;
  }
}

// After a sort, once the exclusion keys are unique: the first key of every row I in [0, rows] (row
// `rows` is past the last block slot: its start is the count of keys of real blocks). Once per sort,
// so that a list build finds each row's keys with two loads instead of two binary searches over all
// keys (a chain of dependent loads).
__global__ void exclusion_row_start_kernel(int rows, const unsigned long long* __restrict__ keys,
                                           const int* __restrict__ count, int* __restrict__ row_start) {
  const int I = blockIdx.x * blockDim.x + threadIdx.x;
  if (I > rows) return;
  row_start[I] = lower_bound_key(keys, *count, static_cast<unsigned long long>(I) << 32);
}

// Row I's exclusion tiles: keys [first, last) of ex.
struct RowExclusions {
  int first, last;
};
__device__ __forceinline__ RowExclusions row_exclusions(int I, const ExclusionTiles& ex) {
  return {ex.row_start[I], ex.row_start[I + 1]};
}

// Copies row I's exclusion tiles, with their masks, into the list; with pair classes (CLASSES), not those whose
// blocks share no class with I's but the diagonal (all their pairs are zero; the packer skips such a block J all the
// same, as it shares an exclusion tile with I). Whole warp.
template <bool CLASSES>
__device__ __forceinline__ void emit_exclusion_tiles(int I, const RowExclusions& row, const ExclusionTiles& ex,
                                                     const int* __restrict__ perm, const PairClasses& classes,
                                                     const TileListView& list) {
  const int lane = threadIdx.x & 31;
  const int last = min(row.last, ex.capacity);
  if (last <= row.first) return;
  auto block_j = [&](int t) { return static_cast<int>(ex.keys[t] & 0xffffffffull); };
  auto keep = [&](int J) { return !CLASSES || J == I || classes.blocks_meet(I, J); };
  int kept = last - row.first;
  if (CLASSES) {
    kept = 0;
    for (int base = row.first; base < last; base += kTileSize) {
      const int t = base + lane;
      kept += __popc(__ballot_sync(0xffffffffu, t < last && keep(block_j(t))));
    }
  }
  // Keys (I << 32) | J with J >= I sort the diagonal (I, I) first.
  const bool first_is_diagonal = block_j(row.first) == I;
  const ReservedTiles reserved = reserve_tiles(I, kept, list, first_is_diagonal);
  int written = 0;
  for (int t = row.first; t < last; ++t) {
    const int J = block_j(t);
    if (!keep(J)) continue;  // warp-uniform
    const int slot = J * kTileSize + lane;
    int at = t - row.first;
    if constexpr (CLASSES) at = written++;
    write_tile_lane(reserved.first + at, reserved, perm[slot] >= 0 ? slot : -1, ex.masks[t * kTileSize + lane], list);
  }
}

// Atoms a warp collects (in its shared-memory `buf`) before it writes them out as whole tiles, and
// the candidates it holds for the atom filter (RowPacker::shell) after them.
constexpr int kPackBuffer = 1024;
constexpr int kPackBatch = 4;  // blocks J whose atoms RowPacker::pack loads together
constexpr int kShellBuffer = (kPackBatch + 1) * kTileSize;
// In order (RowPacker::add_batch_in_order), a batch's checks' results: a bit per candidate of its (at most kPackBatch *
// kTileSize) in shell, in the words after them.
static_assert(kPackBatch * kTileSize + kPackBatch <= kShellBuffer, "a batch's candidates and their bits fit shell");
constexpr int kPackerInts = kPackBuffer + kShellBuffer;
// Candidates closer than range - kShellWidth (nm) to block I's box are packed without the atom filter's
// check (a candidate may always be kept: only a drop needs the check). With 0.2 nm most candidates skip
// the check, and the filter removes nearly as many as when every candidate is checked.
constexpr float kShellWidth = 0.2f;

// Packs the atoms of one row I's packed tiles: the atoms of blocks J > I that lie within range of block
// I's bounding box (and, with the atom filter, of one of its atoms), except blocks that share an
// exclusion tile with I (their atoms are all in it), 32 to a tile. They collect in the warp's `buf`
// (kPackBuffer ints) and go out as whole tiles, reserved with one atomic per batch, when it fills and
// at flush(). Whole warp. CLASSES: the list is class-sorted (PairClasses).
template <typename real, bool PERIODIC, bool TRICLINIC = false, bool CLASSES = false>
struct RowPacker {
  int I;
  real4_t<real> ci, hi;  // block I's box: centre and half extents
  RowExclusions row;
  ExclusionTiles ex;
  const real4_t<real>* __restrict__ sorted_posq;
  const real4_t<real>* __restrict__ block_center;
  const real4_t<real>* __restrict__ block_half;
  SearchBox<real> box;
  real range2;
  const int* __restrict__ perm;
  TileListView list;
  int* buf;
  int fill = 0;  // atoms waiting in buf (warp-uniform)
  // Atom filter: a candidate is packed only when it lies within range of some atom of I, not merely
  // of I's box: about a fifth fewer pair slots for water, since the box's dilated edges and corners
  // hold atoms that no atom of I reaches. Only candidates in the box's outer shell (farther than
  // range - kShellWidth from it) are checked; they wait in `shell` (kShellBuffer ints after buf) and
  // are checked 32 at a time, every lane busy. Imaging a candidate once next to I's centre finds its
  // nearest image to every atom of I when I's box is compact enough for the box (row_packer); otherwise
  // (pair_image, small rectangular boxes) each (candidate, atom of I) displacement takes its minimum image.
  // Off in small triclinic boxes (the minimum image need not be the nearest there).
  bool atom_filter = false;
  bool pair_image = false;
  real4_t<real>* xi = nullptr;  // the warp's 32 atoms of block I relative to I's box centre (imaged
                                // next to it), in shared memory: one broadcast load per check
  real inner2 = 0;   // (range - kShellWidth)^2, or 0
  int* shell = nullptr;
  int shell_fill = 0;  // warp-uniform
  // Pair classes: blocks J whose class shares no bit with block I's are left out, and candidates with none
  // (add_block_atoms).
  PairClasses classes{nullptr};
  unsigned char i_class = kClassAll;

  // Row I's exclusion-tile blocks J, lane k holding the k-th (up to 32; more are looked up in ex).
  int excluded_block = -1;
  __device__ __forceinline__ void load_row_exclusions() {
    const int lane = threadIdx.x & 31;
    const int t = row.first + lane;
    excluded_block = t < row.last ? static_cast<int>(ex.keys[t] & 0xffffffffull) : -1;
  }

  // Is block J one of row I's exclusion tiles?
  __device__ __forceinline__ bool shares_exclusion_tile(int J) const {
    const int n = row.last - row.first;
    bool found = false;
    for (int k = 0; k < min(n, 32); ++k) found |= __shfl_sync(0xffffffffu, excluded_block, k) == J;
    if (n > 32 && !found) {
      const unsigned long long key = (static_cast<unsigned long long>(I) << 32) | static_cast<unsigned long long>(J);
      const int at = row.first + lower_bound_key(ex.keys + row.first, n, key);
      found = at < row.last && ex.keys[at] == key;
    }
    return found;
  }

  // Appends `value` of the lanes that `take` it to list `to` holding `count` entries; returns this lane's place
  // in `to` (where it would go, for a lane that does not take). Whole warp.
  __device__ __forceinline__ static int append(int* to, int& count, bool take, int value) {
    const int lane = threadIdx.x & 31;
    const unsigned int m = __ballot_sync(0xffffffffu, take);
    const int at = count + __popc(m & ((1u << lane) - 1u));
    if (take) to[at] = value;
    count += __popc(m);
    return at;
  }

  // Position of candidate slot j relative to I's box centre (nearest image).
  __device__ __forceinline__ Vec3<real> from_centre(const real4_t<real>& p) const {
    Vec3<real> d(p.x - ci.x, p.y - ci.y, p.z - ci.z);
    if (PERIODIC) d = box.minimum_image(d);
    return d;
  }

  // Is a candidate at d from I's centre within range of some atom of I? The atoms of I are tried in
  // 4 rounds of 8, each round spread over the block (atoms c, c+4, ..., c+28; the block is sorted
  // along its column), until every lane with a candidate has found one. Whole warp.
  template <bool IMAGE>
  __device__ __forceinline__ bool near_some_atom(const Vec3<real>& d, bool candidate) const {
    bool close = false;
#pragma unroll 1
    for (int c = 0; c < 4; ++c) {
      if (!__any_sync(0xffffffffu, candidate && !close)) break;
#pragma unroll
      for (int k = 0; k < kTileSize; k += 4) {
        const real4_t<real> a = xi[c + k];
        Vec3<real> e(d.x - a.x, d.y - a.y, d.z - a.z);
        // Both at most half a box from I's centre: each component's nearest image is e or e -+ the edge, and
        // min(|e|, L - |e|) has its length.
        if (IMAGE) {
          e.x = min(fabs(e.x), box.v.a.x - fabs(e.x));
          e.y = min(fabs(e.y), box.v.b.y - fabs(e.y));
          e.z = min(fabs(e.z), box.v.c.z - fabs(e.z));
        }
        close |= dot(e, e) < range2;
      }
    }
    return candidate && close;
  }
  __device__ __forceinline__ bool near_some_atom(const Vec3<real>& d, bool candidate) const {
    return PERIODIC && !TRICLINIC && pair_image ? near_some_atom<true>(d, candidate)
                                                : near_some_atom<false>(d, candidate);
  }

  // Checks the last (up to) 32 candidates waiting in shell against I's atoms and appends those in
  // range to buf. Whole warp.
  __device__ __forceinline__ void check_shell() {
    const int lane = threadIdx.x & 31;
    __syncwarp();  // the appends to shell are visible
    const int n = min(shell_fill, kTileSize);
    shell_fill -= n;
    const int j = lane < n ? shell[shell_fill + lane] : -1;
    Vec3<real> d(0, 0, 0);
    if (j >= 0) d = from_centre(sorted_posq[j]);
    append(buf, fill, near_some_atom(d, j >= 0), j);
    __syncwarp();  // the reads of shell are done before the next appends
  }

  // Checks the shell's candidates while 32 wait (with `all`, also the last few).
  __device__ __forceinline__ void drain_shell(bool all) {
    while (shell_fill >= kTileSize || (all && shell_fill > 0)) check_shell();
  }

  // Takes this lane's atom of a block J (slot j, original index orig, position p) when it lies within
  // range of I's box: into buf, or with the atom filter into shell when it lies in the box's outer
  // shell (drain_shell checks them later: one copy of that code per call site of pack, not per
  // unrolled call of this).
  // With pair classes, a row without LJ takes charged candidates only (p.w: the charge); the blocks J a row scans
  // are filtered by their classes before (pack), which spares an uncharged row the blocks without LJ.
  __device__ __forceinline__ void add_block_atoms(int j, int orig, const real4_t<real>& p) {
    bool near, check;
    classify(orig, p, near, check);
    append(buf, fill, near && !check, j);
    if (atom_filter) append(shell, shell_fill, check, j);
  }

  // Is this lane's atom of a block J (original index orig, position p) within range of I's box (near), and
  // must the atom filter check it (in the box's outer shell)?
  __device__ __forceinline__ void classify(int orig, const real4_t<real>& p, bool& near, bool& check) const {
    const Vec3<real> d(p.x - ci.x, p.y - ci.y, p.z - ci.z);
    const Vec3<real> half(hi.x, hi.y, hi.z);
    const real box_distance2 =
        PERIODIC ? box.template gap2_to_nearest_image<TRICLINIC>(d, half, range2) : gap2_beyond(d, half);
    near = orig >= 0 && (!CLASSES || (i_class & kClassLj) != 0 || p.w != real(0)) && box_distance2 < range2;
    check = atom_filter && near && box_distance2 >= inner2;
  }

  // pack's in-order form of add_block_atoms for a batch of blocks: the atoms kept go to buf block by block, each
  // block's in slot order (the order without the filter), so that the tiles are the same however a row's blocks
  // are split among warps (pack_together). The shell's candidates are checked per batch (the last 32 with idle
  // lanes), not carried on to the next. Rows with the atom filter only.
  __device__ __forceinline__ void add_batch_in_order(const int (&j)[kPackBatch], const int (&orig)[kPackBatch],
                                                     const real4_t<real> (&p)[kPackBatch]) {
    const int lane = threadIdx.x & 31;
    bool near[kPackBatch], check[kPackBatch];
    int entry[kPackBatch];  // this lane's candidate's place in shell
#pragma unroll
    for (int q = 0; q < kPackBatch; ++q) {
      near[q] = check[q] = false;
      if (j[q] >= 0) classify(orig[q], p[q], near[q], check[q]);
      entry[q] = append(shell, shell_fill, check[q], j[q]);
    }
    unsigned int* const kept = reinterpret_cast<unsigned int*>(shell + kPackBatch * kTileSize);
    __syncwarp();  // the appends to shell are visible
    for (int c = 0; c * kTileSize < shell_fill; ++c) {
      const int at = c * kTileSize + lane;
      const int jc = at < shell_fill ? shell[at] : -1;
      Vec3<real> d(0, 0, 0);
      if (jc >= 0) d = from_centre(sorted_posq[jc]);
      const unsigned int bits = __ballot_sync(0xffffffffu, near_some_atom(d, jc >= 0));
      if (lane == 0) kept[c] = bits;
    }
    __syncwarp();  // kept is visible
#pragma unroll
    for (int q = 0; q < kPackBatch; ++q) {
      const bool passed = !check[q] || ((kept[entry[q] / kTileSize] >> (entry[q] % kTileSize)) & 1u) != 0u;
      append(buf, fill, near[q] && passed, j[q]);
    }
    shell_fill = 0;
    __syncwarp();  // shell and kept are read before the next batch's appends
  }

  // Writes the whole tiles waiting in buf and moves the rest (< 32 atoms) to its front.
  __device__ __forceinline__ void emit_whole_tiles() {
    const int lane = threadIdx.x & 31;
    __syncwarp();  // every lane's appends to buf are visible (also to flush's read when no tile is whole)
    const int tiles = fill / kTileSize;
    if (tiles == 0) return;
    const ReservedTiles reserved = reserve_tiles(I, tiles, list);
    for (int q = 0; q < tiles; ++q)
      write_tile_lane(reserved.first + q, reserved, buf[q * kTileSize + lane], 0u, list);
    const int rest = fill - tiles * kTileSize;
    const int moved = lane < rest ? buf[tiles * kTileSize + lane] : 0;
    __syncwarp();
    if (lane < rest) buf[lane] = moved;
    fill = rest;
    __syncwarp();
  }

  // Blocks J in [first, last). The blocks whose boxes come within range are taken kBatch at a time,
  // their atoms' loads all issued before any is used (the scan is a chain of dependent loads otherwise).
  // COLLECT (at most kPackBuffer / kTileSize blocks): every atom stays in buf. IN_ORDER: a row whose atom filter
  // takes each pair's image (pair_image) goes through add_batch_in_order (the row kernels, where such a row's tiles
  // must not depend on how it is split among warps); otherwise the shell's candidates wait until 32 can be checked
  // at once.
  template <bool COLLECT = false, bool IN_ORDER = false>
  __device__ __forceinline__ void pack(int first, int last) {
    constexpr int kBatch = kPackBatch;
    const int lane = threadIdx.x & 31;
    first = max(first, I + 1);
    for (int base = first; base < last; base += 32) {
      const int Jl = base + lane;
      bool hit = Jl < last && (!CLASSES || classes.blocks_meet(I, Jl)) &&
                 blocks_in_range<real, PERIODIC, TRICLINIC>(ci, hi, block_center[Jl], block_half[Jl], box, range2);
      if (__any_sync(0xffffffffu, hit) && row.last > row.first) {
        const bool in_exclusion_tile = shares_exclusion_tile(Jl);  // whole warp (shuffles)
        hit = hit && !in_exclusion_tile;
      }
      unsigned int hits = __ballot_sync(0xffffffffu, hit);
      while (hits) {
        int j[kBatch], orig[kBatch];
        real4_t<real> p[kBatch];
#pragma unroll
        for (int q = 0; q < kBatch; ++q) {
          j[q] = -1;
          if (hits) {
            j[q] = (base + __ffs(hits) - 1) * kTileSize + lane;
            hits &= hits - 1;
          }
        }
#pragma unroll
        for (int q = 0; q < kBatch; ++q) {
          if (j[q] >= 0) {
            orig[q] = perm[j[q]];
            p[q] = sorted_posq[j[q]];
          }
        }
        if (IN_ORDER && pair_image && atom_filter) {
          add_batch_in_order(j, orig, p);
        } else {
#pragma unroll
          for (int q = 0; q < kBatch; ++q)
            if (j[q] >= 0) add_block_atoms(j[q], orig[q], p[q]);
          // A batch adds at most kBatch * 32 atoms to buf directly and shell's survivors (< (kBatch + 1) * 32).
          drain_shell(false);
        }
        if (!COLLECT && fill > kPackBuffer - (2 * kBatch + 1) * kTileSize) emit_whole_tiles();
      }
    }
  }

  // Everything still waiting: the whole tiles, then the last, partly filled one (its empty slots -1).
  __device__ __forceinline__ void flush() {
    const int lane = threadIdx.x & 31;
    drain_shell(true);
    emit_whole_tiles();
    if (fill > 0) {
      const int slot = lane < fill ? buf[lane] : -1;
      const ReservedTiles reserved = reserve_tiles(I, 1, list);
      write_tile_lane(reserved.first, reserved, slot, 0u, list);
    }
    fill = 0;
    __syncwarp();
  }
};

template <typename real, bool PERIODIC, bool TRICLINIC = false, bool CLASSES = false>
__device__ __forceinline__ RowPacker<real, PERIODIC, TRICLINIC, CLASSES> row_packer(
    int I, const ExclusionTiles& ex, const real4_t<real>* __restrict__ sorted_posq,
    const real4_t<real>* __restrict__ block_center, const real4_t<real>* __restrict__ block_half,
    const BoxVectors<real>& box, real range2, const int* __restrict__ perm, const TileListView& list, int* buf,
    real4_t<real>* atoms_i, const PairClasses& classes) {
  const int lane = threadIdx.x & 31;
  RowPacker<real, PERIODIC, TRICLINIC, CLASSES> packer{
      I, block_center[I], block_half[I], row_exclusions(I, ex), ex, sorted_posq,
      block_center, block_half, SearchBox<real>(box), range2, perm, list, buf};
  packer.load_row_exclusions();
  if (CLASSES) {
    packer.classes = classes;
    packer.i_class = classes.block[I];
  }
  // Imaging a candidate next to I's centre: a candidate within range of an atom of I lies within range + |h| of
  // the centre, so that image is exact while range + 2|h| stays below half the smallest box height (the margin
  // also covers the atoms' imaging next to the block's first atom). Beyond that, in a rectangular box, each pair
  // takes its own minimum image (the nearest there).
  const real h2 = packer.hi.x * packer.hi.x + packer.hi.y * packer.hi.y + packer.hi.z * packer.hi.z;
  const real half_height = real(0.5) * box.smallest_height();
  const real reach = sqrt(range2) + real(2) * sqrt(h2);
  packer.pair_image = PERIODIC && reach >= half_height;
  packer.atom_filter = !packer.pair_image || !TRICLINIC;
  if (packer.atom_filter) {
    const Vec3<real> x = packer.from_centre(sorted_posq[I * kTileSize + lane]);
    __syncwarp();  // the previous row's checks have read atoms_i
    atoms_i[lane] = VecTypes<real>::make4(x.x, x.y, x.z, real(0));
    __syncwarp();
    packer.xi = atoms_i;
    const real inner = sqrt(range2) - real(kShellWidth);
    packer.inner2 = inner > real(0) ? inner * inner : real(0);
    packer.shell = buf + kPackBuffer;
  }
  return packer;
}

// Blocks J of one row are scanned in segments of this many, one warp (or thread block) per (row, segment).
constexpr int kBuildSegment = 128;

// A small system's build items (tile_build_kernel, tile_build_rows_kernel), (row I, segment of kBuildSegment blocks
// J > I): one system's as BuildItems enumerates them; a replica batch's row-major, every row max_blocks /
// kBuildSegment segments (the blocks J of row I are those of I's replica, `columns_per_replica` columns each;
// `max_blocks`: the most one replica has), those past the replica's end doing nothing.
struct RowItems {
  BuildItems one;
  bool batch;
  const int* replica_rebuild;
  const int* block_replica;
  const int* block_column;
  const int* column_block_start;
  int columns_per_replica;
  __device__ __forceinline__ long long count() const {
    return batch ? static_cast<long long>(one.nblocks) * one.segments : one.count();
  }
  // Item `item`'s row I and its blocks J in [first, last) (first >= last: none); false when the item has nothing
  // to do (a batch's replica that keeps its list, or a segment past the replica's end).
  __device__ __forceinline__ bool decode(long long item, int& I, int& segment, int& first, int& last) const {
    I = static_cast<int>(item / one.segments);
    segment = static_cast<int>(item % one.segments);
    if (!batch) one.decode(item, I, segment);
    if (replica_rebuild[block_replica[I]] == 0) return false;
    first = I + 1 + segment * kBuildSegment;
    const int replica_end = column_block_start[(block_column[I] / columns_per_replica + 1) * columns_per_replica];
    last = min(replica_end, first + kBuildSegment);
    return segment == 0 || first < last;
  }
};

__device__ __forceinline__ RowItems row_items(int max_blocks, const int* __restrict__ nblocks_used, bool batch,
                                              const int* __restrict__ replica_rebuild, const TileListView& list,
                                              const int* __restrict__ block_column,
                                              const int* __restrict__ column_block_start, int columns_per_replica) {
  const int segments = (max_blocks + kBuildSegment - 1) / kBuildSegment;
  return {BuildItems{*nblocks_used, column_block_start[columns_per_replica], kBuildSegment, segments},
          batch, replica_rebuild, list.block_replica, block_column, column_block_start, columns_per_replica};
}

// One warp per (block row I, segment of blocks J > I), the items of RowItems: segment 0 copies the row's exclusion
// tiles; every segment takes the atoms of its blocks J whose bounding boxes come within range of I's, filters
// them atom by atom against I's box and packs them 32 to a tile (so tiles hold mostly interacting
// atoms). Tile order in memory varies run to run; tile contents do not. Scans every block pair: for
// small systems (tile_build_columns_kernel below is the large systems' search). At most 72 registers,
// so 7 blocks fit per SM (the compiler alone would take more).
// CLASSES: the list is class-sorted (PairClasses; a separate instantiation, so the path without is unchanged).
template <typename real, bool PERIODIC, bool TRICLINIC, bool CLASSES>
__global__ void __launch_bounds__(128, 7) tile_build_kernel(
    int max_blocks, const int* __restrict__ nblocks_used, const real4_t<real>* __restrict__ sorted_posq,
    const real4_t<real>* __restrict__ block_center,
    const real4_t<real>* __restrict__ block_half, BoxVectors<real> box, real range2, const int* __restrict__ rebuild_flag,
    const int* __restrict__ perm, const int* __restrict__ block_column, const int* __restrict__ column_block_start,
    int columns_per_replica, ExclusionTiles ex, TileListView list, const int* __restrict__ replica_rebuild,
    PairClasses classes, bool batch) {
  wait_for_prior_grid();  // may be a dependent launch (launch_kernel)
  if (*rebuild_flag == 0) return;
  __shared__ int buffer[4][kPackerInts];
  __shared__ real4_t<real> atoms_i[4][kTileSize];
  int* buf = buffer[threadIdx.x / 32];
  const RowItems items = row_items(max_blocks, nblocks_used, batch, replica_rebuild, list, block_column,
                                   column_block_start, columns_per_replica);
  const long long count = items.count();
  const long long warps = static_cast<long long>(gridDim.x) * blockDim.x / 32;
  for (long long item = (static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x) / 32; item < count;
       item += warps) {
    int I, segment, first, last;
    if (!items.decode(item, I, segment, first, last)) continue;
    RowPacker<real, PERIODIC, TRICLINIC, CLASSES> packer = row_packer<real, PERIODIC, TRICLINIC, CLASSES>(
        I, ex, sorted_posq, block_center, block_half, box, range2, perm, list, buf, atoms_i[threadIdx.x / 32], classes);
    if (segment == 0) emit_exclusion_tiles<CLASSES>(I, packer.row, ex, perm, classes, list);
    if (first >= last) continue;
    packer.template pack<false, true>(first, last);
    packer.flush();
  }
}

// Slot `slot` (-1: empty) at place p of a row's packing sequence whose tiles are `reserved` (mask 0: a packed tile).
__device__ __forceinline__ void write_packed(const ReservedTiles& reserved, int p, int slot, const TileListView& list) {
  const int t = reserved.first + p / kTileSize;
  if (t >= reserved.end) return;
  list.tile_atoms[t * kTileSize + p % kTileSize] = slot;
  list.tile_masks[t * kTileSize + p % kTileSize] = 0u;
}

// The warps of tile_build_rows_kernel's thread block, and what they share.
constexpr int kRowWarps = 4;
struct RowShare {
  int fill[kRowWarps];  // each warp's atoms
  int first, end;       // the row's packed tiles (ReservedTiles)
};
static_assert(kBuildSegment / kRowWarps * kTileSize <= kPackBuffer, "a warp's quarter of a segment fits its buf");

// A row item without the atom filter or with its per-pair images, the block's warps together: each collects the
// atoms of a quarter of the blocks J in [first, last) (RowPacker::pack<true, true>), the counts place each warp's
// atoms in the row's packing sequence (blocks J ascending, a block's atoms in slot order, cut into tiles of 32: the
// tiles pack<false, true>() and flush() write), one reservation takes the row's tiles. Whole block.
template <typename Packer>
__device__ __forceinline__ void pack_together(Packer& packer, int first, int last, RowShare& share) {
  const int warp = threadIdx.x / 32, lane = threadIdx.x & 31;
  first = max(first, packer.I + 1);
  const int quarter = (max(last - first, 0) + kRowWarps - 1) / kRowWarps;
  const int mine = first + warp * quarter;
  packer.template pack<true, true>(mine, min(last, mine + quarter));
  __syncwarp();  // buf's appends are visible to the warp
  if (lane == 0) share.fill[warp] = packer.fill;
  __syncthreads();
  int offset = 0, total = 0;
  for (int w = 0; w < kRowWarps; ++w) {
    offset += w < warp ? share.fill[w] : 0;
    total += share.fill[w];
  }
  const int tiles = (total + kTileSize - 1) / kTileSize;
  if (warp == 0 && tiles > 0) {
    const ReservedTiles reserved = reserve_tiles(packer.I, tiles, packer.list);
    if (lane == 0) share.first = reserved.first, share.end = reserved.end;
  }
  __syncthreads();
  const ReservedTiles reserved{share.first, share.end};
  for (int k = lane; k < packer.fill; k += kTileSize) write_packed(reserved, offset + k, packer.buf[k], packer.list);
  if (warp == kRowWarps - 1 && total + lane < tiles * kTileSize) write_packed(reserved, total + lane, -1, packer.list);
  packer.fill = 0;
}

// tile_build_kernel's items and tiles, one thread block of kRowWarps warps per item: in small boxes a row's blocks
// J in range are many for its one box (and each candidate in the box's shell is checked against I's atoms at its
// own minimum image), a long chain of dependent loads for one warp. A row whose atom filter images candidates next
// to I's centre (a compact block in a large enough box) is packed by the first warp alone, as tile_build_kernel
// does.
template <typename real, bool TRICLINIC, bool CLASSES>
__global__ void __launch_bounds__(128, 7) tile_build_rows_kernel(
    int max_blocks, const int* __restrict__ nblocks_used, const real4_t<real>* __restrict__ sorted_posq,
    const real4_t<real>* __restrict__ block_center,
    const real4_t<real>* __restrict__ block_half, BoxVectors<real> box, real range2,
    const int* __restrict__ rebuild_flag,
    const int* __restrict__ perm, const int* __restrict__ block_column, const int* __restrict__ column_block_start,
    int columns_per_replica, ExclusionTiles ex, TileListView list, const int* __restrict__ replica_rebuild,
    PairClasses classes, bool batch) {
  wait_for_prior_grid();  // may be a dependent launch (launch_kernel)
  if (*rebuild_flag == 0) return;
  __shared__ int buffer[kRowWarps][kPackerInts];
  __shared__ real4_t<real> atoms_i[kRowWarps][kTileSize];
  __shared__ RowShare share;
  const int warp = threadIdx.x / 32;
  const RowItems items = row_items(max_blocks, nblocks_used, batch, replica_rebuild, list, block_column,
                                   column_block_start, columns_per_replica);
  const long long count = items.count();
  for (long long item = blockIdx.x; item < count; item += gridDim.x) {
    int I, segment, first, last;
    if (!items.decode(item, I, segment, first, last)) continue;  // the same for the whole block
    RowPacker<real, true, TRICLINIC, CLASSES> packer = row_packer<real, true, TRICLINIC, CLASSES>(
        I, ex, sorted_posq, block_center, block_half, box, range2, perm, list, buffer[warp], atoms_i[warp], classes);
    if (segment == 0 && warp == kRowWarps - 1) emit_exclusion_tiles<CLASSES>(I, packer.row, ex, perm, classes, list);
    if (!packer.atom_filter || packer.pair_image) {
      pack_together(packer, first, last, share);
    } else if (warp == 0 && first < last) {
      packer.pack(first, last);
      packer.flush();
    }
    __syncthreads();  // share and the buffers are free for the next item
  }
}

// Large periodic systems in a rectangular box: one warp per block row I scans only the columns whose
// xy cells come within range (cutoff + buffer, widened by how far blocks reach out of their columns
// since the last sort) of I's column: for each row of columns (y) one or two contiguous runs of
// columns (x), hence contiguous runs of blocks. O(N) work instead of O(N^2). Every atom of the row's
// packed tiles is packed across the runs, so the row has one partly filled packed tile at most. At most
// 72 registers, so 7 blocks fit per SM (the compiler alone would take more, for 6 blocks). With pair classes each
// column is `sub_columns` (2) consecutive sub-columns (spatial_keys_kernel), a run of columns a run of them.
template <typename real, bool CLASSES>
__global__ void __launch_bounds__(128, 7) tile_build_columns_kernel(
    const int* __restrict__ nblocks_used, const real4_t<real>* __restrict__ sorted_posq,
    const real4_t<real>* __restrict__ block_center, const real4_t<real>* __restrict__ block_half, BoxVectors<real> box,
    real range2, const int* __restrict__ rebuild_flag, const int* __restrict__ perm,
    const int* __restrict__ block_column, const int* __restrict__ column_block_start, int ncx, int ncy,
    int sub_columns, const int* __restrict__ column_excess, ExclusionTiles ex, TileListView list,
    const int* __restrict__ replica_rebuild, PairClasses classes) {
  wait_for_prior_grid();  // may be a dependent launch (launch_kernel)
  if (*rebuild_flag == 0) return;
  __shared__ int buffer[4][kPackerInts];
  __shared__ real4_t<real> atoms_i[4][kTileSize];
  int* buf = buffer[threadIdx.x / 32];
  const int nblocks = *nblocks_used;
  const real range = sqrt(range2);
  const real wx = box.a.x / real(ncx), wy = box.b.y / real(ncy);
  const int nx = static_cast<int>(floor((range + real(2) * __int_as_float(column_excess[0])) / wx)) + 1;
  const int ny = static_cast<int>(floor((range + real(2) * __int_as_float(column_excess[1])) / wy)) + 1;
  const bool all_x = 2 * nx + 1 >= ncx, all_y = 2 * ny + 1 >= ncy;
  const int warps = gridDim.x * blockDim.x / 32;
  for (int I = (blockIdx.x * blockDim.x + threadIdx.x) / 32; I < nblocks; I += warps) {
    if (replica_rebuild[list.block_replica[I]] == 0) continue;  // a batch's replica that keeps its list
    RowPacker<real, true, false, CLASSES> packer = row_packer<real, true, false, CLASSES>(
        I, ex, sorted_posq, block_center, block_half, box, range2, perm, list, buf, atoms_i[threadIdx.x / 32], classes);
    emit_exclusion_tiles<CLASSES>(I, packer.row, ex, perm, classes, list);
    const int replica_columns = ncx * ncy * sub_columns;
    const int replica_first_column = block_column[I] / replica_columns * replica_columns;  // a batch's replica
    const int column = (block_column[I] - replica_first_column) / sub_columns;
    const int cx = column % ncx, cy = column / ncx;
    const int y_count = all_y ? ncy : 2 * ny + 1;
    // Two runs of blocks per row of columns (the second empty unless the window wraps), one call site
    // of pack (its code is large).
    for (int run = 0; run < 2 * y_count; ++run) {
      const int k = run >> 1;
      const bool second = run & 1;
      // Wrapped by one period at most (2 ny + 1 < ncy and 2 nx + 1 < ncx unless all_y / all_x): no
      // integer division (costly in this loop).
      int y = k;
      if (!all_y) {
        y = cy - ny + k;
        if (y < 0) y += ncy;
        else if (y >= ncy) y -= ncy;
      }
      const int row_start = replica_first_column + y * ncx * sub_columns;
      int first_column = 0, end_column = 0;  // [first, end) of row y
      if (all_x) {
        if (!second) end_column = ncx;
      } else {
        const int x0 = cx - nx, x1 = cx + nx;  // inclusive, may wrap
        if (x0 >= 0 && x1 < ncx) {
          if (!second) first_column = x0, end_column = x1 + 1;
        } else {
          const int a0 = x0 < 0 ? x0 + ncx : x0, a1 = x1 >= ncx ? x1 - ncx : x1;  // [0, a1] and [a0, ncx)
          if (second) first_column = a0, end_column = ncx;
          else end_column = a1 + 1;
        }
      }
      if (end_column > first_column)
        packer.pack(column_block_start[row_start + first_column * sub_columns],
                    column_block_start[row_start + end_column * sub_columns]);
    }
    packer.flush();
  }
}

// A batch, after the builds: the exclusive prefix sum of the replicas' tile counts (each at most its region), for
// the tile kernel (tile_start[replicas]: the total). One block; nothing when no replica rebuilt.
__global__ void __launch_bounds__(kScanThreads) tile_prefix_kernel(const int* __restrict__ rebuild_flag,
                                                                   ReplicaLists lists) {
  wait_for_prior_grid();  // may be a dependent launch (launch_kernel)
  if (*rebuild_flag == 0) return;
  block_exclusive_scan(
      lists.replicas, [&](int r) { return min(lists.tile_count[r], lists.region); }, lists.tile_start);
}

}  // namespace mdsim::cuda
