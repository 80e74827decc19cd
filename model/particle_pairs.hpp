// A key for an unordered pair of particle indices, for hash maps of bonds, constraints and exceptions:
// pair_key(a, b) == pair_key(b, a).
#pragma once

#include <cstdint>
#include <utility>

namespace mdsim {

inline std::uint64_t pair_key(int a, int b) {
  if (a > b) std::swap(a, b);
  return (static_cast<std::uint64_t>(static_cast<std::uint32_t>(a)) << 32) | static_cast<std::uint32_t>(b);
}

}  // namespace mdsim
