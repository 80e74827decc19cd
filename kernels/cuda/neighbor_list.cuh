// Tile neighbour list kernels (included by cuda_forces.cu only).
//
// Atoms are sorted spatially (Morton order of their cell) and cut into blocks of 32. A tile pairs the
// 32 atoms of block I with 32 "slot" atoms: either block I itself (the diagonal tile, pairs j > i), or
// atoms of blocks J > I that lie within cutoff + buffer of I's bounding box, packed 32 to a tile
// regardless of their block (GPU neighbour lists pack "interacting atoms" this way; it keeps most
// computed pairs within the cutoff). Each tile carries 32 exclusion masks (bit k of mask l: pair
// (I*32+l, slot k) is skipped): empty slots, padding atoms, the diagonal's lower triangle, and every
// excluded/exception pair of the System (found in per-atom exclusion lists when the tile is written).
//
// The rebuild kernels all read `rebuild_flag` first and return at once when it is 0, so the list is
// rebuilt on the device only when needed, without the host looking.
#pragma once

#include "kernels/cuda/device_types.cuh"

namespace mdsim::cuda {

constexpr int kTileSize = 32;

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
__global__ void spatial_keys_kernel(int n, const double4_16a* __restrict__ pos, bool periodic, BoxVectors<double> box,
                                    int ncx, int ncy, unsigned long long* __restrict__ keys, int* __restrict__ values) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const double4_16a p = pos[i];
  unsigned long long key;
  if (periodic) {
    // Reduced triclinic form: fractional coordinates from c, then b, then a, wrapped into [0, 1).
    double z = p.z / box.c.z;
    double y = (p.y - z * box.c.y) / box.b.y;
    double x = (p.x - z * box.c.x - y * box.b.x) / box.a.x;
    x -= floor(x);
    y -= floor(y);
    z -= floor(z);
    const int cx = min(ncx - 1, static_cast<int>(x * ncx));
    const int cy = min(ncy - 1, static_cast<int>(y * ncy));
    const double zq = min(z * 4294967296.0, 4294967295.0);
    key = (static_cast<unsigned long long>(cy * ncx + cx) << 32) | static_cast<unsigned long long>(zq);
  } else {
    constexpr double kFrameLow = -128.0, kFrameSize = 256.0;  // nm
    key = morton_code((p.x - kFrameLow) / kFrameSize, (p.y - kFrameLow) / kFrameSize, (p.z - kFrameLow) / kFrameSize);
  }
  keys[i] = key;
  values[i] = i;
}

// Atoms per column of the sorted keys (counts zeroed before).
__global__ void column_count_kernel(int n, const unsigned long long* __restrict__ sorted_keys, int* __restrict__ counts) {
  const int u = blockIdx.x * blockDim.x + threadIdx.x;
  if (u < n) atomicAdd(&counts[sorted_keys[u] >> 32], 1);
}

// Start of each column in the sorted order, unpadded and padded to whole blocks; the number of
// blocks in use. Columns are few (≈ N / 100 at most): one thread does it.
__global__ void column_scan_kernel(int ncolumns, const int* __restrict__ counts, int* __restrict__ raw_start,
                                   int* __restrict__ padded_start, int* __restrict__ nblocks_used) {
  if (blockIdx.x != 0 || threadIdx.x != 0) return;
  int raw = 0, padded = 0;
  for (int c = 0; c < ncolumns; ++c) {
    raw_start[c] = raw;
    padded_start[c] = padded;
    raw += counts[c];
    padded += (counts[c] + kTileSize - 1) / kTileSize * kTileSize;
  }
  *nblocks_used = padded / kTileSize;
}

