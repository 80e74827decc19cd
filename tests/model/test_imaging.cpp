// model/imaging: what trajectory frames and final_pdb show of a periodic system. A three-atom solute
// straddling the boundary is made whole; its centre, wrapped by a lattice vector between frames as the
// barostat does, stays continuous; waters and an ion land in the cell centred on the solute; a second
// imager continued from a recorded frame (a resumed run) goes on where the first left off; without solute
// molecules are wrapped into [0, a) x [0, b) x [0, c); a triclinic (dodecahedron) box works the same way.
#include <cmath>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "model/imaging.hpp"
#include "model/molecules.hpp"
#include "model/system.hpp"
#include "model/topology.hpp"
#include "support/catch.hpp"

using namespace mdsim;

namespace {

// Atoms 0-2: a bonded chain (residue "LIG"), 3-5: a rigid water (HOH), 6: an ion (NA), 7-9: another water.
struct Fixture {
  System system;
  Topology topology;
};

Fixture make_fixture() {
  Fixture f;
  const std::vector<int> residue_index = {0, 0, 0, 1, 1, 1, 2, 3, 3, 3};
  for (const char* name : {"LIG", "HOH", "NA", "HOH"})
    f.topology.residues.push_back(TopologyResidue{name, 0, static_cast<int>(f.topology.residues.size()) + 1, ' ', {}, 0});
  for (int a = 0; a < 10; ++a) {
    f.topology.atoms.push_back(TopologyAtom{"X", "C", residue_index[static_cast<std::size_t>(a)], a + 1, 0});
    f.system.mass_amu.push_back(12.0);
    f.system.charge_e.push_back(0.0);
    f.system.sigma_nm.push_back(0.3);
    f.system.epsilon_kj_per_mol.push_back(0.0);
  }
  f.system.bonds = {{0, 1, 0.15, 1.0}, {1, 2, 0.15, 1.0}};
  f.system.rigid_waters = {{3, 4, 5, 0.09572, 0.15139}, {7, 8, 9, 0.09572, 0.15139}};
  return f;
}

Boxd cube(double l) { return Boxd{{l, 0, 0}, {0, l, 0}, {0, 0, l}}; }

Vec3d centre(const std::vector<Vec3d>& x, int first, int count) {
  Vec3d c(0, 0, 0);
  for (int a = first; a < first + count; ++a) c += x[static_cast<std::size_t>(a)];
  return c / static_cast<double>(count);
}

// The raw positions of one frame: the solute's atoms at solute_x - 0.15, solute_x, solute_x + 0.15 on the x
// axis, each wrapped into [0, 3) when `per_atom` (as a per-atom wrapping tool would leave them).
std::vector<Vec3d> frame(double solute_x, bool per_atom = false) {
  auto wrap = [&](double v) { return per_atom ? v - 3.0 * std::floor(v / 3.0) : v; };
  return {{wrap(solute_x - 0.15), 1.5, 1.5}, {wrap(solute_x), 1.5, 1.5}, {wrap(solute_x + 0.15), 1.6, 1.5},
          {0.2, 0.2, 0.2},  {0.29, 0.2, 0.2}, {0.2, 0.29, 0.2},  // water 1: near the origin
          {2.9, 2.9, 2.9},                                       // the ion
          {1.0, 2.95, 1.0}, {1.0, 3.04, 1.0}, {1.09, 2.95, 1.0}};  // water 2 straddles y = 3
}

}  // namespace

TEST_CASE("molecule_trees: each atom after its parent, the molecules of find_molecules") {
  const Fixture f = make_fixture();
  const MoleculeTrees trees = molecule_trees(f.system);
  REQUIRE(trees.order.size() == 4);
  CHECK(trees.order[0] == std::vector<int>{0, 1, 2});
  CHECK(trees.parent[1] == 0);
  CHECK(trees.parent[2] == 1);
  CHECK(trees.parent[0] == -1);
  CHECK(trees.order[2] == std::vector<int>{6});
  CHECK(find_molecules(f.system) == std::vector<std::vector<int>>{{0, 1, 2}, {3, 4, 5}, {6}, {7, 8, 9}});
}

