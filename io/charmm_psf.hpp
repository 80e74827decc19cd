// CHARMM PSF reader: the System and Topology OpenMM 7.7's CharmmPsfFile.createSystem builds from a PSF and a
// CharmmParameterSet (io/charmm_parameters) with constraints=None and rigidWater=False (the creation options are
// applied afterwards by model/creation_options' apply_creation_options):
//  - masses and charges from the PSF; atom types by name (XPLOR-style PSFs) or by number (CHARMM-style, through the
//    MASS lines' numbers); elements from the types' MASS lines (their element, else the element nearest the mass);
//  - bonds (a water's H-H bond and bonds to lone pairs left out, as OpenMM does), angles with Urey-Bradley terms,
//    dihedrals (each term of a multi-term type; wildcards "X" only when no exact type exists), harmonic impropers
//    (E = k dpsi^2, dpsi the short way round), CMAP cross-terms;
//  - Lennard-Jones from the NONBONDED values (sigma = Rmin 2^(-1/6), |epsilon|); when any two types present have an
//    NBFIX pair, System::lj_types (c12 = eps Rmin^12, c6 = 2 eps Rmin^6 per type pair, the NBFIX values where given)
//    with per-particle epsilon 0, as OpenMM's CustomNonbondedForce;
//  - exceptions from the bond graph by nbxmod (5: 1-2 and 1-3 excluded, 1-4 with charge product x e14fac and the
//    types' 1-4 LJ values or the pair's NBFIX 1-4 values; 4: 1-4 excluded too; 3: 1-4 interact normally);
//  - lone pairs (!NUMLP NUMLPH: relative, bisector and colinear) as LocalCoordinates virtual sites, excluded with
//    their host and its 1-2 and 1-3 partners;
//  - the Topology: a chain per segment, a residue per (segment, resid, resname), names as written; no box (the PSF
//    has none: options.box, set by the engine from the coordinates or the config).
// Refused with the file and line: a first line that is not "PSF ...", Drude PSFs, explicit exclusions (!NNB > 0),
// counts that disagree with the data, atom indices out of range, values that do not parse, a type no MASS line
// defines, a type without NONBONDED values, and a bond, angle, dihedral, improper or CMAP with no parameters.
#pragma once

#include <string>

#include "io/charmm_parameters.hpp"
#include "io/topology_file.hpp"

namespace mdsim {

// Reads the PSF and the parameter files options.parameters lists.
TopologyFileModel read_charmm_psf(const std::string& path, const TopologyFileOptions& options);

// The same from the PSF's text and parameters already read; `source` names the PSF in messages.
TopologyFileModel read_charmm_psf_text(const std::string& text, const std::string& source,
                                       const CharmmParameters& parameters, const TopologyFileOptions& options);

}  // namespace mdsim