// After sorting: sorted slot of every atom (its column's padded start + its rank in the column);
// slots left over are padding (perm = -1, preset by the caller).
__global__ void scatter_sorted_kernel(int n, const unsigned long long* __restrict__ sorted_keys,
                                      const int* __restrict__ sorted_values, const int* __restrict__ raw_start,
                                      const int* __restrict__ padded_start, int* __restrict__ perm) {
  const int u = blockIdx.x * blockDim.x + threadIdx.x;
  if (u >= n) return;
  const int c = static_cast<int>(sorted_keys[u] >> 32);
  perm[padded_start[c] + (u - raw_start[c])] = sorted_values[u];
}

// Layout of the evaluator's int flags: [0] rebuild, [1] tile count, [2] overflow, [3] builds so far,
// [4], [5]: the farthest any block's atoms reach outside their column in x and y since the last sort
// (nm, float bits; non-negative floats order as their bit patterns).
constexpr int kColumnExcessFlag = 4;
constexpr int kNumFlags = 6;

// Block range of every column after a sort: blocks [start[c], start[c + 1]) hold column c; and the
// column of every block in use.
__global__ void column_blocks_kernel(int ncolumns, const int* __restrict__ padded_start, const int* __restrict__ nblocks_used,
                                     int* __restrict__ column_block_start, int* __restrict__ block_column) {
  const int c = blockIdx.x * blockDim.x + threadIdx.x;
  if (c > ncolumns) return;
  const int begin = c < ncolumns ? padded_start[c] / kTileSize : *nblocks_used;
  column_block_start[c] = begin;
  if (c == ncolumns) return;
  const int end = c + 1 < ncolumns ? padded_start[c + 1] / kTileSize : *nblocks_used;
  for (int b = begin; b < end; ++b) block_column[b] = c;
}

// Per-atom parameters in sorted order (zero for padding); asks for a list rebuild.
template <typename real>
__global__ void sorted_params_kernel(int npad, const int* __restrict__ perm, const real2_t<real>* __restrict__ params,
                                     real2_t<real>* __restrict__ sorted_params, int* __restrict__ rebuild_flag) {
  const int s = blockIdx.x * blockDim.x + threadIdx.x;
  if (s == 0) {
    *rebuild_flag = 1;
    rebuild_flag[kColumnExcessFlag] = 0;  // new columns: no block reaches out of its column yet
    rebuild_flag[kColumnExcessFlag + 1] = 0;
  }
  if (s >= npad) return;
  const int orig = perm[s];
  sorted_params[s] = orig >= 0 ? params[orig] : VecTypes<real>::make2(real(0), real(0));
}

// Per evaluation: positions (double, original order) → posq in original and sorted order; flags a
// rebuild when an atom has moved more than half the buffer since the last build.
template <typename real>
__global__ void prepare_positions_kernel(int npad, const double4_16a* __restrict__ pos,
                                         const real* __restrict__ charge, const int* __restrict__ perm,
                                         real4_t<real>* __restrict__ posq, real4_t<real>* __restrict__ sorted_posq,
                                         const double4_16a* __restrict__ pos_at_build, double half_buffer2,
                                         int* __restrict__ rebuild_flag) {
  const int s = blockIdx.x * blockDim.x + threadIdx.x;
  if (s >= npad) return;
  int orig = perm[s];
  const bool real_atom = orig >= 0;
  if (!real_atom) {
    // Padding copies its block's first atom (so the block's bounding box does not grow), charge 0;
    // blocks past the last column are empty and untouched.
    orig = perm[s & ~(kTileSize - 1)];
    if (orig < 0) return;
  }
  const double4_16a p = pos[orig];
  const real q = real_atom ? charge[orig] : real(0);
  const real4_t<real> v = VecTypes<real>::make4(real(p.x), real(p.y), real(p.z), q);
  sorted_posq[s] = v;
  if (!real_atom) return;
  posq[orig] = v;
  const double4_16a b = pos_at_build[orig];
  const double dx = p.x - b.x, dy = p.y - b.y, dz = p.z - b.z;
  if (dx * dx + dy * dy + dz * dz > half_buffer2) *rebuild_flag = 1;  // benign race: all write 1
}

