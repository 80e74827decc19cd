// AMBER prmtop (parm7) reader: the System and Topology OpenMM 7.7's AmberPrmtopFile.createSystem builds from the same
// file with constraints=None and rigidWater=False (the creation options are applied afterwards by
// model/creation_options' apply_creation_options):
//  - masses; charges (prmtop units / 18.2223); LJ sigma/epsilon per atom type from the A/B tables when they follow
//    the combining rule, else System::lj_types (c12 = A, c6 = B per type pair; per-particle epsilon 0), as OpenMM's
//    CustomNonbondedForce then does;
//  - bonds (with hydrogen, then without), angles, dihedrals (third atom pointer negative: no 1-4 pair; fourth
//    negative: an improper), the 1-4 exceptions scaled by the dihedral type's SCEE/SCNB (defaults 1.2 and 2.0), the
//    other excluded pairs as zero exceptions, CMAP (CMAP_* or CHARMM_CMAP_* flags);
//  - water extra points (EP/LP atoms of WAT/HOH/TP4/TP5/T4E residues) as OpenMM's virtual sites;
//  - the box from IFBOX/BOX_DIMENSIONS (reduced triclinic vectors as OpenMM's computePeriodicBoxVectors);
//  - the Topology: one chain, residues from RESIDUE_LABEL/RESIDUE_POINTER, atom and residue names as written,
//    elements from ATOMIC_NUMBER or, without it, from the atom name as OpenMM 7.7 guesses them, bonds from the bond
//    lists.
// Refused with the file, the %FLAG and its line: old-style prmtops, CHAMBER prmtops, 10-12 H-bond terms, the 12-6-4
// LJ C coefficients, polarisable prmtops (IPOL), perturbation and CAP data, counts that disagree with POINTERS,
// atom indices out of range, values that do not parse, a missing flag; and a periodic nonbonded method when neither
// the prmtop nor options.box gives a box (the engine passes the coordinates' box as options.box).
#pragma once

#include <string>

#include "io/topology_file.hpp"

namespace mdsim {

TopologyFileModel read_amber_prmtop(const std::string& path, const TopologyFileOptions& options);

// The same from the file's text; `source` names it in messages and in Topology::source.
TopologyFileModel read_amber_prmtop_text(const std::string& text, const std::string& source,
                                         const TopologyFileOptions& options);

}  // namespace mdsim
