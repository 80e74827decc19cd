// AMBER ASCII coordinates (inpcrd, rst7, as tleap and sander/pmemd write them): title, atom count [time], positions
// (6F12.7, two atoms a line, Å), then optionally velocities (Å per 1/20.455 ps) and a box line (a b c in Å, alpha
// beta gamma in degrees) -> reduced box vectors as OpenMM's AmberInpcrdFile. Which of them are present follows from
// the line count, as OpenMM decides it. A NetCDF restart is refused with a clear message.
#pragma once

#include <string>

#include "io/topology_file.hpp"

namespace mdsim {

// expected_atoms >= 0: InputError unless the file has that many atoms (naming both counts).
CoordinateFile read_amber_coordinates(const std::string& path, int expected_atoms);

// The same from the file's text; `source` names it in messages.
CoordinateFile read_amber_coordinates_text(const std::string& text, const std::string& source, int expected_atoms);

}  // namespace mdsim