// One warp per block: bounding box of the block's atoms (imaged next to its first atom), and the
// positions the next displacement check compares against.
template <typename real, bool PERIODIC>
__global__ void block_bounds_kernel(const int* __restrict__ nblocks_used, const real4_t<real>* __restrict__ sorted_posq,
                                    BoxVectors<real> box, const int* __restrict__ rebuild_flag,
                                    real4_t<real>* __restrict__ block_center, real4_t<real>* __restrict__ block_half,
                                    const int* __restrict__ perm, const double4_16a* __restrict__ pos,
                                    double4_16a* __restrict__ pos_at_build, int* __restrict__ tile_count,
                                    int* __restrict__ overflow, int* __restrict__ build_count,
                                    const int* __restrict__ block_column, int ncx, int ncy,
                                    int* __restrict__ column_excess) {
  if (*rebuild_flag == 0) return;
  const int warp = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
  const int lane = threadIdx.x & 31;
  if (warp == 0 && lane == 0) {
    *tile_count = 0;
    *overflow = 0;
    *build_count += 1;
  }
  if (warp >= *nblocks_used) return;
  const int s = warp * kTileSize + lane;
  const real4_t<real> p = sorted_posq[s];
  Vec3<real> x = xyz(p);
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
    // window of columns by the largest such distance since the last sort.
    const int column = block_column[warp];
    const real wx = box.a.x / real(ncx), wy = box.b.y / real(ncy);
    const real center_x = (real(column % ncx) + real(0.5)) * wx, center_y = (real(column / ncx) + real(0.5)) * wy;
    real dx = x.x - center_x, dy = x.y - center_y;
    dx -= box.a.x * round(dx / box.a.x);
    dy -= box.b.y * round(dy / box.b.y);
    real ex = max(real(0), abs(dx) - real(0.5) * wx), ey = max(real(0), abs(dy) - real(0.5) * wy);
    for (int off = 16; off > 0; off >>= 1) {
      ex = max(ex, __shfl_xor_sync(0xffffffffu, ex, off));
      ey = max(ey, __shfl_xor_sync(0xffffffffu, ey, off));
    }
    if (lane == 0) {
      atomicMax(&column_excess[0], __float_as_int(static_cast<float>(ex) * 1.0001f + 1e-6f));
      atomicMax(&column_excess[1], __float_as_int(static_cast<float>(ey) * 1.0001f + 1e-6f));
    }
  }
  if (lane == 0) {
    block_center[warp] = VecTypes<real>::make4(real(0.5) * (lo.x + hi.x), real(0.5) * (lo.y + hi.y),
                                               real(0.5) * (lo.z + hi.z), real(0));
    block_half[warp] = VecTypes<real>::make4(real(0.5) * (hi.x - lo.x), real(0.5) * (hi.y - lo.y),
                                             real(0.5) * (hi.z - lo.z), real(0));
  }
  const int orig = perm[s];
  if (orig >= 0) pos_at_build[orig] = pos[orig];
}

template <typename real, bool PERIODIC>
__device__ __forceinline__ bool blocks_in_range(const real4_t<real>& ci, const real4_t<real>& hi,
                                                const real4_t<real>& cj, const real4_t<real>& hj,
                                                const BoxVectors<real>& box, real range2) {
  Vec3<real> d(cj.x - ci.x, cj.y - ci.y, cj.z - ci.z);
  if (PERIODIC) d = box.minimum_image(d);
  const real dx = max(real(0), abs(d.x) - hi.x - hj.x);
  const real dy = max(real(0), abs(d.y) - hi.y - hj.y);
  const real dz = max(real(0), abs(d.z) - hi.z - hj.z);
  return dx * dx + dy * dy + dz * dz < range2;
}

struct ExclusionView {
  const unsigned long long* window;  // per atom: bit (b - a + 32) set when b is excluded
  const int* start;                  // CSR of partners outside the window
  const int* partner;
  const int2* range;                 // [min, max] of those partners (lo > hi: none)
};

