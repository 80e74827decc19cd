// The tile-list build's work items (kernels/cuda/build_items.hpp), on the CPU: one system's (row, segment) items,
// enumerated segment-major, are exactly the segments that hold blocks J > I (and every row's segment 0, which holds
// its exclusion tiles), each once; a row's segments cover its blocks (I, end) once, so the tiles are those of the
// row-major enumeration that scanned every row's every segment.
#include <algorithm>
#include <set>
#include <utility>
#include <vector>

#include "kernels/cuda/build_items.hpp"
#include "support/catch.hpp"

using mdsim::cuda::BuildItems;

namespace {

// Every item of `items` decoded, in order.
std::vector<std::pair<int, int>> decoded(const BuildItems& items) {
  std::vector<std::pair<int, int>> out;
  for (long long item = 0; item < items.count(); ++item) {
    int row = -1, segment = -1;
    items.decode(item, row, segment);
    out.emplace_back(segment, row);
  }
  return out;
}

}  // namespace

TEST_CASE("build items: the segments that hold blocks, segment 0 of every row first, each once") {
  struct Case {
    int nblocks, max_blocks, segment;
  };
  // DHFR-sized (736 blocks), TIP4P-Ew-sized (1,010), sizes at and around a segment's length, one block, and a
  // capacity above the blocks in use (segments from max_blocks, rows from the blocks used).
  for (const Case c : {Case{736, 736, 128}, Case{1010, 1010, 64}, Case{128, 128, 128}, Case{129, 129, 128},
                       Case{65, 65, 64}, Case{1, 1, 128}, Case{80, 97, 32}}) {
    INFO("nblocks " << c.nblocks << ", segment " << c.segment);
    const int segments = (c.max_blocks + c.segment - 1) / c.segment;
    const BuildItems items{c.nblocks, c.nblocks, c.segment, segments};
    // What the row-major enumeration of every (row, segment) scanned with blocks in it, plus every segment 0.
    std::set<std::pair<int, int>> expected;
    for (int row = 0; row < c.nblocks; ++row)
      for (int k = 0; k < segments; ++k)
        if (k == 0 || row + 1 + k * c.segment < c.nblocks) expected.insert({k, row});
    const std::vector<std::pair<int, int>> got = decoded(items);
    CHECK(static_cast<long long>(got.size()) == items.count());
    CHECK(std::set<std::pair<int, int>>(got.begin(), got.end()) == expected);
    CHECK(got.size() == expected.size());  // none twice
    // Segment-major: segment 0 of rows 0, 1, ... first, then segment 1 of its rows in order, ...
    bool ordered = true;
    for (std::size_t i = 1; i < got.size(); ++i) ordered = ordered && got[i - 1] < got[i];
    CHECK(ordered);
    for (int row = 0; row < c.nblocks && row < static_cast<int>(got.size()); ++row)
      CHECK(got[static_cast<std::size_t>(row)] == std::make_pair(0, row));
    // Each row's segments cover its blocks J in (row, nblocks) once.
    std::vector<int> covered(static_cast<std::size_t>(c.nblocks), 0);
    for (const auto& [k, row] : got) {
      const int first = row + 1 + k * c.segment;
      const int last = std::min(c.nblocks, first + c.segment);
      for (int j = first; j < last; ++j) covered[static_cast<std::size_t>(row)] += 1;
    }
    for (int row = 0; row < c.nblocks; ++row) CHECK(covered[static_cast<std::size_t>(row)] == c.nblocks - 1 - row);
  }
}
