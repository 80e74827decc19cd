// Systems made of copies of one System: the tiled box of `system.replicate` (engine/model's replicate_model)
// and the replica batches of the CUDA platform (K replicas of one System stepped together).
#pragma once

#include "model/system.hpp"

namespace mdsim {

// `copies` copies of `system` one after the other: copy c's particle i is particle c N + i (N = system's
// particles); every bonded term, exception, constraint, rigid water and virtual site of the copy shifted onto
// its own particles. The nonbonded settings, the box, the CMAP maps and the NBFIX table's types are shared
// (the caller sets a larger box where the copies tile space). copies >= 1.
System repeat_system(const System& system, int copies);

}  // namespace mdsim