struct TileListView {
  int* tile_count;
  int* overflow;
  int capacity;
  int* tile_row;             // block I of each tile
  int* tile_atoms;           // 32 sorted atom indices per tile (-1 = empty slot)
  unsigned int* tile_masks;  // 32 masks per tile: bit k of mask l = pair (I*32+l, slot k) is skipped
};

// Writes one tile of row I holding the sorted atoms in `slot` (this lane's entry; -1 = empty); its
// exclusion masks are written by tile_masks_kernel. Called by a whole warp.
__device__ __forceinline__ void emit_tile(int I, int slot, const TileListView& list) {
  const int lane = threadIdx.x & 31;
  int t = 0;
  if (lane == 0) t = atomicAdd(list.tile_count, 1);
  t = __shfl_sync(0xffffffffu, t, 0);
  if (t >= list.capacity) {
    if (lane == 0) atomicExch(list.overflow, 1);
    return;
  }
  if (lane == 0) list.tile_row[t] = I;
  list.tile_atoms[t * kTileSize + lane] = slot;
}

// One warp per tile (grid-stride), after tile_build_kernel: the tile's 32 exclusion masks. Bit k of
// lane l's mask skips the pair (atom I*32+l, slot k): padding, excluded pairs, and in the diagonal
// tile (slots = block I itself) the pairs with slot <= i. Separate from the build so that this work,
// most of a rebuild, is spread over every SM instead of the few warps that scan the busiest rows.
__global__ void __launch_bounds__(256) tile_masks_kernel(const int* __restrict__ rebuild_flag,
                                                          const int* __restrict__ perm, ExclusionView excl,
                                                          TileListView list) {
  if (*rebuild_flag == 0) return;
  const int lane = threadIdx.x & 31;
  const int tiles = min(*list.tile_count, list.capacity);
  const int warps = gridDim.x * blockDim.x / 32;
  for (int t = (blockIdx.x * blockDim.x + threadIdx.x) / 32; t < tiles; t += warps) {
    const int I = list.tile_row[t];
    const int i = I * kTileSize + lane;
    const int a = perm[i];  // original index of this lane's i-atom (-1: padding)
    const int slot = list.tile_atoms[t * kTileSize + lane];
    const int slot_orig = slot >= 0 ? perm[slot] : -1;
    const bool diagonal = __any_sync(0xffffffffu, slot >= 0 && slot / kTileSize == I);  // slots = block I
    // Is (original-order) atom b excluded from atom a's pair sum? Partners within [a-32, a+31] (nearly
    // all: bonded neighbours sit close in the file) are bits of a 64-bit window mask; the rest are in a
    // short sorted CSR list, bounded by [lo, hi] so most pairs never read it. This lane's window and
    // bounds are loaded once for the tile.
    const unsigned long long window = a >= 0 ? excl.window[a] : 0ull;
    const int2 outside = a >= 0 ? excl.range[a] : make_int2(1, 0);
    unsigned int mask = 0;
    for (int k = 0; k < kTileSize; ++k) {
      const int b = __shfl_sync(0xffffffffu, slot_orig, k);
      bool skip = a < 0 || b < 0 || (diagonal && k <= lane);
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
    list.tile_masks[t * kTileSize + lane] = mask;
  }
}

// Packs the atoms of blocks J in [first, last), J > I, that lie within range of block I's box into
// tiles of row I (32 at a time; `fill` atoms wait in the warp's `buf`, 2 x 32 ints). Whole warp.
template <typename real, bool PERIODIC>
__device__ __forceinline__ void pack_blocks(int I, int first, int last, const real4_t<real>& ci, const real4_t<real>& hi,
                                            const real4_t<real>* __restrict__ sorted_posq,
                                            const real4_t<real>* __restrict__ block_center,
                                            const real4_t<real>* __restrict__ block_half, const BoxVectors<real>& box,
                                            real range2, const int* __restrict__ perm, int* buf, int& fill,
                                            const TileListView& list) {
  const int lane = threadIdx.x & 31;
  first = max(first, I + 1);
  for (int base = first; base < last; base += 32) {
    const int Jl = base + lane;
    const bool hit = Jl < last && blocks_in_range<real, PERIODIC>(ci, hi, block_center[Jl], block_half[Jl], box, range2);
    unsigned int hits = __ballot_sync(0xffffffffu, hit);
    while (hits) {
      const int J = base + __ffs(hits) - 1;
      hits &= hits - 1;
      const int j = J * kTileSize + lane;
      bool near = false;
      if (perm[j] >= 0) {
        const real4_t<real> p = sorted_posq[j];
        Vec3<real> d(p.x - ci.x, p.y - ci.y, p.z - ci.z);
        if (PERIODIC) d = box.minimum_image(d);
        const real dx = max(real(0), abs(d.x) - hi.x);
        const real dy = max(real(0), abs(d.y) - hi.y);
        const real dz = max(real(0), abs(d.z) - hi.z);
        near = dx * dx + dy * dy + dz * dz < range2;
      }
      const unsigned int m = __ballot_sync(0xffffffffu, near);
      if (near) buf[fill + __popc(m & ((1u << lane) - 1u))] = j;
      fill += __popc(m);
      __syncwarp();
      if (fill >= kTileSize) {
        emit_tile(I, buf[lane], list);
        __syncwarp();
        const int rest = fill - kTileSize;
        if (lane < rest) buf[lane] = buf[kTileSize + lane];
        fill = rest;
        __syncwarp();
      }
    }
  }
}

// Blocks J of one row are scanned in segments of this many, one warp per (row, segment).
constexpr int kBuildSegment = 128;

// One warp per (block row I, segment of blocks J > I): segment 0 writes the diagonal tile; every
// segment takes the atoms of its blocks J whose bounding boxes come within range of I's, filters them
// atom by atom against I's box and packs them 32 to a tile (so tiles hold mostly interacting atoms).
// Tile order in memory varies run to run; tile contents do not. Scans every block pair: for small
// systems (tile_build_columns_kernel below is the large systems' search).
template <typename real, bool PERIODIC>
__global__ void __launch_bounds__(128) tile_build_kernel(
    int max_blocks, const int* __restrict__ nblocks_used, const real4_t<real>* __restrict__ sorted_posq,
    const real4_t<real>* __restrict__ block_center,
    const real4_t<real>* __restrict__ block_half, BoxVectors<real> box, real range2, const int* __restrict__ rebuild_flag,
    const int* __restrict__ perm, TileListView list) {
  if (*rebuild_flag == 0) return;
  __shared__ int buffer[4][2 * kTileSize];
  const int lane = threadIdx.x & 31;
  int* buf = buffer[threadIdx.x / 32];
  const int nblocks = *nblocks_used;
  const int segments = (max_blocks + kBuildSegment - 1) / kBuildSegment;
  const long long items = static_cast<long long>(nblocks) * segments;
  const long long warps = static_cast<long long>(gridDim.x) * blockDim.x / 32;
  for (long long item = (static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x) / 32; item < items;
       item += warps) {
    const int I = static_cast<int>(item / segments);
    const int segment = static_cast<int>(item % segments);
    const int first = I + 1 + segment * kBuildSegment;
    const int last = min(nblocks, first + kBuildSegment);
    if (segment == 0) {
      const int own = I * kTileSize + lane;
      emit_tile(I, perm[own] >= 0 ? own : -1, list);
    }
    if (first >= last) continue;
    int fill = 0;  // atoms waiting in buf (warp-uniform)
    pack_blocks<real, PERIODIC>(I, first, last, block_center[I], block_half[I], sorted_posq, block_center, block_half,
                                box, range2, perm, buf, fill, list);
    if (fill > 0) emit_tile(I, lane < fill ? buf[lane] : -1, list);
    __syncwarp();
  }
}

// Large periodic systems in a rectangular box: one warp per block row I scans only the columns whose
// xy cells come within range (cutoff + buffer, widened by how far blocks reach out of their columns
// since the last sort) of I's column: for each row of columns (y) one or two contiguous runs of
// columns (x), hence contiguous runs of blocks. O(N) work instead of O(N^2). Every atom of the row's
// tiles is packed across the runs, so the row has one partly filled tile at most besides the diagonal.
template <typename real>
__global__ void __launch_bounds__(128) tile_build_columns_kernel(
    const int* __restrict__ nblocks_used, const real4_t<real>* __restrict__ sorted_posq,
    const real4_t<real>* __restrict__ block_center, const real4_t<real>* __restrict__ block_half, BoxVectors<real> box,
    real range2, const int* __restrict__ rebuild_flag, const int* __restrict__ perm,
    const int* __restrict__ block_column, const int* __restrict__ column_block_start, int ncx, int ncy,
    const int* __restrict__ column_excess, TileListView list) {
  if (*rebuild_flag == 0) return;
  __shared__ int buffer[4][2 * kTileSize];
  const int lane = threadIdx.x & 31;
  int* buf = buffer[threadIdx.x / 32];
  const int nblocks = *nblocks_used;
  const real range = sqrt(range2);
  const real wx = box.a.x / real(ncx), wy = box.b.y / real(ncy);
  const int nx = static_cast<int>(floor((range + real(2) * __int_as_float(column_excess[0])) / wx)) + 1;
  const int ny = static_cast<int>(floor((range + real(2) * __int_as_float(column_excess[1])) / wy)) + 1;
  const bool all_x = 2 * nx + 1 >= ncx, all_y = 2 * ny + 1 >= ncy;
  const int warps = gridDim.x * blockDim.x / 32;
  for (int I = (blockIdx.x * blockDim.x + threadIdx.x) / 32; I < nblocks; I += warps) {
    const int own = I * kTileSize + lane;
    emit_tile(I, perm[own] >= 0 ? own : -1, list);
    const real4_t<real> ci = block_center[I], hi = block_half[I];
    const int column = block_column[I];
    const int cx = column % ncx, cy = column / ncx;
    int fill = 0;
    const int y_count = all_y ? ncy : 2 * ny + 1;
    for (int k = 0; k < y_count; ++k) {
      const int y = all_y ? k : ((cy - ny + k) % ncy + ncy) % ncy;
      const int row_start = y * ncx;
      if (all_x) {
        pack_blocks<real, true>(I, column_block_start[row_start], column_block_start[row_start + ncx], ci, hi,
                                sorted_posq, block_center, block_half, box, range2, perm, buf, fill, list);
        continue;
      }
      const int x0 = cx - nx, x1 = cx + nx;  // inclusive, may wrap
      if (x0 >= 0 && x1 < ncx) {
        pack_blocks<real, true>(I, column_block_start[row_start + x0], column_block_start[row_start + x1 + 1], ci, hi,
                                sorted_posq, block_center, block_half, box, range2, perm, buf, fill, list);
      } else {
        const int a0 = (x0 % ncx + ncx) % ncx, a1 = (x1 % ncx + ncx) % ncx;  // two runs: [0, a1] and [a0, ncx)
        pack_blocks<real, true>(I, column_block_start[row_start], column_block_start[row_start + a1 + 1], ci, hi,
                                sorted_posq, block_center, block_half, box, range2, perm, buf, fill, list);
        pack_blocks<real, true>(I, column_block_start[row_start + a0], column_block_start[row_start + ncx], ci, hi,
                                sorted_posq, block_center, block_half, box, range2, perm, buf, fill, list);
      }
    }
    if (fill > 0) emit_tile(I, lane < fill ? buf[lane] : -1, list);
    __syncwarp();
  }
}

}  // namespace mdsim::cuda