TEST_CASE("frames: molecules whole, the solute continuous across a barostat wrap, solvent around the solute") {
  const Fixture f = make_fixture();
  FrameImager imager(molecule_trees(f.system), f.topology);
  const Boxd box = cube(3.0);

  // Frame 1: the solute straddles x = 3 (atoms at 2.85, 0.0, 0.15): made whole around its first atom.
  std::vector<Vec3d> x = frame(3.0, true);
  imager.image(x, box);
  CHECK(x[0].x == Catch::Approx(2.85));
  CHECK(x[1].x == Catch::Approx(3.0));
  CHECK(x[2].x == Catch::Approx(3.15));
  const Vec3d c1 = centre(x, 0, 3);
  // Water 2 whole (its H at y 3.04 stays next to its O at 2.95); every solvent centre within half a cell of
  // the solute's centre on each axis.
  CHECK(x[8].y - x[7].y == Catch::Approx(0.09));
  for (const auto& [first, count] : {std::pair{3, 3}, {6, 1}, {7, 3}}) {
    const Vec3d d = centre(x, first, count) - c1;
    CHECK(std::fabs(d.x) <= 1.5);
    CHECK(std::fabs(d.y) <= 1.5);
    CHECK(std::fabs(d.z) <= 1.5);
  }
  CHECK(x[3].x == Catch::Approx(3.2));  // water 1 moved by +a to sit beside the solute
  CHECK(x[6].x == Catch::Approx(2.9));  // the ion, already beside it, stays

  // Frame 2: the solute moved +0.05 nm, and the barostat wrapped its centre by -a, to 0.05: no jump in the frame.
  std::vector<Vec3d> y = frame(0.05);
  imager.image(y, box);
  const Vec3d c2 = centre(y, 0, 3);
  CHECK(c2.x - c1.x == Catch::Approx(0.05));
  CHECK(imager.solute_centres().size() == 1);

  // A resumed run: a new imager continued from frame 2 as recorded places frame 3 next to it.
  FrameImager resumed(molecule_trees(f.system), f.topology);
  std::vector<float> recorded;
  for (const Vec3d& p : y) recorded.insert(recorded.end(), {float(p.x), float(p.y), float(p.z)});
  resumed.continue_from({0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, recorded);
  std::vector<Vec3d> z = frame(0.1);  // raw: the centre at 0.1 (the same place as 3.1)
  resumed.image(z, box);
  CHECK(centre(z, 0, 3).x - c2.x == Catch::Approx(0.05));
  // Without the continuation the solute would stay where the raw frame has it.
  FrameImager fresh(molecule_trees(f.system), f.topology);
  std::vector<Vec3d> w = frame(0.1);
  fresh.image(w, box);
  CHECK(centre(w, 0, 3).x == Catch::Approx(0.1));

  // The float path gives the same frame as the double one.
  FrameImager as_float(molecule_trees(f.system), f.topology);
  std::vector<float> xf;
  for (const Vec3d& p : frame(3.0, true)) xf.insert(xf.end(), {float(p.x), float(p.y), float(p.z)});
  as_float.image(std::span<float>(xf), box);
  for (std::size_t a = 0; a < x.size(); ++a) CHECK(xf[3 * a] == Catch::Approx(x[a].x).margin(1e-6));
}

TEST_CASE("two solute molecules: the second next to the first, the solvent around the centre of both") {
  Fixture f = make_fixture();
  f.topology.residues[3].name = "LG2";  // water 2 (atoms 7-9) becomes a second solute molecule
  FrameImager imager(molecule_trees(f.system), f.topology);
  std::vector<Vec3d> x = frame(3.0, true);
  imager.image(x, cube(3.0));
  REQUIRE(imager.solute_centres().size() == 2);
  // The second solute molecule at its image nearest the first (anchor) ...
  const Vec3d d = centre(x, 7, 3) - centre(x, 0, 3);
  CHECK(std::fabs(d.x) <= 1.5);
  CHECK(std::fabs(d.y) <= 1.5);
  // ... and water 1 and the ion within half a cell of the centre of all six solute atoms.
  const Vec3d c = (centre(x, 0, 3) + centre(x, 7, 3)) * 0.5;
  for (const auto& [first, count] : {std::pair{3, 3}, {6, 1}}) {
    const Vec3d e = centre(x, first, count) - c;
    CHECK(std::fabs(e.x) <= 1.5);
    CHECK(std::fabs(e.y) <= 1.5);
    CHECK(std::fabs(e.z) <= 1.5);
  }
}

TEST_CASE("frames without solute: molecule centres in [0, a) x [0, b) x [0, c); a triclinic box") {
  Fixture f = make_fixture();
  f.topology.residues[0].name = "HOH";  // the chain counts as solvent now
  FrameImager imager(molecule_trees(f.system), f.topology);
  std::vector<Vec3d> x = frame(3.0, true);
  imager.image(x, cube(3.0));
  CHECK(imager.solute_centres().empty());
  for (const auto& [first, count] : {std::pair{0, 3}, {3, 3}, {6, 1}, {7, 3}}) {
    const Vec3d c = centre(x, first, count);
    CHECK(c.x >= 0.0);
    CHECK(c.x < 3.0);
    CHECK(c.y >= 0.0);
    CHECK(c.y < 3.0);
  }

  // A rhombic dodecahedron (reduced form): the solute whole and continuous, solvent in the cell around it.
  const Fixture g = make_fixture();
  FrameImager tri(molecule_trees(g.system), g.topology);
  const double l = 3.0;
  const Boxd dodecahedron{{l, 0, 0}, {0, l, 0}, {0.5 * l, 0.5 * l, l * std::sqrt(0.5)}};
  std::vector<Vec3d> y = frame(3.0, true);
  tri.image(y, dodecahedron);
  CHECK(y[2].x - y[0].x == Catch::Approx(0.3));
  const Vec3d c = centre(y, 0, 3);
  std::vector<Vec3d> next = frame(3.02);
  for (Vec3d& p : next) p -= dodecahedron.c;  // the barostat's wrap by a lattice vector
  tri.image(next, dodecahedron);
  CHECK((centre(next, 0, 3) - c).x == Catch::Approx(0.02));
  CHECK(std::fabs((centre(next, 0, 3) - c).z) < 1e-9);
}
