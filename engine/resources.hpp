// What a run will need, estimated before anything is allocated or written: host memory for the model
// and the CPU platform, device memory for the CUDA platform, disk space for the trajectory.
// Each check throws InputError located at the config key that asks for too much, with the estimate,
// what is available and how to ask for less. The per-atom figures are measured peaks with a margin
// (see the constants in resources.cpp): the checks catch requests that cannot fit by a wide margin
// (a replicate of 10⁹ atoms, a trajectory of petabytes), not a run that is a few percent too big.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "engine/platform.hpp"
#include "model/run_config.hpp"
#include "model/system.hpp"

namespace mdsim {

// Bytes the kernel would give a new allocation now (MemAvailable of /proc/meminfo); nullopt if unknown.
std::optional<std::uint64_t> available_host_memory_bytes();
// Free bytes for an unprivileged writer on the file system holding `path` (or its nearest existing
// parent folder); nullopt if unknown.
std::optional<std::uint64_t> free_disk_bytes(const std::string& path);

// The model (topology, System, positions) for `atoms_per_copy` atoms read from the structure, times
// system.replicate's copies. Called before the copies are made.
void check_model_memory(const RunConfig& config, std::int64_t atoms_per_copy);

// The platform's own memory for `system`: host memory on the CPU platform, the device's on CUDA
// (including the PME grids). `replicas_here` copies share it (a rank of a replica ensemble): when one
// fits but they do not, the error says to spread the replicas over more ranks.
void check_platform_memory(const RunConfig& config, const System& system, const PlatformChoice& platform,
                           int replicas_here = 1);

// The trajectory's frames from `first_step` to the end of the run for `selected_atoms` atoms against
// the free space where it is written (uncompressed frames: float32 positions, and velocities/forces
// when recorded).
void check_trajectory_space(const RunConfig& config, std::int64_t selected_atoms, std::int64_t first_step);

}  // namespace mdsim
