// GROMACS topologies (.top with its #included .itp files, io/gromacs_preprocessor) read into a System and Topology as
// OpenMM's GromacsTopFile.createSystem does, with GROMACS's own rules where OpenMM 7.7 departs from them
// (tests/data/shared/topologies/README.md):
//   [defaults]        nbfunc 1 (Lennard-Jones); comb-rule 1 (c6/c12), 2 (Lorentz-Berthelot) or 3 (geometric);
//                     gen-pairs; fudgeLJ, fudgeQQ
//   nonbonded         comb-rule 2 without active [nonbond_params]: per-particle sigma/epsilon; otherwise the
//                     pair-specific table System::lj_types (c6/c12 per atom-type pair, [nonbond_params] first)
//   exclusions        atoms within nrexcl bonds ([bonds] of any function, [constraints] 1, [settles]) and
//                     [exclusions]; virtual sites take only the exclusions [exclusions] gives them
//   [pairs] 1         1-4 pairs: charge product fudgeQQ qi qj, LJ from the line, [pairtypes], or (gen-pairs) fudgeLJ
//                     times the normal pair LJ ([nonbond_params] included); a pair that is not excluded gets the
//                     normal interaction as well, as GROMACS computes both
//   bonded            [bonds] 1 (5: connection only), [angles] 1 and 5 (the Urey-Bradley part a harmonic term between
//                     atoms 1 and 3, System::urey_bradleys), [dihedrals] 1 4 9 (periodic), 2 (harmonic improper),
//                     3 (Ryckaert-Bellemans), 5 (Fourier, as RB), [cmap] 1
//   [constraints], [settles]   distance constraints (OpenMM keeps the ones the file states); FLEXIBLE is predefined
//                     as OpenMM does, so water models give bonds and an angle (rigid water is applied later)
//   virtual sites     [virtual_sites2] 1, [virtual_sites3] 1, 3, 4 (OpenMM's mapping), mass 0
//   [position_restraints] 1   kept in TopologyFileModel::position_restraints
// The System has no constraints beyond the file's (model/creation_options applies the run's); system.nonbonded is
// options.nonbonded; the box is options.box (the .gro file's box is applied with the coordinates).
#pragma once

#include <string>

#include "io/topology_file.hpp"

namespace mdsim {

// InputError (file:line of the record, the included file's for its lines) for: an unknown atom type, missing bonded
// parameters (naming the types looked for), an unsupported function type or section, a [molecules] entry whose
// molecule type is not defined, and anything io/gromacs_preprocessor refuses.
TopologyFileModel read_gromacs_top(const std::string& path, const TopologyFileOptions& options);

}  // namespace mdsim
