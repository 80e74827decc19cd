// io/gro_reader: .gro positions and velocities from fixed columns (any precision), rectangular and triclinic box
// lines, and errors with line and column.
#include <string>

#include "common/errors.hpp"
#include "io/gro_reader.hpp"
#include "support/catch.hpp"
#include "support/scratch.hpp"

using namespace mdsim;

namespace {

std::string thrown_message(const std::string& text) {
  try {
    parse_gro(text, "x.gro");
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("gro: positions, velocities and a rectangular box") {
  const std::string text =
      "water\n"
      "    3\n"
      "    1SOL     OW    1   0.126   1.624   1.679  0.1227 -0.0580  0.0434\n"
      "    1SOL    HW1    2   0.190   1.661   1.747  0.8085  0.3191 -0.7791\n"
      "    1SOL    HW2    3   0.177   1.568   1.613 -0.9045 -2.6469  1.3180\n"
      "   1.86206   1.86206   1.86206\n";
  const CoordinateFile c = parse_gro(text, "water.gro");
  REQUIRE(c.positions_nm.size() == 3);
  CHECK(c.positions_nm[0].x == 0.126);
  CHECK(c.positions_nm[2].z == 1.613);
  REQUIRE(c.velocities_nm_per_ps.size() == 3);
  CHECK(c.velocities_nm_per_ps[2].y == -2.6469);
  REQUIRE(c.box.has_value());
  CHECK(c.box->a.x == 1.86206);
  CHECK(c.box->c.z == 1.86206);
  CHECK_FALSE(c.box->triclinic());
}

TEST_CASE("gro: higher precision columns, no velocities, a triclinic box") {
  const std::string text =
      "precise\n"
      "2\n"
      "    1ALA      N    1   2.37412345   2.43600000   2.59200000\n"
      "    1ALA     CA    2  -0.00100000  10.12345678   0.50000000\n"
      "   5.0   4.0   3.0   0.0   0.0   1.0   0.0   0.5   0.25\n";
  const CoordinateFile c = parse_gro(text, "p.gro");
  REQUIRE(c.positions_nm.size() == 2);
  CHECK(c.positions_nm[0].x == 2.37412345);
  CHECK(c.positions_nm[1].x == -0.001);
  CHECK(c.positions_nm[1].y == 10.12345678);
  CHECK(c.velocities_nm_per_ps.empty());
  REQUIRE(c.box.has_value());
  CHECK(c.box->b.x == 1.0);
  CHECK(c.box->b.y == 4.0);
  CHECK(c.box->c.x == 0.5);
  CHECK(c.box->c.y == 0.25);
  CHECK(c.box->triclinic());
}

TEST_CASE("gro: the shared apgr.gro reads 58 atoms and its box") {
  const CoordinateFile c = read_gro(std::string(MDSIM_TEST_DATA_DIR) + "/topologies/inputs/apgr.gro");
  CHECK(c.positions_nm.size() == 58);
  CHECK(c.positions_nm[0].x == 2.374);
  CHECK(c.box.has_value());
}

TEST_CASE("gro: errors name the line and column") {
  CHECK(thrown_message("t\nabc\n") == "x.gro:2:1: \"abc\": expected the number of atoms");
  const std::string short_file = thrown_message("t\n2\n    1SOL     OW    1   0.126   1.624   1.679\n");
  CHECK(short_file.find("x.gro:3:") == 0);
  CHECK(short_file.find("ends after 1 of 2 atom lines") != std::string::npos);
  const std::string bad = thrown_message("t\n1\n    1SOL     OW    1   0.126   1.6x4   1.679\n 1 1 1\n");
  CHECK(bad == "x.gro:3:29: y \"   1.6x4\" is not a number (fixed columns 29 to 36)");
  CHECK(thrown_message("t\n1\n    1SOL     OW    1   0.126   1.624   1.679\n 1 1\n").find(
            "x.gro:4: box line with 2 numbers; expected 3") == 0);
  CHECK(thrown_message("t\n1\n    1SOL     OW    1   0.126   1.624   1.679\n 1 1 1 0.1 0 0 0 0 0\n").find(
            "reduced form") != std::string::npos);
  const mdsim_test::ScratchFolder& dir = mdsim_test::scratch_folder();
  CHECK_THROWS_AS(read_gro(dir.file("absent.gro")), InputError);
}

// Found by fuzzing (fuzz/gro.cpp; fuzz/regressions/gro/): nan and inf were read as coordinates and box lengths.
TEST_CASE("gro: non-finite coordinates and box values are refused") {
  CHECK(thrown_message("t\n1\n    1SOL     OW    1     nan   1.624   1.679\n 1 1 1\n") ==
        "x.gro:3:21: x \"     nan\" is not a number (fixed columns 21 to 28)");
  CHECK(thrown_message("t\n1\n    1SOL     OW    1   0.126   1.624   1.679\n inf 1 1\n") ==
        "x.gro:4: box line: \"inf\" is not a number");
  CHECK(thrown_message("t\n1\n    1SOL     OW    1   0.126   1.624   1.679\n 1 1 1 0 0 nan 0 0 0\n") ==
        "x.gro:4: box line: \"nan\" is not a number");
}
