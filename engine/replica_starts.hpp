// Replicas that start from structures of their own (replicas.coordinates; docs/replicas.md): a coordinate file per
// replica, or the frames of one mdsim trajectory. Each start is checked against the system as a run's structure is.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "engine/model.hpp"
#include "io/topology_file.hpp"
#include "model/run_config.hpp"

namespace mdsim {

// The frame replica k of `count` starts from in a trajectory of `frames` frames: floor(k frames / count), frames
// spread evenly from the first.
std::int64_t replica_frame(int replica, int count, std::int64_t frames);

// Replica k's start, from config.replicas->coordinates: positions (nm); the box (reduced, nm) of its file for a
// periodic system, else the model's; velocities (nm/ps) when the file has them. InputError, located at the key, for
// an atom count other than the system's, elements that differ from the system's atoms (PDB / PDBx/mmCIF files), a
// trajectory of too few frames or of an atom selection, a box whose height is below twice the cutoff, and no
// velocities when run.initial_velocities is from_coordinates.
CoordinateFile replica_start(const RunConfig& config, const Model& model, int replica);

// `model` starting from `start`: its positions, box and velocities.
Model with_start(const Model& model, const CoordinateFile& start);

// The box every start shares (nm), or none when two differ or the system is not periodic.
std::optional<Boxd> shared_box(const std::vector<CoordinateFile>& starts);

}  // namespace mdsim
