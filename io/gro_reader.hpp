// GROMACS .gro coordinates: a title line, the atom count, one fixed-column line per atom (residue number and name,
// atom name and number in 5 columns each from column 1; then x, y, z in nm, and optionally vx, vy, vz in nm/ps,
// each field as wide as the distance between the first two decimal points: %8.3f and %8.4f by default), and the box
// line: v1(x) v2(y) v3(z) [v1(y) v1(z) v2(x) v2(z) v3(x) v3(y)] in nm (all zero: no box).
#pragma once

#include <string>

#include "io/topology_file.hpp"

namespace mdsim {

// InputError "file:line:column: ..." for a missing or bad atom count, a short or malformed atom line (naming the
// field), a box line without 3 or 9 numbers, a box that is not in reduced form (a along x, b in the xy plane).
CoordinateFile read_gro(const std::string& path);
CoordinateFile parse_gro(const std::string& text, const std::string& source);  // from text (tests, fuzzing)

}  // namespace mdsim
