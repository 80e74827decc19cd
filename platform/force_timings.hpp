// Wall time of each part of one force evaluation (µs, medians of repeated evaluations), as a platform that can
// time its parts (the CUDA platform, from CUDA events) reports them for `mdsim bench`.
#pragma once

namespace mdsim {

struct ForcePartTimings {
  double total_us = 0;         // whole evaluation, forces only
  double total_energy_us = 0;  // whole evaluation with energies
  double neighbor_us = 0;      // position gather + displacement check + forced tile-list rebuild
  double nonbonded_us = 0;     // tile kernel
  double exceptions_us = 0;    // exceptions and exclusion corrections
  double pme_us = 0;           // reciprocal space
  double bonded_us = 0;        // bonds, angles, torsions
};

}  // namespace mdsim
