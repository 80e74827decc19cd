#include "model/overlaps.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <unordered_map>

namespace mdsim {

namespace {

using Cell = std::array<std::int64_t, 3>;

std::uint64_t cell_key(const Cell& c) {
  // 21 bits per axis (cells wrap modulo 2^21; a collision only adds candidates, never hides one).
  const auto part = [](std::int64_t v) { return static_cast<std::uint64_t>(v) & ((1ull << 21) - 1); };
  return (part(c[0]) << 42) | (part(c[1]) << 21) | part(c[2]);
}

}  // namespace

std::optional<AtomPair> find_closest_pair(const std::vector<Vec3d>& x, const std::optional<Boxd>& box,
                                          double threshold_nm) {
  const int n = static_cast<int>(x.size());
  if (n < 2 || !(threshold_nm > 0.0)) return std::nullopt;
  // Cell coordinates: fractional box coordinates times the cells per box height when periodic (so
  // images share cells), plain coordinates over the cell width otherwise.
  std::array<std::int64_t, 3> dims{0, 0, 0};
  Vec3d recip[3];
  if (box) {
    reciprocal_box_vectors(*box, recip);
    // Distances between lattice planes: cells of width >= threshold_nm along every axis.
    const double volume = box->volume();
    const double heights[3] = {volume / norm(cross(box->b, box->c)), volume / norm(cross(box->a, box->c)),
                               volume / norm(cross(box->a, box->b))};
    for (int d = 0; d < 3; ++d) dims[d] = std::max<std::int64_t>(1, static_cast<std::int64_t>(heights[d] / threshold_nm));
  }
  std::vector<Cell> cell_of(static_cast<std::size_t>(n));
  std::unordered_map<std::uint64_t, std::vector<int>> cells;
  cells.reserve(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) {
    const Vec3d& p = x[static_cast<std::size_t>(i)];
    Cell c{};
    for (int d = 0; d < 3; ++d) {
      if (box) {
        double s = p.x * recip[0][d] + p.y * recip[1][d] + p.z * recip[2][d];
        s -= std::floor(s);
        c[d] = std::min(dims[d] - 1, static_cast<std::int64_t>(s * static_cast<double>(dims[d])));
      } else {
        c[d] = static_cast<std::int64_t>(std::floor(p[d] / threshold_nm));
      }
    }
    cell_of[static_cast<std::size_t>(i)] = c;
    cells[cell_key(c)].push_back(i);
  }
  std::optional<AtomPair> best;
  const double threshold2 = threshold_nm * threshold_nm;
  std::vector<std::uint64_t> seen;
  for (int i = 0; i < n; ++i) {
    const Cell& c = cell_of[static_cast<std::size_t>(i)];
    seen.clear();
    for (int ox = -1; ox <= 1; ++ox)
      for (int oy = -1; oy <= 1; ++oy)
        for (int oz = -1; oz <= 1; ++oz) {
          Cell q{c[0] + ox, c[1] + oy, c[2] + oz};
          if (box)
            for (int d = 0; d < 3; ++d) q[d] = ((q[d] % dims[d]) + dims[d]) % dims[d];
          const std::uint64_t key = cell_key(q);
          if (std::find(seen.begin(), seen.end(), key) != seen.end()) continue;  // small boxes: a cell twice
          seen.push_back(key);
          const auto found = cells.find(key);
          if (found == cells.end()) continue;
          for (const int j : found->second) {
            if (j <= i) continue;
            Vec3d d = x[static_cast<std::size_t>(j)] - x[static_cast<std::size_t>(i)];
            if (box) d = box->minimum_image(d);
            const double r2 = dot(d, d);
            if (r2 >= threshold2) continue;
            const double r = std::sqrt(r2);
            if (!best || r < best->distance_nm || (r == best->distance_nm && std::pair(i, j) < std::pair(best->i, best->j)))
              best = AtomPair{i, j, r};
          }
        }
  }
  return best;
}

}  // namespace mdsim
