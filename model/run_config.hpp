// RunConfig: the typed, validated, unit-resolved form of a YAML config file (io/config parses it).
// Every quantity is in MD units: nm, ps, K, amu, bar, 1/ps, kJ/mol/nm. docs/config.md documents each key.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "model/system.hpp"

namespace mdsim {

enum class ConstraintMode { None, HBonds, AllBonds, HAngles };
enum class IntegratorType { LangevinMiddle, Verlet };
enum class Precision { Mixed, Double };
// run.initial_velocities: Maxwell-Boltzmann, zero, the checkpoint's, or the coordinate file's (a .gro, .rst7 or
// serialized State with velocities: Model::velocities_nm_per_ps).
enum class InitialVelocities { Temperature, Zero, FromCheckpoint, FromCoordinates };

struct SystemConfig {
  std::string pdb;  // the structure file (key `structure`, or its older name `pdb`): PDB or PDBx/mmCIF; resolved path.
                    // With `topology`: the coordinates (key `coordinates`): PDB, PDBx/mmCIF or a serialized State
  std::string topology;  // key `topology`: a serialized OpenMM System (.xml, .xml.gz), resolved path; "" = a
                         // structure with force fields. Its settings fill the keys below (io/config)
  std::vector<std::string> forcefield{"amber14-all.xml", "amber14/tip3p.xml"};  // bundled names or paths; empty with topology
  NonbondedSettings nonbonded;           // method, cutoff_nm, ewald_tolerance, switch_distance_nm, dispersion, pme_grid
  ConstraintMode constraints = ConstraintMode::HBonds;
  bool rigid_water = true;
  std::optional<double> hydrogen_mass_amu;  // hydrogen mass repartitioning when set
  bool remove_cm_motion = true;
  int remove_cm_motion_interval = 1;  // steps between removals (OpenMM's CMMotionRemover frequency)
  std::array<int, 3> replicate{1, 1, 1};
  // With a `topology` other than a serialized System, what its format needs beside it (createSystem's inputs):
  std::vector<std::string> include_dirs;                     // key `include_dirs`: GROMACS #include folders (resolved)
  std::vector<std::pair<std::string, std::string>> defines;  // key `defines`: GROMACS -DNAME[=VALUE]
  std::vector<std::string> parameters;                       // key `parameters`: CHARMM parameter files (resolved)
  std::optional<Boxd> box;  // key `box`: the periodic box when neither the topology nor the coordinates give one, nm
};

struct PlatformConfig {
  std::string name = "auto";  // auto | cpu | cuda
  Precision precision = Precision::Mixed;
  int device = 0;
  bool deterministic = true;
  double neighbor_buffer_nm = 0.1;  // CUDA: pair-list skin beyond the cutoff (list rebuilt when an atom moves half of it)
};

struct MinimizeConfig {
  double tolerance_kj_per_mol_nm = 10.0;  // stop when the largest per-atom force is below this
  int max_iterations = 0;                 // 0 = until converged
};

struct IntegratorConfig {
  IntegratorType type = IntegratorType::LangevinMiddle;
  double temperature_k = 300.0;
  double friction_per_ps = 1.0;
  double timestep_ps = 0.002;
  std::uint64_t seed = 0;  // 0 = choose one at start and record it in every output
  double constraint_tolerance = 1.0e-6;
};

struct BarostatConfig {
  double pressure_bar = 1.0;
  double temperature_k = 300.0;
  int interval_steps = 25;
};

struct RunSection {
  std::int64_t steps = 10000;  // resolved from `time` when that was given
  InitialVelocities initial_velocities = InitialVelocities::Temperature;
};

struct TrajectoryOutput {
  std::string file = "trajectory.h5";
  int interval_steps = 1000;  // 0 = no trajectory
  bool velocities = false;
  bool forces = false;
  std::string atoms = "all";  // all | protein | not water | index list "0-21,30"
  double flush_interval_s = 10.0;  // wall seconds at most between a frame's write and its flush to disk
};

struct StateOutput {
  std::string file = "state.csv";
  int interval_steps = 1000;  // 0 = no state log
};

struct CheckpointOutput {
  std::string file = "checkpoint.h5";
  int interval_steps = 10000;  // 0 = only at the end; file "" (config: checkpoint: null) = none
};

struct OutputConfig {
  std::string directory = "out";  // resolved against the config file's folder
  TrajectoryOutput trajectory;
  StateOutput state;
  CheckpointOutput checkpoint;
  std::string final_pdb = "final.pdb";  // "" = none
  bool progress = true;
};

// An output file the run writes: its config key and its name relative to output.directory.
struct OutputFile {
  const char* key;  // "output.trajectory.file", ...
  std::string file;
};

// The output files the config enables, in a fixed order: trajectory, state log, checkpoint, final
// structure (a trajectory or state log needs a file and an interval; a checkpoint is written at the end
// even without an interval).
std::vector<OutputFile> output_files(const OutputConfig& output);

// Position restraints of a stage (stages[i].restraints): E = ½ k |x − x0|² on each selected atom.
enum class RestraintReference { Initial, Start, File };
struct RestraintConfig {
  std::string atoms;                 // atom selection (io/atom_selection.hpp), checked against the topology by prepare_run
  double k_kj_per_mol_nm2 = 0.0;
  RestraintReference reference = RestraintReference::Initial;  // initial: the structure as read; start: the stage's start
  std::string reference_file;        // RestraintReference::File: a PDB with the same atoms (resolved path)
};

// One stage of a staged protocol (the `stages:` list): the top-level integrator, barostat and output
// intervals with this stage's overrides; a minimisation, steps, or both (minimisation first).
struct StageConfig {
  std::string name;                           // unique; default "stage<N>" (1-based)
  std::optional<MinimizeConfig> minimize;
  std::int64_t steps = 0;                     // 0 = a minimisation-only stage
  IntegratorConfig integrator;                // the seed is the run's (top-level integrator.seed)
  std::optional<BarostatConfig> barostat;
  std::optional<RestraintConfig> restraints;  // none = unrestrained
  std::optional<InitialVelocities> initial_velocities;  // draw new velocities at the stage's start (temperature | zero)
  int trajectory_interval_steps = 0, state_interval_steps = 0, checkpoint_interval_steps = 0;  // top-level unless overridden
};

// `count` temperatures (K) from min_k to max_k in geometric progression: T_k = min (max / min)^(k / (count - 1)),
// the ends exact. InputError unless 2 <= count and 0 < min_k < max_k (finite).
std::vector<double> geometric_temperature_ladder(double min_k, double max_k, int count);

// Replica exchange or an ensemble of independent copies (the `replicas:` section; docs/replicas.md).
enum class ReplicaExchangeKind { Temperature, None };
struct ReplicaConfig {
  ReplicaExchangeKind exchange = ReplicaExchangeKind::Temperature;
  int count = 0;                              // replicas; = temperatures_k.size() for temperature exchange
  std::vector<double> temperatures_k;         // temperature exchange: the ladder, increasing (K)
  std::int64_t exchange_interval_steps = 0;   // temperature exchange: steps between exchange rounds
  std::uint64_t seed = 0;                     // exchange decisions; 0 = derived from the run's seed
  std::string log = "exchange.csv";           // temperature exchange: the exchange log in output.directory
  bool batch = true;                          // CUDA: a rank's replicas stepped together in one batch (engine/replicas)
  // Each replica's own start (key `coordinates`, resolved paths): `count` coordinate files, one per replica, or one
  // mdsim HDF5 trajectory whose frames they start from (engine/replica_starts.hpp); empty = the system's structure.
  std::vector<std::string> coordinates;
};

struct SourceLocation {
  int line = 0, column = 0;  // 1-based; 0 = unknown
};

struct RunConfig {
  std::string source;  // the config file's path
  std::map<std::string, SourceLocation> locations;  // "system.cutoff" → where that key is written
  SystemConfig system;
  PlatformConfig platform;
  std::optional<MinimizeConfig> minimize;
  IntegratorConfig integrator;
  std::optional<BarostatConfig> barostat;
  RunSection run;
  OutputConfig output;
  std::vector<StageConfig> stages;  // empty: one run of run.steps (after `minimize`, when given)
  std::optional<ReplicaConfig> replicas;  // several replicas of the system (engine/replicas.hpp)
};

// The config as one stage runs it: integrator and barostat replaced by the stage's (for
// dynamics_settings and physics_settings).
RunConfig stage_run_config(const RunConfig& config, const StageConfig& stage);

// What a checkpoint records of a stage to recognise it on --resume: its kind, length, integrator,
// barostat, minimisation and restraints, as "key=value; ..." (the name is kept apart). Without
// `with_length` the length is left out (the stage a checkpoint stopped in may be lengthened).
std::string stage_signature(const StageConfig& stage, bool with_length = true);

// The first step of each stage: 0 and the running sum of the stages' steps.
std::vector<std::int64_t> stage_first_steps(const std::vector<StageConfig>& stages);

// "config:line:column: message" at `key` ("output.trajectory.atoms"), or at the nearest enclosing key
// the config wrote ("output.trajectory", "output") when the key itself was left to its default; the
// file alone when none was written. throw_config_error throws it as an InputError.
std::string at_config_key(const RunConfig& config, const std::string& key, const std::string& message);
[[noreturn]] void throw_config_error(const RunConfig& config, const std::string& key, const std::string& message);

// The key the config names its structure file with: "system.structure", "system.pdb" (its older name), or
// "system.coordinates" (with system.topology).
std::string structure_key(const RunConfig& config);

// The settings that define the simulated physics, which a resumed run must share with the run that
// wrote its checkpoint: (config key, value with its unit) in a fixed order. Run length, reporters,
// outputs, minimisation, platform and seed are not among them (the system's masses and charges are
// checked by the checkpoint's fingerprint).
std::vector<std::pair<std::string, std::string>> physics_settings(const RunConfig& config);

const char* to_string(NonbondedMethod m);
const char* to_string(PmeGridSizes g);  // the config value: exact | fft_friendly
const char* to_string(ConstraintMode m);
const char* to_string(IntegratorType t);
const char* to_string(Precision p);
const char* to_string(InitialVelocities v);
const char* to_string(RestraintReference r);
const char* to_string(ReplicaExchangeKind k);

}  // namespace mdsim
