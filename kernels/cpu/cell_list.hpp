// Cell list for the CPU reference platform's pair loops: atoms binned into cells of width at least
// cutoff/k along each (fractional) axis, so that every pair closer than the cutoff lies in cells at
// most k apart. Works for open boundaries (cells over the bounding box) and for periodic boxes in
// OpenMM's reduced triclinic form (cells over the fractional coordinates, wrapped). Small boxes, in
// which several offsets wrap onto the same cell, are handled by de-duplicating the neighbour cells.
// Pairs found this way are candidates only: callers still apply the cutoff to the minimum-image
// distance.
#pragma once

#include <vector>

#include "physics/pbc.hpp"
#include "physics/vec3.hpp"

namespace mdsim {

struct CellList {
  int dims[3] = {1, 1, 1};
  std::vector<int> cell_start;  // size num_cells()+1: atoms of cell c are atoms[cell_start[c] .. cell_start[c+1])
  std::vector<int> atoms;       // atom indices ordered by cell
  // For each cell c, the distinct cells c2 >= c adjacent to it (c itself included): visiting pairs
  // (c, c2) from these lists, with j > i inside c, meets every candidate pair exactly once.
  std::vector<std::vector<int>> upper_neighbors;
  // Positions in cell order (atoms[p] is at sorted_positions[p]); in a periodic box wrapped into
  // the unit cell (fractional coordinates in [0, 1)).
  std::vector<Vec3d> sorted_positions;
  // Periodic boxes with at least 2k+1 cells along every axis: each neighbour cell is reached by a
  // single offset, so the periodic image of an atom of cell c2 seen from cell c is
  // sorted_positions + upper_shifts[c][n] (nm), and no per-pair minimum-image wrapping is needed.
  // Otherwise (small boxes) shifts_exact is false and callers wrap each pair themselves.
  bool shifts_exact = false;
  std::vector<std::vector<Vec3d>> upper_shifts;

  int num_cells() const { return dims[0] * dims[1] * dims[2]; }

  // box == nullptr: open boundaries. cutoff_nm <= 0 or infinite: a single cell (all pairs).
  void build(const std::vector<Vec3d>& positions_nm, const Boxd* box, double cutoff_nm, int subdivision = 2);
};

}  // namespace mdsim
