// CHARMM coordinate files (.crd, .cor; CHARMM's `write coor card`, CHARMM-GUI): title lines starting with '*', the
// atom count (followed by EXT in the extended format), then one line per atom: number, residue number, residue
// name, atom name, x, y, z (Å), segment, resid, weight. The standard format's columns are
// (2I5,1X,A4,1X,A4,3F10.5,...), the extended one's (2I10,2X,A8,2X,A8,3F20.10,...); a line whose columns do not
// parse is read by fields. No box and no velocities (a CHARMM crd has neither).
#pragma once

#include <string>

#include "io/topology_file.hpp"

namespace mdsim {

// expected_atoms >= 0: InputError unless the file has that many atoms (naming both counts).
CoordinateFile read_charmm_crd(const std::string& path, int expected_atoms);

// The same from the file's text; `source` names it in messages.
CoordinateFile read_charmm_crd_text(const std::string& text, const std::string& source, int expected_atoms);

// True when the file's first non-blank line starts with '*' (a CHARMM title; AMBER's .crd files start with a
// title that does not): how a .crd file is told from AMBER's.
bool is_charmm_crd_file(const std::string& path);

}  // namespace mdsim
