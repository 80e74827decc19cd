// The steps of io/charmm_psf's System builder, shared by its two source files (not a public interface).
#pragma once

#include <array>
#include <string>
#include <utility>
#include <vector>

#include "io/charmm_parameters.hpp"
#include "io/charmm_psf_file.hpp"
#include "model/system.hpp"
#include "model/topology.hpp"

namespace mdsim::charmm {

inline constexpr double kKjPerKcal = 4.184;
inline constexpr double kNmPerA = 0.1;

struct Build {
  Build(const PsfFile& f, const CharmmParameters& p) : psf(f), par(p) {}
  const PsfFile& psf;
  const CharmmParameters& par;
  std::vector<const CharmmAtomType*> type;  // per atom
  std::vector<std::pair<int, int>> bonds;   // the bonds kept: topology bonds and the exclusion graph
  System system;
  Topology topology;
  std::vector<std::string> notes;
};

// "atom 5 (CA of ALA 1, segment PROA)"
std::string atom_text(const PsfFile& psf, int i);

// Per-particle LJ (or System::lj_types with NBFIX), the exceptions by nbxmod, and the lone pairs as virtual sites.
void add_nonbonded(Build& b);

}  // namespace mdsim::charmm
