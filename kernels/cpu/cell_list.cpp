#include "kernels/cpu/cell_list.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

#include "kernels/cpu/cpu_pme.hpp"

namespace mdsim {

namespace {

// Periodic: cells over the fractional coordinates; `wrapped` holds the positions wrapped into the unit cell.
void bin_periodic(const std::vector<Vec3d>& positions_nm, const Boxd& box, double cutoff_nm, int k, int (&dims)[3],
                  std::vector<int>& cell_of, std::vector<Vec3d>& wrapped) {
  const int n = static_cast<int>(positions_nm.size());
  // Heights of the box perpendicular to each pair of box vectors.
  const double volume = box.volume();
  const double heights[3] = {volume / norm(cross(box.b, box.c)), volume / norm(cross(box.a, box.c)),
                             volume / norm(cross(box.a, box.b))};
  for (int d = 0; d < 3; ++d) dims[d] = std::max(1, static_cast<int>(std::floor(heights[d] * k / cutoff_nm)));
  Vec3d recip[3];
  reciprocal_box_vectors(box, recip);
  for (int i = 0; i < n; ++i) {
    const Vec3d& x = positions_nm[static_cast<size_t>(i)];
    int c[3];
    Vec3d& w = wrapped[static_cast<size_t>(i)];
    const Vec3d* box_vectors[3] = {&box.a, &box.b, &box.c};
    for (int d = 0; d < 3; ++d) {
      double s = x.x * recip[0][d] + x.y * recip[1][d] + x.z * recip[2][d];
      const double whole = std::floor(s);
      s -= whole;
      w -= *box_vectors[d] * whole;
      c[d] = std::min(dims[d] - 1, static_cast<int>(s * dims[d]));
    }
    cell_of[static_cast<size_t>(i)] = (c[0] * dims[1] + c[1]) * dims[2] + c[2];
  }
}

// Open boundaries: cells over the bounding box, no more of them than a few per atom.
void bin_open(const std::vector<Vec3d>& positions_nm, double cutoff_nm, int k, int (&dims)[3],
              std::vector<int>& cell_of) {
  const int n = static_cast<int>(positions_nm.size());
  Vec3d lo = positions_nm[0], hi = positions_nm[0];
  for (const Vec3d& x : positions_nm)
    for (int d = 0; d < 3; ++d) {
      lo[d] = std::min(lo[d], x[d]);
      hi[d] = std::max(hi[d], x[d]);
    }
  double width = cutoff_nm / k;
  const double max_cells = std::max(27.0, 4.0 * n);
  for (;;) {
    double total = 1.0;
    for (int d = 0; d < 3; ++d) {
      dims[d] = std::max(1, static_cast<int>(std::floor((hi[d] - lo[d]) / width)));
      total *= dims[d];
    }
    if (total <= max_cells) break;
    width *= 1.25;
  }
  for (int i = 0; i < n; ++i) {
    const Vec3d& x = positions_nm[static_cast<size_t>(i)];
    int c[3];
    for (int d = 0; d < 3; ++d) {
      const double extent = hi[d] - lo[d];
      const double s = extent > 0.0 ? (x[d] - lo[d]) / extent : 0.0;
      c[d] = std::min(dims[d] - 1, std::max(0, static_cast<int>(s * dims[d])));
    }
    cell_of[static_cast<size_t>(i)] = (c[0] * dims[1] + c[1]) * dims[2] + c[2];
  }
}

// Counting sort of the atoms by cell.
void sort_by_cell(CellList& cl, const std::vector<int>& cell_of, const std::vector<Vec3d>& wrapped) {
  const int n = static_cast<int>(cell_of.size());
  const int ncell = cl.num_cells();
  std::vector<int>& cell_start = cl.cell_start;
  std::vector<int>& atoms = cl.atoms;
  cell_start.assign(static_cast<size_t>(ncell) + 1, 0);
  for (int i = 0; i < n; ++i) ++cell_start[static_cast<size_t>(cell_of[static_cast<size_t>(i)]) + 1];
  for (int c = 0; c < ncell; ++c) cell_start[static_cast<size_t>(c) + 1] += cell_start[static_cast<size_t>(c)];
  atoms.assign(static_cast<size_t>(n), 0);
  std::vector<int> fill(cell_start.begin(), cell_start.end() - 1);
  for (int i = 0; i < n; ++i) {
    int& next = fill[static_cast<size_t>(cell_of[static_cast<size_t>(i)])];
    atoms[static_cast<size_t>(next++)] = i;
  }
  cl.sorted_positions.resize(static_cast<size_t>(n));
  for (int p = 0; p < n; ++p)
    cl.sorted_positions[static_cast<size_t>(p)] = wrapped[static_cast<size_t>(atoms[static_cast<size_t>(p)])];
}

// The cells c2 >= c (c = cell (cx, cy, cz)) within `reach` cells along each axis, each with the image
// shift of the offset that reached it; a cell may appear several times (small periodic boxes).
void collect_upper_cells(const int (&dims)[3], const Boxd* box, int reach, int cx, int cy, int cz,
                         std::vector<std::pair<int, Vec3d>>& found) {
  const int c = (cx * dims[1] + cy) * dims[2] + cz;
  found.clear();
  for (int ox = -reach; ox <= reach; ++ox)
    for (int oy = -reach; oy <= reach; ++oy)
      for (int oz = -reach; oz <= reach; ++oz) {
        int q[3] = {cx + ox, cy + oy, cz + oz};
        bool inside = true;
        Vec3d shift;
        for (int d = 0; d < 3; ++d) {
          if (box != nullptr) {
            // number of whole boxes the offset crosses: the image is shifted by that many
            const int wraps = (q[d] >= 0 ? q[d] / dims[d] : -((-q[d] + dims[d] - 1) / dims[d]));
            q[d] -= wraps * dims[d];
            const Vec3d& v = d == 0 ? box->a : (d == 1 ? box->b : box->c);
            shift += v * double(wraps);
          } else if (q[d] < 0 || q[d] >= dims[d]) {
            inside = false;
          }
        }
        if (!inside) continue;
        const int c2 = (q[0] * dims[1] + q[1]) * dims[2] + q[2];
        if (c2 >= c) found.emplace_back(c2, shift);
      }
}

// Neighbour cells (only c2 >= c kept), in increasing order, each once.
void find_upper_neighbors(CellList& cl, const Boxd* box, int reach) {
  const int ncell = cl.num_cells();
  cl.upper_neighbors.assign(static_cast<size_t>(ncell), {});
  cl.upper_shifts.assign(static_cast<size_t>(ncell), {});
  std::vector<std::pair<int, Vec3d>> found;
  for (int cx = 0; cx < cl.dims[0]; ++cx)
    for (int cy = 0; cy < cl.dims[1]; ++cy)
      for (int cz = 0; cz < cl.dims[2]; ++cz) {
        const int c = (cx * cl.dims[1] + cy) * cl.dims[2] + cz;
        collect_upper_cells(cl.dims, box, reach, cx, cy, cz, found);
        std::sort(found.begin(), found.end(), [](const auto& l, const auto& r) { return l.first < r.first; });
        auto& list = cl.upper_neighbors[static_cast<size_t>(c)];
        auto& shifts = cl.upper_shifts[static_cast<size_t>(c)];
        for (const auto& [c2, shift] : found) {
          if (!list.empty() && list.back() == c2) continue;  // reached by several offsets (small box)
          list.push_back(c2);
          shifts.push_back(shift);
        }
      }
}

}  // namespace

void CellList::build(const std::vector<Vec3d>& positions_nm, const Boxd* box, double cutoff_nm, int subdivision) {
  const int n = static_cast<int>(positions_nm.size());
  const bool single = !(cutoff_nm > 0.0) || !std::isfinite(cutoff_nm) || n == 0;
  const int k = std::max(1, subdivision);
  std::vector<int> cell_of(static_cast<size_t>(n), 0);
  std::vector<Vec3d> wrapped = positions_nm;

  if (single)
    dims[0] = dims[1] = dims[2] = 1;
  else if (box != nullptr)
    bin_periodic(positions_nm, *box, cutoff_nm, k, dims, cell_of, wrapped);
  else
    bin_open(positions_nm, cutoff_nm, k, dims, cell_of);

  sort_by_cell(*this, cell_of, wrapped);

  shifts_exact = box != nullptr && !single && dims[0] > 2 * k && dims[1] > 2 * k && dims[2] > 2 * k;
  find_upper_neighbors(*this, box, single ? 0 : k);
}

}  // namespace mdsim
