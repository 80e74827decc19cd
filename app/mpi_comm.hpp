// The processes `mdsim run` runs on: MPI ranks when mpirun (or another MPI launcher) started it and
// this build has MPI, otherwise none (a plain run; a replica ensemble then runs in this process alone).
#pragma once

#include <memory>

#include "engine/replicas.hpp"

namespace mdsim {

// The MPI world as an EnsembleComm (MPI_Init here; when destroyed, a barrier, then MPI_Finalize), or null when no MPI
// launcher started this process. InputError when a launcher started several processes but this build
// has no MPI (each would run the whole config and write the same files).
std::unique_ptr<EnsembleComm> launched_ensemble_comm();

// Whether this build can run over MPI.
bool built_with_mpi();

}  // namespace mdsim
