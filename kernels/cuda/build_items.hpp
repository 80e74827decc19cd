// The work items of one system's tile-list build (tile_build_kernel, neighbor_list.cuh): plain arithmetic, host and
// device alike (the host sizes the launch with it; tests/kernels/cuda/test_build_items.cpp checks it on the CPU).
#pragma once

#include "physics/vec3.hpp"  // MDSIM_HD

namespace mdsim::cuda {

// Who takes an item of a small system's build: one warp (tile_build_kernel), or the four warps of a thread block
// together (tile_build_rows_kernel: a quarter of the item's blocks J each, the same tiles). Automatic: the block for
// a system alone whose rows mostly go without the atom filter (small boxes: a row packs every atom of its blocks in
// range), the warp otherwise (NeighborList::rows_together).
enum class RowBuild { Automatic, Warp, Block };

// The (row, segment) items of one system's build, segment-major: segment 0 of every row (its exclusion tiles and
// nearest blocks, the heaviest items, first), then segment k of the rows I whose blocks J > I reach into it
// (I + 1 + k segment < end, the blocks' end). Only items that hold blocks are enumerated.
struct BuildItems {
  int nblocks, end, segment, segments;
  MDSIM_HD int rows_with(int k) const {
    return k == 0 ? nblocks : (end - 1 - k * segment > 0 ? end - 1 - k * segment : 0);
  }
  MDSIM_HD long long count() const {
    long long n = 0;
    for (int k = 0; k < segments; ++k) n += rows_with(k);
    return n;
  }
  // Item `item` (< count()) as row I and segment k.
  MDSIM_HD void decode(long long item, int& I, int& k) const {
    k = 0;
    while (item >= rows_with(k)) item -= rows_with(k++);
    I = static_cast<int>(item);
  }
};

}  // namespace mdsim::cuda
