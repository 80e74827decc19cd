// Counter-based random numbers: Philox4x32-10 (Salmon, Moraes, Dror, Shaw, "Parallel random numbers:
// as easy as 1, 2, 3", SC'11) and the Gaussian variates the integrators draw from it.
//
// A draw is a pure function of (key, counter): the CPU and CUDA platforms produce identical numbers
// for the same (seed, purpose, step, atom), independent of thread order, and a run restarted at step
// s draws exactly what the uninterrupted run drew. Layout used by mdsim:
//   key     = {seed low 32 bits, seed high 32 bits}
//   counter = {index (atom, or attempt), stream (RandomStream below), step low 32, step high 32}
// Host and device code alike (MDSIM_HD); C++17 subset.
#pragma once

#include <cstdint>

#include "physics/math.hpp"
#include "physics/vec3.hpp"

namespace mdsim {

// What a draw is for; part of the counter so that different uses never share numbers.
enum RandomStream : std::uint32_t {
  kStreamLangevin = 1,          // O-step noise, counter index = atom
  kStreamInitialVelocities = 2, // Maxwell-Boltzmann velocities, counter index = atom, step = 0
  kStreamBarostat = 3,          // Monte Carlo volume move: index 0 = trial volume, 1 = acceptance
  kStreamReplicaExchange = 4,   // replica exchange acceptance: step = round, index = lower temperature
};

struct Philox4x32 {
  std::uint32_t v[4];
};

namespace philox_detail {

constexpr std::uint32_t kMul0 = 0xD2511F53u;
constexpr std::uint32_t kMul1 = 0xCD9E8D57u;
constexpr std::uint32_t kWeyl0 = 0x9E3779B9u;  // golden ratio
constexpr std::uint32_t kWeyl1 = 0xBB67AE85u;  // sqrt(3) - 1

MDSIM_HD void mulhilo(std::uint32_t a, std::uint32_t b, std::uint32_t& hi, std::uint32_t& lo) {
#if defined(__CUDA_ARCH__)
  lo = a * b;
  hi = __umulhi(a, b);
#else
  const std::uint64_t p = static_cast<std::uint64_t>(a) * static_cast<std::uint64_t>(b);
  lo = static_cast<std::uint32_t>(p);
  hi = static_cast<std::uint32_t>(p >> 32);
#endif
}

}  // namespace philox_detail

// Philox4x32 with 10 rounds: the bijection of the counter selected by the key.
MDSIM_HD Philox4x32 philox4x32_10(Philox4x32 counter, std::uint32_t key0, std::uint32_t key1) {
  using namespace philox_detail;
  for (int round = 0; round < 10; ++round) {
    if (round > 0) {
      key0 += kWeyl0;
      key1 += kWeyl1;
    }
    std::uint32_t hi0, lo0, hi1, lo1;
    mulhilo(kMul0, counter.v[0], hi0, lo0);
    mulhilo(kMul1, counter.v[2], hi1, lo1);
    Philox4x32 next;
    next.v[0] = hi1 ^ counter.v[1] ^ key0;
    next.v[1] = lo1;
    next.v[2] = hi0 ^ counter.v[3] ^ key1;
    next.v[3] = lo0;
    counter = next;
  }
  return counter;
}

// The mdsim counter layout (see the file comment).
MDSIM_HD Philox4x32 philox_draw(std::uint64_t seed, std::uint32_t stream, std::uint64_t step, std::uint32_t index) {
  Philox4x32 counter;
  counter.v[0] = index;
  counter.v[1] = stream;
  counter.v[2] = static_cast<std::uint32_t>(step);
  counter.v[3] = static_cast<std::uint32_t>(step >> 32);
  return philox4x32_10(counter, static_cast<std::uint32_t>(seed), static_cast<std::uint32_t>(seed >> 32));
}

// Uniform in the open interval (0, 1): (u + 1/2) / 2^32, exact in double.
MDSIM_HD double uniform_open01(std::uint32_t u) {
  return (static_cast<double>(u) + 0.5) * 2.3283064365386962890625e-10;  // 2^-32
}

// Four standard normal variates from one Philox output by the Box-Muller transform on the pairs
// (v0, v1) and (v2, v3), in double precision (the tails reach ±6.8 σ).
MDSIM_HD void box_muller4(const Philox4x32& r, double out[4]) {
  for (int pair = 0; pair < 2; ++pair) {
    const double u1 = uniform_open01(r.v[2 * pair]);
    const double u2 = uniform_open01(r.v[2 * pair + 1]);
    const double radius = pmath::sqrt_(-2.0 * pmath::log_(u1));
    const double angle = 2.0 * pmath::kPi * u2;
    out[2 * pair] = radius * pmath::cos_(angle);
    out[2 * pair + 1] = radius * pmath::sin_(angle);
  }
}

// Three independent standard normal variates for (seed, stream, step, index): the first three of
// box_muller4 of one Philox draw.
MDSIM_HD Vec3d gaussian3(std::uint64_t seed, std::uint32_t stream, std::uint64_t step, std::uint32_t index) {
  double n[4];
  box_muller4(philox_draw(seed, stream, step, index), n);
  return Vec3d(n[0], n[1], n[2]);
}

}  // namespace mdsim
