// Checkpoint files (HDF5): everything a run needs to continue bit for bit.
//
//   /                 attrs format="mdsim-checkpoint", format_version=1, mdsim_version, step (int64),
//                           time_ps, seed (uint64), rng_counter (uint64), config_hash,
//                           num_atoms, system_hash (hex string, see SystemFingerprint)
//   /positions_nm             N×3 float64
//   /velocities_nm_per_ps     N×3 float64
//   /box_nm                   3×3 float64, rows a, b, c (absent without a periodic box)
//   /barostat_state           float64 vector (may be empty)
// A staged run (config `stages:`) adds the root attrs stage_index (int64, 0-based), stage_name,
// stage_step (int64: steps done in that stage), stages (one line "name: signature" per stage, see
// stage_signature) and, when that stage restrains to its start positions, stage_reference_atoms (int64)
// and /stage_reference_nm (stage_reference_atoms×3 float64). A single run writes none of them.
// A replica ensemble (config `replicas:`) writes one file for all its replicas, so that they resume from
// the same step together:
//   /                 attrs format="mdsim-replica-checkpoint", format_version=1, mdsim_version, step (int64),
//                           num_replicas (int64), exchange ("temperature" | "none"), ensemble_seed (uint64),
//                           exchange_seed (uint64)
//   /temperatures_k           the ladder, float64 (temperature exchange; empty otherwise)
//   /exchange_state           float64 vector: the replica <-> temperature map, round and counts
//                             (ReplicaExchange::state; empty without exchange)
//   /replica_<k>              group per replica k = 0, 1, ... (4 digits): a checkpoint's attributes and
//                             datasets as above
// Both kinds are
// written to "<path>.partial", fsync'ed, then renamed over `path` (atomic: a crash leaves the
// previous checkpoint or the new one, never half a file).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "physics/pbc.hpp"
#include "physics/vec3.hpp"
#include "model/system.hpp"

namespace mdsim {

// Identifies the simulated system: atom count and a 64-bit hash (FNV-1a) of the per-particle
// masses and charges, rounded (1e-6 amu, 1e-9 e) so that last-bit differences do not matter.
struct SystemFingerprint {
  int num_atoms = 0;
  std::uint64_t hash = 0;
  std::string to_string() const;  // "2269 atoms, 9f3c0e1d2a4b5c6d"
  bool operator==(const SystemFingerprint&) const = default;
};

SystemFingerprint system_fingerprint(const std::vector<double>& mass_amu, const std::vector<double>& charge_e);
SystemFingerprint system_fingerprint(const System& system);

// 64-bit FNV-1a of arbitrary bytes as 16 hex digits (e.g. the config hash of the config file text).
std::string content_hash_hex(std::string_view bytes);

// Where a staged run was (absent in the checkpoint of a single run).
struct CheckpointStage {
  int index = 0;                    // 0-based position in the stages list
  std::string name;
  std::int64_t step_in_stage = 0;   // steps of this stage already done
  std::vector<std::string> protocol;  // "name: signature" of every stage of the run (stage_signature)
  std::vector<Vec3d> reference_nm;  // the restrained atoms' reference positions when they are the stage's start's
};

struct Checkpoint {
  std::int64_t step = 0;
  double time_ps = 0.0;
  std::vector<Vec3d> positions_nm;
  std::vector<Vec3d> velocities_nm_per_ps;
  std::optional<Boxd> box;
  std::uint64_t seed = 0;
  std::uint64_t rng_counter = 0;
  std::vector<double> barostat_state;
  std::string config_hash;
  // physics_settings() of the run that wrote it ("key=value" per line in the file); empty when read from
  // a checkpoint written before mdsim recorded them.
  std::vector<std::pair<std::string, std::string>> physics;
  SystemFingerprint fingerprint;
  std::optional<CheckpointStage> stage;  // staged runs only
  std::string mdsim_version;  // filled by write_checkpoint (this build) and read_checkpoint (the file)
};

// Writes `checkpoint` atomically. checkpoint.fingerprint.num_atoms must match the arrays. Throws
// InputError when the folder does not exist / is not writable, RuntimeError when writing fails or
// the state holds NaN/inf (the previous file at `path` is then left as it was).
void write_checkpoint(const std::string& path, const Checkpoint& checkpoint);

struct EnsembleCheckpoint {
  std::int64_t step = 0;
  std::string exchange;                  // to_string(ReplicaExchangeKind)
  std::vector<double> temperatures_k;    // the ladder (temperature exchange)
  std::uint64_t ensemble_seed = 0;       // the seed the replicas' seeds derive from
  std::uint64_t exchange_seed = 0;       // the exchange decisions' seed
  std::vector<double> exchange_state;    // ReplicaExchange::state()
  std::vector<Checkpoint> replicas;      // all at `step`
};

// Writes an ensemble's checkpoint atomically (as write_checkpoint; every replica at the same step).
void write_ensemble_checkpoint(const std::string& path, const EnsembleCheckpoint& checkpoint);

// Reads and validates an ensemble's checkpoint (each replica as read_checkpoint does, and all at the
// file's step). InputError for a single run's checkpoint, naming the difference.
EnsembleCheckpoint read_ensemble_checkpoint(const std::string& path, const SystemFingerprint& expected);

// Reads and validates a checkpoint: format, shapes, finite values, and that it belongs to the
// system `expected` (else InputError "path: checkpoint is for a different system: the checkpoint
// has <fingerprint>, this system has <fingerprint>").
Checkpoint read_checkpoint(const std::string& path, const SystemFingerprint& expected);

}  // namespace mdsim
