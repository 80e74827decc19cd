// The records of a CHARMM PSF file as written (io/charmm_psf's reader; not a public interface): the atoms and the
// index lists, 0-based, each entry with the line it starts on.
#pragma once

#include <array>
#include <string>
#include <vector>

namespace mdsim::charmm {

struct PsfAtom {
  std::string segment, resid, resname, name, type;  // type: a name, or a number (CHARMM-style PSFs)
  double charge_e = 0.0, mass_amu = 0.0;
  int line = 0;
};

template <std::size_t N>
struct PsfList {  // N-atom entries of one section (bonds N = 2, angles 3, dihedrals and impropers 4, CMAP 8)
  std::vector<std::array<int, N>> atoms;
  std::vector<int> line;
};

struct PsfLonePair {  // CHARMM's lone pair: the site, its hosts (2: colinear, 3: relative or bisector), geometry
  int site = -1;
  std::vector<int> hosts;
  double distance_a = 0.0, angle_deg = 0.0, dihedral_deg = 0.0;
  int line = 0;
};

struct PsfFile {
  std::string source;
  std::vector<std::string> flags;  // the first line's words after "PSF" (EXT, CMAP, CHEQ, XPLOR, ...)
  std::vector<PsfAtom> atoms;
  PsfList<2> bonds;
  PsfList<3> angles;
  PsfList<4> dihedrals, impropers;
  PsfList<8> cmaps;
  std::vector<PsfLonePair> lone_pairs;
};

// InputError, located at the file and line, for anything io/charmm_psf.hpp lists as refused in the file itself.
PsfFile parse_psf(const std::string& text, const std::string& source);

}  // namespace mdsim::charmm
