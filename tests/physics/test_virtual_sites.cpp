// physics/virtual_sites: each site geometry's position against hand-computed values, and its force spreading against
// central finite differences of a test energy E = k |r_site - c|^2 taken through the position function (the exact
// chain rule: the spread forces are minus the gradient of E with respect to each parent).
#include <cmath>
#include <random>
#include <string>

#include "physics/virtual_sites.hpp"
#include "support/catch.hpp"

using namespace mdsim;

namespace {

VirtualSiteParams<double> average2(double w1, double w2) {
  VirtualSiteParams<double> p{};
  p.geometry = SiteGeometry::TwoParticleAverage;
  p.num_parents = 2;
  p.w[0] = w1, p.w[1] = w2;
  return p;
}

VirtualSiteParams<double> average3(double w1, double w2, double w3) {
  VirtualSiteParams<double> p{};
  p.geometry = SiteGeometry::ThreeParticleAverage;
  p.num_parents = 3;
  p.w[0] = w1, p.w[1] = w2, p.w[2] = w3;
  return p;
}

VirtualSiteParams<double> out_of_plane(double w12, double w13, double wc) {
  VirtualSiteParams<double> p{};
  p.geometry = SiteGeometry::OutOfPlane;
  p.num_parents = 3;
  p.w[0] = w12, p.w[1] = w13, p.w[2] = wc;
  return p;
}

VirtualSiteParams<double> local_coordinates() {
  VirtualSiteParams<double> p{};
  p.geometry = SiteGeometry::LocalCoordinates;
  p.num_parents = 3;
  const double wo[3] = {0.6, 0.3, 0.1}, wx[3] = {-1.0, 1.0, 0.0}, wy[3] = {-1.0, 0.2, 0.8};
  for (int i = 0; i < 3; ++i) p.wo[i] = wo[i], p.wx[i] = wx[i], p.wy[i] = wy[i];
  p.local_nm = Vec3d(0.03, -0.05, 0.07);
  return p;
}

const Vec3d kCentre(0.3, -0.2, 0.45);
constexpr double kK = 170.0;  // kJ/mol/nm^2

double test_energy(const VirtualSiteParams<double>& p, const Vec3d* r) {
  const Vec3d d = virtual_site_position(p, r) - kCentre;
  return kK * dot(d, d);
}

// Spread forces against -dE/dr_i by central differences, at random parent positions.
void check_spreading(const VirtualSiteParams<double>& p, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-0.2, 0.2);
  Vec3d r[3] = {Vec3d(0.1, 0.0, 0.0), Vec3d(0.2, 0.1, -0.05), Vec3d(0.05, 0.15, 0.1)};
  for (auto& v : r) v += Vec3d(u(rng), u(rng), u(rng));
  const Vec3d site_force = (virtual_site_position(p, r) - kCentre) * (-2.0 * kK);
  Vec3d spread[3];
  spread_virtual_site_force(p, r, site_force, spread);
  const double h = 1e-6;
  for (int i = 0; i < p.num_parents; ++i) {
    for (int c = 0; c < 3; ++c) {
      Vec3d plus[3] = {r[0], r[1], r[2]}, minus[3] = {r[0], r[1], r[2]};
      plus[i][c] += h;
      minus[i][c] -= h;
      const double numeric = -(test_energy(p, plus) - test_energy(p, minus)) / (2.0 * h);
      INFO("parent " << i << " component " << c);
      CHECK(spread[i][c] == Catch::Approx(numeric).margin(1e-6).epsilon(1e-7));
    }
  }
  // Translation invariance of the frame: the shares sum to the site force (averages' weights sum to 1 here).
  Vec3d total(0, 0, 0);
  for (int i = 0; i < p.num_parents; ++i) total += spread[i];
  if (p.geometry != SiteGeometry::TwoParticleAverage && p.geometry != SiteGeometry::ThreeParticleAverage) {
    CHECK(total.x == Catch::Approx(site_force.x).margin(1e-9));
    CHECK(total.y == Catch::Approx(site_force.y).margin(1e-9));
    CHECK(total.z == Catch::Approx(site_force.z).margin(1e-9));
  }
}

void check_vec(const Vec3d& a, const Vec3d& b) {
  CHECK(a.x == Catch::Approx(b.x).margin(1e-14));
  CHECK(a.y == Catch::Approx(b.y).margin(1e-14));
  CHECK(a.z == Catch::Approx(b.z).margin(1e-14));
}

}  // namespace

