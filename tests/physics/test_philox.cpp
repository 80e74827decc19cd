// Philox4x32-10 known-answer tests (the Random123 distribution's kat_vectors, the three
// "philox4x32 10" lines: counter[4] key[2] -> output[4]) and the Gaussian variates built on it.
#include <cmath>
#include <cstdint>
#include <set>

#include "physics/philox.hpp"
#include "support/catch.hpp"

using namespace mdsim;

namespace {

Philox4x32 run(std::uint32_t c0, std::uint32_t c1, std::uint32_t c2, std::uint32_t c3, std::uint32_t k0,
               std::uint32_t k1) {
  Philox4x32 c;
  c.v[0] = c0;
  c.v[1] = c1;
  c.v[2] = c2;
  c.v[3] = c3;
  return philox4x32_10(c, k0, k1);
}

}  // namespace

TEST_CASE("Philox4x32-10 reproduces the Random123 known-answer vectors") {
  SECTION("zeros") {
    const Philox4x32 r = run(0, 0, 0, 0, 0, 0);
    CHECK(r.v[0] == 0x6627e8d5u);
    CHECK(r.v[1] == 0xe169c58du);
    CHECK(r.v[2] == 0xbc57ac4cu);
    CHECK(r.v[3] == 0x9b00dbd8u);
  }
  SECTION("all ones") {
    const Philox4x32 r = run(0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu);
    CHECK(r.v[0] == 0x408f276du);
    CHECK(r.v[1] == 0x41c83b0eu);
    CHECK(r.v[2] == 0xa20bc7c6u);
    CHECK(r.v[3] == 0x6d5451fdu);
  }
  SECTION("digits of pi") {
    const Philox4x32 r = run(0x243f6a88u, 0x85a308d3u, 0x13198a2eu, 0x03707344u, 0xa4093822u, 0x299f31d0u);
    CHECK(r.v[0] == 0xd16cfe09u);
    CHECK(r.v[1] == 0x94fdccebu);
    CHECK(r.v[2] == 0x5001e420u);
    CHECK(r.v[3] == 0x24126ea1u);
  }
}

TEST_CASE("philox_draw places seed, stream, step and index as documented") {
  const std::uint64_t seed = 0x0123456789abcdefull;
  const std::uint64_t step = 0x00000007fedcba98ull;
  const Philox4x32 a = philox_draw(seed, kStreamLangevin, step, 42u);
  const Philox4x32 b = run(42u, kStreamLangevin, 0xfedcba98u, 0x7u, 0x89abcdefu, 0x01234567u);
  for (int i = 0; i < 4; ++i) CHECK(a.v[i] == b.v[i]);
  // Any change of seed, stream, step or index gives different numbers.
  std::set<std::uint32_t> firsts{a.v[0]};
  firsts.insert(philox_draw(seed + 1, kStreamLangevin, step, 42u).v[0]);
  firsts.insert(philox_draw(seed, kStreamBarostat, step, 42u).v[0]);
  firsts.insert(philox_draw(seed, kStreamLangevin, step + 1, 42u).v[0]);
  firsts.insert(philox_draw(seed, kStreamLangevin, step + (std::uint64_t(1) << 32), 42u).v[0]);
  firsts.insert(philox_draw(seed, kStreamLangevin, step, 43u).v[0]);
  CHECK(firsts.size() == 6);
}

TEST_CASE("uniforms lie in the open unit interval") {
  CHECK(uniform_open01(0u) > 0.0);
  CHECK(uniform_open01(0xffffffffu) < 1.0);
  CHECK(uniform_open01(0x80000000u) == Catch::Approx(0.5).margin(1e-9));
}

TEST_CASE("gaussian3 variates have zero mean, unit variance, no correlation and Gaussian tails") {
  const int n = 200000;
  double sum[3] = {0, 0, 0}, sum2[3] = {0, 0, 0}, cross01 = 0, sum4 = 0;
  int beyond2 = 0;
  for (int i = 0; i < n; ++i) {
    const Vec3d g = gaussian3(12345u, kStreamLangevin, static_cast<std::uint64_t>(i / 1000), static_cast<std::uint32_t>(i % 1000));
    for (int k = 0; k < 3; ++k) {
      sum[k] += g[k];
      sum2[k] += g[k] * g[k];
      if (std::fabs(g[k]) > 2.0) ++beyond2;
    }
    cross01 += g.x * g.y;
    sum4 += g.x * g.x * g.x * g.x;
  }
  // Standard errors: mean 1/sqrt(n) = 0.0022, variance sqrt(2/n) = 0.0032, 4th moment sqrt(96/n) = 0.022.
  for (int k = 0; k < 3; ++k) {
    INFO("component " << k);
    CHECK(std::fabs(sum[k] / n) < 5 * 0.0022);
    CHECK(std::fabs(sum2[k] / n - 1.0) < 5 * 0.0032);
  }
  CHECK(std::fabs(cross01 / n) < 5 * 0.0022);
  CHECK(std::fabs(sum4 / n - 3.0) < 5 * 0.022);
  // P(|x| > 2) = 0.0455; binomial standard error over 3n draws 0.00070.
  CHECK(std::fabs(beyond2 / (3.0 * n) - 0.0455003) < 5 * 0.00070);
}