TEST_CASE("virtual site positions match hand-computed values") {
  const Vec3d r[3] = {Vec3d(1, 0, 0), Vec3d(0, 2, 0), Vec3d(0, 0, 3)};
  check_vec(virtual_site_position(average2(0.25, 0.75), r), Vec3d(0.25, 1.5, 0));
  check_vec(virtual_site_position(average3(0.5, 0.25, 0.25), r), Vec3d(0.5, 0.5, 0.75));
  // r12 = (-1, 2, 0), r13 = (-1, 0, 3), r12 x r13 = (6, 3, 2).
  check_vec(virtual_site_position(out_of_plane(0.5, 0.25, 0.1), r),
            Vec3d(1 - 0.5 - 0.25 + 0.6, 1.0 + 0.3, 0.75 + 0.2));
  // TIP4P-Ew's M site as OpenMM's amber14/tip4pew.xml defines it (weights 0.786646558, 0.106676721, 0.106676721):
  // on the HOH bisector, 0.0125 nm from the oxygen for a 0.09572 nm / 104.52 degree water.
  const double theta = 104.52 * 3.14159265358979323846 / 180.0, b = 0.09572;
  const Vec3d w[3] = {Vec3d(0, 0, 0), Vec3d(b * std::sin(theta / 2), b * std::cos(theta / 2), 0),
                      Vec3d(-b * std::sin(theta / 2), b * std::cos(theta / 2), 0)};
  const Vec3d m = virtual_site_position(average3(0.786646558, 0.106676721, 0.106676721), w);
  CHECK(m.x == Catch::Approx(0.0).margin(1e-15));
  CHECK(m.y == Catch::Approx(0.0125).epsilon(1e-6));
}

TEST_CASE("a local-coordinates site sits at its local position in the orthonormal frame of its parents") {
  VirtualSiteParams<double> p{};
  p.geometry = SiteGeometry::LocalCoordinates;
  p.num_parents = 3;
  // origin = r1; X = r2 - r1 = (2, 0, 0); Y = r3 - r1 = (1, 3, 0): x = (1,0,0), z = (0,0,1), y = (0,1,0).
  p.wo[0] = 1.0;
  p.wx[0] = -1.0, p.wx[1] = 1.0;
  p.wy[0] = -1.0, p.wy[2] = 1.0;
  p.local_nm = Vec3d(0.1, 0.2, 0.3);
  const Vec3d r[3] = {Vec3d(1, 1, 1), Vec3d(3, 1, 1), Vec3d(2, 4, 1)};
  check_vec(virtual_site_position(p, r), Vec3d(1.1, 1.2, 1.3));
  // The same frame rotated by 90 degrees about z: x -> (0,1,0), y -> (-1,0,0).
  const Vec3d q[3] = {Vec3d(1, 1, 1), Vec3d(1, 3, 1), Vec3d(-2, 2, 1)};
  check_vec(virtual_site_position(p, q), Vec3d(1 - 0.2, 1 + 0.1, 1.3));
}

TEST_CASE("virtual site force spreading is the chain rule of the position function") {
  SECTION("two-particle average") { check_spreading(average2(0.3, 0.7), 1); }
  SECTION("three-particle average") { check_spreading(average3(0.786646558, 0.106676721, 0.106676721), 2); }
  SECTION("out of plane") { check_spreading(out_of_plane(-0.3, 0.45, 2.5), 3); }
  SECTION("local coordinates") {
    for (std::uint64_t seed = 4; seed < 9; ++seed) check_spreading(local_coordinates(), seed);
  }
}

TEST_CASE("virtual site functions compile and agree in single precision") {
  const VirtualSiteParams<double> pd = local_coordinates();
  VirtualSiteParams<float> pf{};
  pf.geometry = pd.geometry;
  pf.num_parents = 3;
  for (int i = 0; i < 3; ++i) pf.wo[i] = float(pd.wo[i]), pf.wx[i] = float(pd.wx[i]), pf.wy[i] = float(pd.wy[i]);
  pf.local_nm = Vec3f(pd.local_nm);
  const Vec3d rd[3] = {Vec3d(0.1, 0.0, 0.0), Vec3d(0.2, 0.1, -0.05), Vec3d(0.05, 0.15, 0.1)};
  const Vec3f rf[3] = {Vec3f(rd[0]), Vec3f(rd[1]), Vec3f(rd[2])};
  const Vec3d xd = virtual_site_position(pd, rd);
  const Vec3f xf = virtual_site_position(pf, rf);
  CHECK(double(xf.x) == Catch::Approx(xd.x).margin(1e-6));
  CHECK(double(xf.y) == Catch::Approx(xd.y).margin(1e-6));
  CHECK(double(xf.z) == Catch::Approx(xd.z).margin(1e-6));
}
