#include "engine/simulation.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <numeric>
#include <optional>
#include <limits>
#include <set>
#include <utility>

#include <fmt/format.h>

#include "common/errors.hpp"
#include "engine/evaluator.hpp"
#include "engine/model.hpp"
#include "engine/platform.hpp"
#include "engine/resources.hpp"
#include "io/atom_selection.hpp"
#include "io/checkpoint_h5.hpp"
#include "io/config.hpp"
#include "io/frame_writer.hpp"
#include "io/output_paths.hpp"
#include "io/pdb_reader.hpp"
#include "io/pdb_writer.hpp"
#include "io/progress.hpp"
#include "io/state_log.hpp"
#include "io/trajectory_h5.hpp"
#include "io/trajectory_reader.hpp"
#include "model/imaging.hpp"
#include "platform/context.hpp"

namespace fs = std::filesystem;

namespace mdsim {

namespace {

// The output folder exists and is writable, or a clear InputError says why not.
void prepare_output_directory(const RunConfig& cfg) {
  const std::string& dir = cfg.output.directory;
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec)
    throw InputError(at_config_key(cfg, "output.directory",
                                   fmt::format("output.directory: cannot create {}: {}", dir, ec.message())));
  if (::access(dir.c_str(), W_OK) != 0)
    throw InputError(at_config_key(cfg, "output.directory", fmt::format("output.directory: {} is not writable", dir)));
}

std::string output_path(const RunConfig& cfg, const std::string& file) {
  return (fs::path(cfg.output.directory) / file).string();
}

std::int64_t next_multiple(std::int64_t step, int interval) {
  return interval > 0 ? (step / interval + 1) * interval : std::numeric_limits<std::int64_t>::max();
}

bool due(std::int64_t step, int interval) { return interval > 0 && step % interval == 0; }

// `cfg` is the config as the current stage runs it (stage_run_config) in a staged run.
Checkpoint make_checkpoint(Context& context, const RunConfig& cfg, const System& system, const std::string& config_hash) {
  StateRequest request;
  request.positions = true;
  request.velocities = true;
  const SimulationState s = context.state(request);
  Checkpoint c;
  c.step = s.step;
  c.time_ps = s.time_ps;
  c.positions_nm = s.positions_nm;
  c.velocities_nm_per_ps = s.velocities_nm_per_ps;
  if (s.has_box) c.box = s.box;
  c.seed = context.seed();
  c.rng_counter = static_cast<std::uint64_t>(s.step);  // Philox draws are keyed by the step
  c.barostat_state = context.barostat_state();
  c.config_hash = config_hash;
  c.physics = physics_settings(cfg);
  c.fingerprint = system_fingerprint(system);
  return c;
}

// The platform for this run, with the config's platform settings.
struct RunPlatform {
  PlatformChoice choice;
  PlatformConfig settings;
};

RunPlatform run_platform(const RunConfig& cfg, const PlatformChoice& choice, RunSummary& summary) {
  RunPlatform p{choice, cfg.platform};
  summary.platform = platform_description(p.choice, p.settings);
  return p;
}

// The platform's context, with the checkpoint's seed when the run resumes; or the one `made` gives (a replica batch's).
std::unique_ptr<Context> make_run_context(const RunConfig& cfg, const System& system, const RunPlatform& platform,
                                          const std::optional<Checkpoint>& restart, RunSummary& summary,
                                          const std::function<std::unique_ptr<Context>()>& made) {
  DynamicsSettings settings = dynamics_settings(cfg);
  if (restart) settings.integrator.seed = restart->seed;
  std::unique_ptr<Context> context =
      made ? made() : make_context(system, settings, platform.choice, platform.settings);
  if (made && restart && restart->seed != 0) context->set_seed(restart->seed);
  summary.seed = context->seed();
  return context;
}

// Whether two stages' dynamics settings differ (a stage then needs a context of its own).
bool same_dynamics(const DynamicsSettings& a, const DynamicsSettings& b) {
  const IntegratorConfig &x = a.integrator, &y = b.integrator;
  const bool integrator = x.type == y.type && x.temperature_k == y.temperature_k &&
                          x.friction_per_ps == y.friction_per_ps && x.timestep_ps == y.timestep_ps &&
                          x.constraint_tolerance == y.constraint_tolerance;
  const bool barostat = a.barostat.has_value() == b.barostat.has_value() &&
                        (!a.barostat || (a.barostat->pressure_bar == b.barostat->pressure_bar &&
                                         a.barostat->temperature_k == b.barostat->temperature_k &&
                                         a.barostat->interval_steps == b.barostat->interval_steps));
  return integrator && barostat && a.remove_cm_motion == b.remove_cm_motion &&
         a.remove_cm_motion_interval == b.remove_cm_motion_interval;
}

// "name: signature" of each stage, as a staged run's checkpoints record them.
std::vector<std::string> stage_protocol(const RunConfig& cfg) {
  std::vector<std::string> out;
  for (const StageConfig& st : cfg.stages) out.push_back(st.name + ": " + stage_signature(st));
  return out;
}

// --resume of a staged run continues the stages the checkpoint was written by: InputError at the first
// stage up to the checkpoint's that differs (the stages after it may change; the checkpoint's own stage
// may be lengthened), or when the checkpoint and the config disagree about having stages at all.
void check_same_stages(const RunConfig& cfg, const Checkpoint& c, const std::string& path) {
  if (cfg.stages.empty()) {
    if (c.stage)
      throw InputError(fmt::format("{}: --resume: the checkpoint was written in stage '{}' of a staged run, but the "
                                   "config has no 'stages': resume with the config that wrote it",
                                   path, c.stage->name));
    return;
  }
  if (!c.stage)
    throw_config_error(cfg, "stages",
                       fmt::format("--resume: {} was written by a run without stages; a staged config cannot continue "
                                   "it: resume with the config that wrote it, or start the stages afresh",
                                   path));
  const CheckpointStage& st = *c.stage;
  const std::vector<std::string> now = stage_protocol(cfg);
  for (int i = 0; i <= st.index; ++i) {
    const std::string key = fmt::format("stages.{}", i);
    if (i >= static_cast<int>(now.size()))
      throw_config_error(cfg, "stages",
                         fmt::format("--resume: {} was written in stage {} ('{}') but the config has {} stage{}: "
                                     "resume with the config that wrote it",
                                     path, st.index + 1, st.name, now.size(), now.size() == 1 ? "" : "s"));
    const StageConfig& stage = cfg.stages[static_cast<std::size_t>(i)];
    const std::string& old_line = st.protocol[static_cast<std::size_t>(i)];
    bool same = old_line == now[static_cast<std::size_t>(i)];
    if (!same && i == st.index) {  // the checkpoint's own stage may be lengthened: compare without the length
      StageConfig old_length = stage;
      const std::size_t at = old_line.find("steps=");
      if (at != std::string::npos) old_length.steps = std::atoll(old_line.c_str() + at + 6);
      same = old_line == stage.name + ": " + stage_signature(old_length);
      if (same && stage.steps < st.step_in_stage)
        throw_config_error(cfg, key,
                           fmt::format("--resume: {} is at step {} of stage '{}', but the config shortens the stage to "
                                       "{} steps",
                                       path, st.step_in_stage, stage.name, stage.steps));
    }
    if (!same)
      throw_config_error(cfg, key,
                         fmt::format("--resume: stage {} differs from the one {} was written by (checkpoint: \"{}\"; "
                                     "config: \"{}\"); the stages up to the checkpoint's ('{}') must stay as they "
                                     "were",
                                     i + 1, path, old_line, now[static_cast<std::size_t>(i)], st.name));
  }
  const std::int64_t first = stage_first_steps(cfg.stages)[static_cast<std::size_t>(st.index)];
  if (c.step != first + st.step_in_stage)
    throw InputError(fmt::format("{}: damaged checkpoint: step {} is not step {} of stage '{}' (which starts at {})",
                                 path, c.step, st.step_in_stage, st.name, first));
}

// --resume continues the same simulation: InputError listing every physics setting (physics_settings)
// that differs from the one the checkpoint was written with. A checkpoint from before mdsim recorded
// them carries none, and is accepted as before.
// `loading` (Python's load_checkpoint): the integrator's settable values (temperature, friction, time step, constraint
// tolerance) are the simulation's own, as after OpenMM's loadCheckpoint, and the message speaks of this simulation.
void check_same_physics(const RunConfig& cfg, const Checkpoint& checkpoint, const std::string& path,
                        bool loading = false) {
  static const std::set<std::string> kSettable = {"integrator.temperature", "integrator.friction",
                                                  "integrator.timestep", "integrator.constraint_tolerance"};
  std::string differences;
  for (const auto& [key, value] : physics_settings(cfg))
    for (const auto& [old_key, old_value] : checkpoint.physics)
      if (old_key == key && old_value != value && !(loading && kSettable.count(key) > 0))
        differences += fmt::format("{}{}: checkpoint {}, config {}", differences.empty() ? "" : "; ", key, old_value,
                                   value);
  if (differences.empty()) return;
  if (loading)
    throw InputError(fmt::format("{}: load_checkpoint continues the simulation the checkpoint belongs to, but this "
                                 "simulation's physics differ ({}): build it with the checkpoint's settings",
                                 path, differences));
  throw InputError(fmt::format("{}: --resume continues the simulation the checkpoint belongs to, but the config "
                               "changes its physics ({}); change only run length, outputs and intervals, or start a "
                               "new run from the checkpoint's final structure",
                               path, differences));
}

// The checkpoint to resume from, when the run resumes (InputError when there is none).
std::optional<Checkpoint> read_restart(const RunConfig& cfg, bool resume, const System& system,
                                       const std::string& checkpoint_file) {
  if (!resume && cfg.run.initial_velocities != InitialVelocities::FromCheckpoint) return std::nullopt;
  if (checkpoint_file.empty())
    throw_config_error(cfg, "output.checkpoint",
                       fmt::format("{} reads the checkpoint, but output.checkpoint is off (null): give it a file (the "
                                   "default is checkpoint.h5)",
                                   resume ? "--resume" : "run.initial_velocities: from_checkpoint"));
  if (!fs::exists(checkpoint_file)) throw InputError(fmt::format("{}: no checkpoint to resume from", checkpoint_file));
  Checkpoint checkpoint = read_checkpoint(checkpoint_file, system_fingerprint(system));
  if (resume) {  // from_checkpoint may change them
    check_same_stages(cfg, checkpoint, checkpoint_file);
    check_same_physics(checkpoint.stage ? stage_run_config(cfg, cfg.stages[static_cast<std::size_t>(checkpoint.stage->index)])
                                        : cfg,
                       checkpoint, checkpoint_file);
  }
  return checkpoint;
}

// A checkpoint's state into the context (the barostat's unless `barostat` is false: a new stage's barostat
// starts afresh).
void restore_state(Context& context, const Checkpoint& c, bool barostat = true) {
  context.set_positions(c.positions_nm);
  context.set_velocities(c.velocities_nm_per_ps);
  if (c.box) context.set_box(*c.box);
  context.set_step(c.step, c.time_ps);
  if (c.seed != 0) context.set_seed(c.seed);  // the random stream continues where the checkpoint left it
  if (barostat) context.set_barostat_state(c.barostat_state);
}

// The coordinate file's velocities (run.initial_velocities: from_coordinates; prepare_run checked there are some):
// massless particles (virtual sites) at rest, then constrained as drawn velocities are.
void set_coordinate_velocities(Context& context, const Model& model, double constraint_tolerance) {
  std::vector<Vec3d> v = model.velocities_nm_per_ps;
  for (std::size_t i = 0; i < v.size(); ++i)
    if (model.system.mass_amu[i] == 0.0) v[i] = Vec3d(0, 0, 0);
  context.set_velocities(v);
  if (!model.system.constraints.empty()) context.apply_constraints(constraint_tolerance);
}

// Velocities as run.initial_velocities asks: at the temperature (constrained; drawn from the seed alone,
// so drawing again after a minimisation gives the same numbers), the coordinate file's, or zero.
void set_initial_velocities(Context& context, InitialVelocities how, double temperature_k, const Model& model,
                            double constraint_tolerance, std::uint64_t seed = 0) {
  if (how == InitialVelocities::Temperature)
    context.set_velocities_to_temperature(temperature_k, seed);
  else if (how == InitialVelocities::FromCoordinates)
    set_coordinate_velocities(context, model, constraint_tolerance);
  else
    context.set_velocities(std::vector<Vec3d>(static_cast<std::size_t>(model.system.num_particles()), Vec3d(0, 0, 0)));
}
void set_initial_velocities(Context& context, const RunConfig& cfg, const Model& model) {
  set_initial_velocities(context, cfg.run.initial_velocities, cfg.integrator.temperature_k, model,
                         cfg.integrator.constraint_tolerance);
}

// A staged run's first dynamics stage draws at the context's seed (as a single run does); a later stage
// that asks for new velocities draws from the seed mixed with its index (SplitMix64), a stream of its own.
std::uint64_t stage_velocity_seed(std::uint64_t seed, std::size_t stage) {
  std::uint64_t z = seed + 0x9E3779B97F4A7C15ull * (stage + 1);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return z != 0 ? z : 1;
}

// A resumed run's frames continue from the last frame the trajectory kept (at or before `after_step`), so the
// solute does not jump where the run was interrupted (model/imaging.hpp).
void continue_imaging(const std::string& path, std::int64_t after_step, const std::vector<int>& atoms,
                      FrameImager& imager) {
  std::error_code ec;
  if (!fs::exists(path, ec)) return;
  const TrajectoryReader reader(path);
  const std::vector<std::int64_t>& steps = reader.steps();
  const auto last = std::upper_bound(steps.begin(), steps.end(), after_step);
  std::vector<int> recorded = atoms;  // empty: every atom
  if (recorded.empty()) {
    recorded.resize(static_cast<std::size_t>(reader.atoms()));
    std::iota(recorded.begin(), recorded.end(), 0);
  }
  if (last == steps.begin() || reader.atoms() != static_cast<int>(recorded.size())) return;
  const TrajectoryFrame frame = reader.read(static_cast<std::int64_t>(last - steps.begin()) - 1);
  imager.continue_from(recorded, frame.positions_nm);
}

// The run's reporters (each absent when the config switches it off).
struct Reporters {
  std::shared_ptr<FrameImager> imager;  // periodic systems: how frames and final_pdb show them
  std::unique_ptr<FrameWriter> trajectory;
  std::unique_ptr<StateLog> state_log;
  std::optional<ProgressReporter> progress;
};

Reporters open_reporters(const RunConfig& cfg, const Model& model, const std::vector<int>& trajectory_atoms,
                         Context& context, const std::string& config_hash, std::int64_t first_step,
                         std::optional<std::int64_t> append_after, bool external_forces, RunSummary& summary) {
  const bool staged = !cfg.stages.empty();
  const auto& out = cfg.output;
  const System& system = model.system;
  Reporters r;
  if (system.box) r.imager = std::make_shared<FrameImager>(molecule_trees(system), model.topology);
  if (out.trajectory.interval_steps > 0 && !out.trajectory.file.empty()) {
    TrajectoryOptions options;
    options.atoms = trajectory_atoms;
    options.selection = out.trajectory.atoms;
    options.velocities = out.trajectory.velocities;
    options.forces = out.trajectory.forces;
    options.periodic = system.box.has_value();
    options.seed = summary.seed;
    options.config_hash = config_hash;
    options.append_after_step = append_after;
    const std::vector<std::int64_t> first = stage_first_steps(cfg.stages);
    for (std::size_t i = 0; i < cfg.stages.size(); ++i)
      options.stages.push_back({cfg.stages[i].name, first[i], first[i] + cfg.stages[i].steps});
    const std::string path = output_path(cfg, out.trajectory.file);
    if (r.imager && append_after) continue_imaging(path, *append_after, trajectory_atoms, *r.imager);
    auto sink = std::make_unique<TrajectoryWriter>(path, model.topology, options);
    FrameWriterOptions writer_options;
    writer_options.flush_interval_s = out.trajectory.flush_interval_s;
    ImagePositions image;
    if (r.imager) image = [imager = r.imager](std::span<float> x, const Boxd& box) { imager->image(x, box); };
    r.trajectory = std::make_unique<FrameWriter>(
        std::move(sink), FrameLayout{system.num_particles(), out.trajectory.velocities, out.trajectory.forces},
        writer_options, context.frame_allocator(), std::move(image));
    summary.outputs.emplace_back("trajectory", path);
  }
  if (out.state.interval_steps > 0 && !out.state.file.empty()) {
    double mass = 0.0;
    for (double m : system.mass_amu) mass += m;
    const std::string path = output_path(cfg, out.state.file);
    r.state_log = std::make_unique<StateLog>(path, mass, append_after, external_forces, staged,
                                             !model.position_restraints.empty());
    summary.outputs.emplace_back("state log", path);
  }
  // A staged run opens a progress reporter per stage.
  if (out.progress && !staged) r.progress.emplace(stderr, first_step, cfg.run.steps, cfg.integrator.timestep_ps);
  return r;
}

// A trajectory frame: the platform fills the pooled (on CUDA: pinned) buffer asynchronously; the
// writer thread waits for the copy, so neither the GPU nor the step loop waits for the disk.
void write_frame(Context& context, FrameWriter& trajectory, const TrajectoryOutput& out) {
  StateRequest header_only;
  header_only.positions = false;
  const SimulationState s = context.state(header_only);
  FrameBuffer& buffer = trajectory.acquire();
  buffer.step = s.step;
  buffer.time_ps = s.time_ps;
  buffer.box = s.has_box ? std::optional<Boxd>(s.box) : std::nullopt;
  Context::FrameTarget destination;
  destination.positions_nm = buffer.positions_nm().data();
  if (out.velocities) destination.velocities_nm_per_ps = buffer.velocities_nm_per_ps().data();
  if (out.forces) destination.forces_kj_per_mol_nm = buffer.forces_kj_per_mol_nm().data();
  buffer.ready = context.capture_frame(destination);
  trajectory.submit();
}

void write_state_line(Context& context, StateLog& state_log, const std::optional<ProgressReporter>& progress,
                      std::int64_t step, bool external_column, const std::string* stage) {
  StateRequest request_state;
  request_state.positions = false;
  request_state.energy = true;
  const SimulationState s = context.state(request_state);
  StateSample sample;
  sample.step = s.step;
  sample.time_ps = s.time_ps;
  sample.potential_kj_per_mol = s.potential.total;
  sample.kinetic_kj_per_mol = s.kinetic_kj_per_mol;
  sample.temperature_k = s.temperature_k;
  if (s.has_box) sample.volume_nm3 = s.box.volume();
  if (progress) sample.speed_ns_per_day = progress->current_ns_per_day(step);
  if (external_column) sample.external_kj_per_mol = s.potential.external;
  if (state_log.restraint_column()) sample.restraint_kj_per_mol = s.potential.restraint;
  if (stage) sample.stage = *stage;
  state_log.write(sample);
}

}  // namespace

std::string checkpoint_path(const RunConfig& cfg) {
  return cfg.output.checkpoint.file.empty() ? std::string() : output_path(cfg, cfg.output.checkpoint.file);
}

namespace {

// A restraint spring the stage's time step can integrate: on an atom of mass m the spring's angular frequency
// sqrt(k/m) times the step must stay below 2 (the stability limit of the leapfrog/Verlet family), so k < 4 m / dt^2.
void check_restraint_stiffness(const RunConfig& cfg, std::size_t stage, const System& system,
                               const std::vector<int>& atoms) {
  const StageConfig& st = cfg.stages[stage];
  if (st.steps == 0 || atoms.empty()) return;  // a minimisation takes any stiffness
  int lightest = atoms.front();
  for (const int a : atoms)
    if (system.mass_amu[static_cast<std::size_t>(a)] < system.mass_amu[static_cast<std::size_t>(lightest)]) lightest = a;
  const double m = system.mass_amu[static_cast<std::size_t>(lightest)];
  const double dt = st.integrator.timestep_ps;
  const double k_max = 4.0 * m / (dt * dt);
  if (m > 0 && st.restraints->k_kj_per_mol_nm2 >= k_max)
    throw_config_error(cfg, fmt::format("stages.{}.restraints.k", stage),
                       fmt::format("stages[{}].restraints.k ({:g} kJ/mol/nm^2) is too stiff for the stage's {:g} fs "
                                   "step: on atom {} ({:g} amu) the spring needs k below 4 m / dt^2 = {:.4g} "
                                   "kJ/mol/nm^2 to stay stable; lower k (1000 kJ/mol/nm^2 is usual) or the time step",
                                   stage + 1, st.restraints->k_kj_per_mol_nm2, dt * 1e3, lightest, m, k_max));
}

// The topology's position restraints (GROMACS [position_restraints]) about the model's starting positions, each
// checked as a stage's restraint is: a spring stiffer than 4 m / dt^2 along any axis, on an atom with mass, is
// unstable at a time step the run integrates with (InputError at the restraint's file and line).
PositionRestraints topology_restraints(const RunConfig& cfg, const Model& model) {
  std::vector<std::pair<double, std::string>> steps;  // time step, where it applies
  if (cfg.stages.empty() && cfg.run.steps > 0) steps.emplace_back(cfg.integrator.timestep_ps, "");
  for (const StageConfig& st : cfg.stages)
    if (st.steps > 0) steps.emplace_back(st.integrator.timestep_ps, fmt::format(" of stage '{}'", st.name));
  PositionRestraints out;
  for (const TopologyPositionRestraint& r : model.position_restraints) {
    const Vec3d k(r.k_kj_per_mol_nm2[0], r.k_kj_per_mol_nm2[1], r.k_kj_per_mol_nm2[2]);
    const double m = model.system.mass_amu[static_cast<std::size_t>(r.atom)];
    const double k_max = std::max({k.x, k.y, k.z});
    for (const auto& [dt, where] : steps)
      if (m > 0 && k_max >= 4.0 * m / (dt * dt))
        throw InputError(located(r.file, r.line, 0,
                                 fmt::format("[ position_restraints ]: k = {:g} kJ/mol/nm^2 on particle {} ({:g} amu) "
                                             "is too stiff for the {:g} fs step{}: the spring needs k below 4 m / "
                                             "dt^2 = {:.4g} kJ/mol/nm^2 to stay stable; lower k or the time step",
                                             k_max, r.atom, m, dt * 1e3, where, 4.0 * m / (dt * dt))));
    out.add(r.atom, model.positions_nm[static_cast<std::size_t>(r.atom)], k);
  }
  return out;
}

// run.initial_velocities: from_coordinates needs coordinates with velocities (InputError naming the file).
void check_coordinate_velocities(const RunConfig& cfg, const Model& model) {
  if (cfg.run.initial_velocities != InitialVelocities::FromCoordinates || !model.velocities_nm_per_ps.empty()) return;
  throw_config_error(cfg, "run.initial_velocities",
                     fmt::format("run.initial_velocities: from_coordinates starts from the velocities of {}, which "
                                 "holds none: give coordinates with velocities (a .gro with vx vy vz, an AMBER restart "
                                 "with velocities, a serialized State with velocities), or use temperature or zero",
                                 cfg.system.pdb));
}

// What a run reads: the config, its structure, force-field files given as paths, restraint reference structures.
std::vector<RoleFile> run_inputs(const RunConfig& cfg) {
  std::vector<RoleFile> inputs{{"the config", cfg.source}};
  if (cfg.system.topology.empty()) {
    inputs.push_back({"the structure (system.pdb)", cfg.system.pdb});
  } else {
    inputs.push_back({"the topology (system.topology)", cfg.system.topology});
    inputs.push_back({"the coordinates (system.coordinates)", cfg.system.pdb});
    for (const std::string& f : cfg.system.parameters) inputs.push_back({"a parameter file (system.parameters)", f});
  }
  const fs::path base = fs::path(cfg.source).parent_path();
  std::error_code ec;
  for (const std::string& f : cfg.system.forcefield)
    if (fs::is_regular_file(base / f, ec)) inputs.push_back({"a force-field file (system.forcefield)", (base / f).string()});
  for (std::size_t i = 0; i < cfg.stages.size(); ++i)
    if (const auto& r = cfg.stages[i].restraints; r && !r->reference_file.empty())
      inputs.push_back({fmt::format("the reference structure of stages[{}].restraints", i + 1), r->reference_file});
  return inputs;
}

// What a run writes, each named by its config key: output.* and the exchange log of a replica ensemble.
std::vector<RoleFile> run_outputs(const RunConfig& cfg) {
  std::vector<RoleFile> out;
  for (const auto& [key, file] : output_files(cfg.output)) out.push_back({key, output_path(cfg, file)});
  if (cfg.replicas && cfg.replicas->exchange == ReplicaExchangeKind::Temperature)
    out.push_back({"replicas.log", output_path(cfg, cfg.replicas->log)});
  return out;
}

}  // namespace

void check_output_paths(const RunConfig& cfg) {
  const auto& out = cfg.output;
  std::error_code ec;
  const fs::file_status dir = fs::status(out.directory, ec);
  if (fs::exists(dir) && !fs::is_directory(dir))
    throw InputError(at_config_key(cfg, "output.directory",
                                   fmt::format("output.directory: {} exists and is {}, not a folder", out.directory,
                                               file_kind(dir))));
  // A folder that does not exist yet is created when the run starts: its closest existing ancestor must be a folder.
  if (!fs::exists(dir)) {
    for (fs::path p = fs::path(out.directory).lexically_normal().parent_path(); !p.empty(); p = p.parent_path()) {
      const fs::file_status ancestor = fs::status(p, ec);
      if (fs::exists(ancestor)) {
        if (!fs::is_directory(ancestor))
          throw InputError(at_config_key(cfg, "output.directory",
                                         fmt::format("output.directory: {} cannot be created: {} is {}", out.directory,
                                                     p.string(), file_kind(ancestor))));
        break;
      }
      if (p == p.parent_path()) break;
    }
  }
  const std::vector<RoleFile> outputs = run_outputs(cfg);
  if (const auto clash = find_path_clash(run_inputs(cfg), outputs))
    throw InputError(at_config_key(cfg, outputs[clash->output].role, clash->message));
  for (const auto& [key, path] : outputs) {
    const fs::file_status st = fs::status(path, ec);  // follows links: the target is what gets written
    if (fs::exists(st) && !fs::is_regular_file(st))
      throw InputError(at_config_key(cfg, key,
                                     fmt::format("{}: {} exists and is {}; an output must be a new or regular file: "
                                                 "choose another name",
                                                 key, path, file_kind(st))));
    // Only output.directory is created: a file in a folder below it (or elsewhere) needs that folder.
    const auto normal = [](fs::path p) {  // "out/" and "out" alike
      p = p.lexically_normal();
      return !p.has_filename() && p.has_parent_path() ? p.parent_path() : p;
    };
    const fs::path folder = normal(fs::path(path).parent_path());
    if (!folder.empty() && folder != normal(out.directory) && !fs::is_directory(folder, ec))
      throw InputError(at_config_key(cfg, key,
                                     fmt::format("{}: the folder {} does not exist (only output.directory is "
                                                 "created): create it or name a file in output.directory",
                                                 key, folder.string())));
  }
}

RunSetup prepare_run(const RunConfig& cfg, const Model& model, bool resume, bool platform_notice) {
  RunSetup setup;
  const auto& out = cfg.output;
  if (out.trajectory.interval_steps > 0 && !out.trajectory.file.empty()) {
    setup.trajectory_atoms = select_atoms(model.topology, out.trajectory.atoms,
                                          at_config_key(cfg, "output.trajectory.atoms", "output.trajectory.atoms"));
  }
  try {
    setup.platform = choose_platform(cfg.platform.name, cfg.platform.device);
  } catch (const InputError& e) {
    throw_config_error(cfg, "platform.name", e.what());
  }
  if (platform_notice && !setup.platform.notice.empty()) std::fprintf(stderr, "%s\n", setup.platform.notice.c_str());
  for (std::size_t i = 0; i < cfg.stages.size(); ++i) {
    StageSetup stage;
    if (const auto& r = cfg.stages[i].restraints) {
      const std::string key = fmt::format("stages.{}.restraints", i);
      stage.restraint_atoms =
          select_atoms(model.topology, r->atoms, at_config_key(cfg, key + ".atoms", fmt::format("stages[{}].restraints.atoms", i + 1)));
      check_restraint_stiffness(cfg, i, model.system, stage.restraint_atoms);
      if (r->reference == RestraintReference::File) {
        const std::string where = at_config_key(cfg, key + ".reference", fmt::format("stages[{}].restraints.reference", i + 1));
        Topology reference;
        try {
          reference = read_pdb(r->reference_file);
        } catch (const InputError& e) {
          throw InputError(fmt::format("{}: {}", where, e.what()));
        }
        if (reference.num_atoms() != model.topology.num_atoms() ||
            reference.positions_nm.size() != static_cast<std::size_t>(model.topology.num_atoms()))
          throw InputError(fmt::format("{}: {} has {} atoms, the system {}: the reference must hold the same atoms in "
                                       "the same order{}",
                                       where, r->reference_file, reference.num_atoms(), model.topology.num_atoms(),
                                       cfg.system.replicate != std::array<int, 3>{1, 1, 1} ? " (with system.replicate, "
                                                                                            "the tiled system's)"
                                                                                          : ""));
        for (const int a : stage.restraint_atoms) {
          const TopologyAtom& x = model.topology.atoms[static_cast<std::size_t>(a)];
          const TopologyAtom& y = reference.atoms[static_cast<std::size_t>(a)];
          if (x.name != y.name)
            throw InputError(fmt::format("{}: atom {} is {} in the structure but {} in {} (line {}): the reference must "
                                         "hold the same atoms in the same order",
                                         where, a, x.name, y.name, r->reference_file, y.line));
          stage.reference_from_file_nm.push_back(reference.positions_nm[static_cast<std::size_t>(a)]);
        }
      }
    }
    setup.stages.push_back(std::move(stage));
  }
  setup.topology_restraints = topology_restraints(cfg, model);
  check_platform_memory(cfg, model.system, setup.platform);
  setup.restart = read_restart(cfg, resume, model.system, checkpoint_path(cfg));
  if (!setup.restart) check_coordinate_velocities(cfg, model);  // a resumed run takes the checkpoint's
  check_trajectory_space(cfg, static_cast<std::int64_t>(setup.trajectory_atoms.size()),
                         setup.restart ? setup.restart->step : 0);
  return setup;
}

struct Simulation::Impl {
  RunConfig cfg;
  RunRequest request;
  Model model;
  RunSetup setup;
  RunPlatform platform;
  std::string config_hash;
  std::string checkpoint_file;
  RunSummary summary;  // platform and seed; the rest filled by run()
  std::unique_ptr<Context> context;
  bool fresh = true;  // nothing has changed the initial state yet (run() then minimises when the config asks)
  bool outputs_opened = false;  // a run() of this simulation wrote the outputs: a later run() appends to them
  // The run in progress (start_run .. finish_run).
  bool running = false;
  std::unique_ptr<Reporters> reporters;
  RunSummary run_summary;
  std::int64_t first_step = 0;
  double simulated_ps = 0.0;
  std::chrono::steady_clock::time_point started;
  bool external_forces = false;
  std::vector<StepObserver> observers;  // called during runs (set_observers)
  bool final_structure = true;  // finish_run writes output.final_pdb (not after step_reported)
  bool stepping = false;  // step_reported() left the outputs open

  // Staged runs (cfg.stages not empty).
  DynamicsSettings settings;               // the context's
  std::vector<std::int64_t> stage_first;   // first step of each stage
  std::size_t stage = 0;                   // the stage the state is in
  bool stage_started = false;              // its start (context, restraints, minimisation, velocities) is done
  std::vector<Vec3d> stage_reference;      // the restrained atoms' reference positions in force now
  bool restraints_on = false;              // the context has restraints (a stage without them clears them)
  // The previous stage's end, taken before a stage's minimisation: what finish_run writes as the checkpoint when
  // a stop request interrupts that minimisation (nothing when the stage is the first).
  std::optional<Checkpoint> before_stage_start;
  bool minimization_interrupted = false;

  bool staged() const { return !cfg.stages.empty(); }
  const StageConfig& current_stage() const { return cfg.stages[stage]; }
  RunConfig effective_config() const { return staged() ? stage_run_config(cfg, current_stage()) : cfg; }

  Checkpoint checkpoint() {
    Checkpoint c = make_checkpoint(*context, effective_config(), model.system, config_hash);
    if (staged()) {
      CheckpointStage st;
      st.index = static_cast<int>(stage);
      st.name = current_stage().name;
      st.step_in_stage = c.step - stage_first[stage];
      st.protocol = stage_protocol(cfg);
      const auto& r = current_stage().restraints;
      if (r && r->reference == RestraintReference::Start) st.reference_nm = stage_reference;
      c.stage = std::move(st);
    }
    return c;
  }

  // `restraints` (a stage's) and the topology's own (setup.topology_restraints, in force in every stage) on the
  // context; nothing to do when there were none and are none.
  void set_restraints(PositionRestraints restraints) {
    const PositionRestraints& topology = setup.topology_restraints;
    for (std::size_t e = 0; e < topology.atoms.size(); ++e)
      restraints.add(topology.atoms[e], topology.reference_nm[e], topology.k_kj_per_mol_nm2[e]);
    if (restraints.empty() && !restraints_on) return;  // none before, none now
    context->set_position_restraints(restraints);
    restraints_on = !restraints.empty();
  }

  // The current stage's restraints on the context (with the topology's), referenced to `start` (the stage's
  // start positions) or to what the config names; `start` null: from stage_reference (a resumed stage).
  void apply_stage_restraints(const std::vector<Vec3d>* start) {
    const StageConfig& st = current_stage();
    PositionRestraints restraints;
    if (st.restraints) {
      restraints.atoms = setup.stages[stage].restraint_atoms;
      restraints.set_isotropic_k(st.restraints->k_kj_per_mol_nm2);
      switch (st.restraints->reference) {
        case RestraintReference::Initial:
          for (const int a : restraints.atoms) restraints.reference_nm.push_back(model.positions_nm[static_cast<std::size_t>(a)]);
          break;
        case RestraintReference::File: restraints.reference_nm = setup.stages[stage].reference_from_file_nm; break;
        case RestraintReference::Start:
          if (start)
            for (const int a : restraints.atoms) restraints.reference_nm.push_back((*start)[static_cast<std::size_t>(a)]);
          else
            restraints.reference_nm = stage_reference;
          break;
      }
    }
    stage_reference = restraints.reference_nm;
    set_restraints(std::move(restraints));
  }

  // Whether the stages differ in their dynamics settings (then run() or load_checkpoint() may switch contexts).
  bool switches_context() const {
    for (const StageConfig& st : cfg.stages) {
      DynamicsSettings next = dynamics_settings(stage_run_config(cfg, st));
      next.integrator.seed = settings.integrator.seed;
      if (!same_dynamics(next, settings)) return true;
    }
    return false;
  }

  // A context with the current stage's dynamics settings, when they differ from the context's: the state
  // (positions, velocities, box, step, time, seed; the barostat's when the barostat stays the same) carries
  // over. Waits for the trajectory's frames first (the CUDA context's captures are in flight).
  void switch_context(FrameWriter* trajectory) {
    DynamicsSettings next = dynamics_settings(stage_run_config(cfg, current_stage()));
    next.integrator.seed = context->seed();
    if (same_dynamics(next, settings)) return;
    if (trajectory) trajectory->flush();
    const Checkpoint state = make_checkpoint(*context, effective_config(), model.system, config_hash);
    const bool same_barostat = next.barostat.has_value() && settings.barostat.has_value() &&
                               next.barostat->pressure_bar == settings.barostat->pressure_bar &&
                               next.barostat->temperature_k == settings.barostat->temperature_k &&
                               next.barostat->interval_steps == settings.barostat->interval_steps;
    const auto make = [this](const DynamicsSettings& with) {
      return make_context(model.system, with, platform.choice, platform.settings);
    };
    context.reset();  // one context's device memory at a time
    try {
      context = make(next);
    } catch (...) {  // (out of device memory, say): the previous stage's context again, so the Simulation stays usable
      context = make(settings);
      restore_state(*context, state);
      restraints_on = false;
      set_restraints({});  // the topology's at least
      throw;
    }
    restore_state(*context, state, same_barostat);
    settings = next;
    restraints_on = false;
  }
};

Simulation::Simulation(RunConfig config, RunRequest request) : impl_(std::make_unique<Impl>()) {
  Impl& s = *impl_;
  s.cfg = std::move(config);
  s.request = std::move(request);
  if (s.request.quiet) s.cfg.output.progress = false;
  if (s.cfg.replicas)
    throw_config_error(s.cfg, "replicas",
                       "the config describes an ensemble of replicas ('replicas:'), which `mdsim run` runs "
                       "(mpirun -n N mdsim run over MPI ranks); a Simulation is one simulation: remove 'replicas' "
                       "for it");
  check_output_paths(s.cfg);
  s.model = s.request.model ? *s.request.model : build_model(s.cfg);
  s.config_hash = content_hash_hex(s.request.config_text);
  s.setup = prepare_run(s.cfg, s.model, s.request.resume, s.request.platform_notice);
  if (s.request.restart) s.setup.restart = std::move(s.request.restart);
  s.platform = run_platform(s.cfg, s.setup.platform, s.summary);
  s.checkpoint_file = checkpoint_path(s.cfg);
  if (s.staged()) {
    s.stage_first = stage_first_steps(s.cfg.stages);
    if (s.setup.restart && s.setup.restart->stage) {
      s.stage = static_cast<std::size_t>(s.setup.restart->stage->index);
      s.stage_started = true;
      s.stage_reference = s.setup.restart->stage->reference_nm;
    }
  }
  const RunConfig effective = s.effective_config();
  s.context = make_run_context(effective, s.model.system, s.platform, s.setup.restart, s.summary, s.request.context);
  s.settings = dynamics_settings(effective);
  s.settings.integrator.seed = s.context->seed();
  s.set_restraints({});  // the topology's, from the start (a stage adds its own when it starts)
  if (s.setup.restart) {
    restore_state(*s.context, *s.setup.restart);
    s.fresh = false;
    if (s.stage_started) s.apply_stage_restraints(nullptr);
  } else {
    s.context->set_positions(s.model.positions_nm);
    if (!s.model.system.constraints.empty()) s.context->apply_constraints(effective.integrator.constraint_tolerance);
    set_initial_velocities(*s.context, s.cfg, s.model);
  }
}

Simulation::~Simulation() {
  try {
    end_steps();  // step_reported()'s outputs closed whole
  } catch (const std::exception& e) {
    std::fprintf(stderr, "mdsim: closing the outputs failed: %s\n", e.what());
  }
}

const RunConfig& Simulation::config() const { return impl_->cfg; }
const Model& Simulation::model() const { return impl_->model; }
Context& Simulation::context() { return *impl_->context; }
const std::string& Simulation::platform_description() const { return impl_->summary.platform; }
PlatformKind Simulation::platform_kind() const { return impl_->platform.choice.kind; }

MinimizationResult Simulation::minimize(double tolerance_kj_per_mol_nm, int max_iterations) {
  impl_->fresh = false;
  return impl_->context->minimize(tolerance_kj_per_mol_nm, max_iterations);
}

void Simulation::step(int steps) {
  if (steps < 0) throw InputError(fmt::format("step: the number of steps must not be negative, got {}", steps));
  impl_->fresh = false;
  impl_->context->step(steps);
}

void Simulation::add_external_force(std::shared_ptr<ExternalForce> force) {
  impl_->context->add_external_force(std::move(force));
  impl_->external_forces = true;
}

void Simulation::remove_external_force(const ExternalForce* force) { impl_->context->remove_external_force(force); }

void Simulation::set_integrator(const IntegratorConfig& integrator) {
  Impl& s = *impl_;
  if (s.staged())
    throw InputError(at_config_key(s.cfg, "stages", "the integrator of a config with stages is each stage's own: "
                                                    "change it in the stages"));
  s.context->set_integrator(integrator);
  const std::uint64_t seed = s.cfg.integrator.seed;  // the config's (0: chosen at start); the context keeps its own
  s.cfg.integrator = s.context->dynamics().integrator;
  s.cfg.integrator.seed = seed;
  if (s.cfg.barostat && s.context->dynamics().barostat) s.cfg.barostat = s.context->dynamics().barostat;
}

void Simulation::set_outputs(const OutputConfig& output, bool continue_existing) {
  end_steps();
  Impl& s = *impl_;
  if (s.running) throw RuntimeError("set_outputs: a run is in progress");
  if (s.staged())
    throw InputError(at_config_key(s.cfg, "stages", "the outputs of a config with stages are its output: section's "
                                                    "(each stage sets its intervals)"));
  RunConfig next = s.cfg;
  next.output = output;
  if (s.request.quiet) next.output.progress = false;
  check_output_paths(next);
  std::vector<int> atoms;
  if (next.output.trajectory.interval_steps > 0 && !next.output.trajectory.file.empty())
    atoms = select_atoms(s.model.topology, next.output.trajectory.atoms, "the trajectory's atoms");
  s.cfg = std::move(next);
  s.setup.trajectory_atoms = std::move(atoms);
  s.checkpoint_file = checkpoint_path(s.cfg);
  if (continue_existing) s.outputs_opened = true;
}

void Simulation::set_observers(std::vector<StepObserver> observers) { impl_->observers = std::move(observers); }

Checkpoint Simulation::checkpoint() { return impl_->checkpoint(); }

bool Simulation::may_switch_context() const { return impl_->staged() && impl_->switches_context(); }

void Simulation::save_checkpoint(const std::string& path) {
  // Not an input of the run, nor one of its other outputs (the run's own checkpoint file is fine).
  std::vector<RoleFile> inputs = run_inputs(impl_->cfg);
  for (const RoleFile& output : run_outputs(impl_->cfg))
    if (output.role != "output.checkpoint.file") inputs.push_back(output);
  check_outputs_apart(inputs, {{"save_checkpoint's file", path}});
  write_checkpoint(path, checkpoint());
}

void Simulation::load_checkpoint(const std::string& path) {
  end_steps();
  Impl& s = *impl_;
  const Checkpoint c = read_checkpoint(path, system_fingerprint(s.model.system));
  check_same_stages(s.cfg, c, path);
  if (s.staged()) {
    if (s.external_forces && s.switches_context())
      throw InputError(fmt::format("{}: load_checkpoint: the config's stages differ in integrator or barostat, so the "
                                   "checkpoint's stage may need a new context, which cannot take the forces added "
                                   "with add_force",
                                   path));
    // The checkpoint's stage: its context (settings), state and restraints.
    s.stage = static_cast<std::size_t>(c.stage->index);
    check_same_physics(s.effective_config(), c, path);
    s.switch_context(nullptr);
    restore_state(*s.context, c);
    s.stage_started = true;
    s.stage_reference = c.stage->reference_nm;
    s.apply_stage_restraints(nullptr);
  } else {
    check_same_physics(s.cfg, c, path, /*loading=*/true);
    restore_state(*s.context, c);
  }
  s.summary.seed = s.context->seed();
  s.fresh = false;
}

namespace {

// The line a minimisation prints ("stage NAME: " or the replica's label first).
void print_minimization(const std::string& prefix, const MinimizationResult& m) {
  fmt::print("{}minimized: {:.3f} -> {:.3f} kJ/mol in {} iterations, max force {:.3f} kJ/mol/nm{}\n", prefix,
             m.initial_energy, m.final_energy, m.iterations, m.max_force_kj_per_mol_nm,
             m.interrupted ? " (interrupted by a stop request)" : m.converged ? "" : " (not converged)");
}

// Reporting intervals of a run or stage, and the observers called during it.
struct Intervals {
  int trajectory = 0, state = 0, checkpoint = 0;
  const std::vector<StepObserver>* observers = nullptr;
};

// The first step after `step` at which an observer is due (INT64_MAX: none).
std::int64_t next_observer_step(std::int64_t step, const std::vector<StepObserver>* observers) {
  std::int64_t next = std::numeric_limits<std::int64_t>::max();
  if (observers)
    for (const StepObserver& o : *observers)
      if (o.interval_steps > 0) next = std::min(next, next_multiple(step, o.interval_steps));
  return next;
}

}  // namespace

// The step loop of a run (or of one stage): from the context's step to `last_step`, reporting at the
// multiples of the intervals. False when a stop request ended it early.
static bool run_steps(Simulation& sim, Context& context, Reporters& reporters, const RunConfig& cfg,
                      const RunRequest& request, const std::string& checkpoint_file, std::int64_t last_step,
                      const Intervals& every, bool external_forces, const std::string* stage) {
  auto& [imager, trajectory, state_log, progress] = reporters;
  StateRequest header_only;
  header_only.positions = false;
  std::int64_t step = context.state(header_only).step;
  while (step < last_step) {
    // A stop request (SIGINT/SIGTERM) is honoured at the next restart point (a multiple of
    // kRestartIntervalSteps or a checkpoint step), where the checkpoint written lets a resumed run
    // continue bit for bit as an uninterrupted one.
    if (request.stop && request.stop->load() &&
        (step % kRestartIntervalSteps == 0 || due(step, every.checkpoint)))
      return false;
    // Advance to the next reporting step or restart point.
    std::int64_t target = std::min<std::int64_t>(last_step, next_multiple(step, kRestartIntervalSteps));
    target = std::min(target, next_multiple(step, every.trajectory));
    target = std::min(target, next_multiple(step, every.state));
    target = std::min(target, next_multiple(step, every.checkpoint));
    target = std::min(target, next_observer_step(step, every.observers));
    context.step(static_cast<int>(target - step));
    step = target;

    if (trajectory && due(step, every.trajectory)) write_frame(context, *trajectory, cfg.output.trajectory);
    if (state_log && due(step, every.state)) write_state_line(context, *state_log, progress, step, external_forces, stage);
    if (due(step, every.checkpoint)) {
      context.mark_restart_point();  // also without a checkpoint file: the same trajectory either way
      if (!checkpoint_file.empty()) {
        if (trajectory) trajectory->flush();  // the trajectory on disk reaches at least the checkpoint's step
        write_checkpoint(checkpoint_file, sim.checkpoint());
      }
    }
    if (every.observers)
      for (const StepObserver& o : *every.observers)
        if (due(step, o.interval_steps)) o.call(step);
    if (progress) progress->update(step);
  }
  return true;
}

bool Simulation::minimize_at_start() {
  Impl& s = *impl_;
  const RunConfig& cfg = s.cfg;
  if (!s.fresh || !cfg.minimize) return true;
  const MinimizationResult m = s.context->minimize(cfg.minimize->tolerance_kj_per_mol_nm, cfg.minimize->max_iterations);
  if (!s.request.quiet) print_minimization(s.request.label, m);
  if (m.interrupted) return false;
  set_initial_velocities(*s.context, cfg, s.model);  // at the minimised positions
  s.fresh = false;
  return true;
}

bool Simulation::start_run() {
  Impl& s = *impl_;
  const RunConfig& cfg = s.cfg;
  if (s.running) throw RuntimeError("start_run: the run has started already");
  if (s.external_forces && s.switches_context())
    throw InputError(at_config_key(cfg, "stages",
                                   "the stages change the integrator or barostat, so the run continues on new "
                                   "contexts, which cannot take the forces added with add_force; keep the stages' "
                                   "integrator and barostat alike"));
  // Everything the user could get wrong has been checked: from here on files are written.
  prepare_output_directory(cfg);
  if (!minimize_at_start()) return false;
  s.fresh = false;

  StateRequest header_only;
  header_only.positions = false;
  s.run_summary = s.summary;
  s.first_step = s.context->state(header_only).step;
  const std::optional<std::int64_t> append_after =
      s.setup.restart || s.outputs_opened ? std::optional<std::int64_t>(s.first_step) : std::nullopt;
  s.outputs_opened = true;
  s.reporters = std::make_unique<Reporters>(open_reporters(cfg, s.model, s.setup.trajectory_atoms, *s.context,
                                                           s.config_hash, s.first_step, append_after,
                                                           s.external_forces, s.run_summary));
  if (!s.checkpoint_file.empty()) s.run_summary.outputs.emplace_back("checkpoint", s.checkpoint_file);
  s.simulated_ps = 0.0;
  s.started = std::chrono::steady_clock::now();
  s.running = true;
  return true;
}

bool Simulation::run_to(std::int64_t step) {
  Impl& s = *impl_;
  const RunConfig& cfg = s.cfg;
  if (!s.running) throw RuntimeError("run_to: start_run() first");
  if (s.staged()) throw RuntimeError("run_to: a staged config runs through run()");
  return steps_to(std::min(step, cfg.run.steps));
}

// The steps of a run without stages to `target` with the output section's reporters and the observers (run_to,
// run_for, step_reported); false when a stop request ended them early.
bool Simulation::steps_to(std::int64_t target) {
  Impl& s = *impl_;
  const auto& out = s.cfg.output;
  const Intervals every{out.trajectory.interval_steps, out.state.interval_steps, out.checkpoint.interval_steps,
                        &s.observers};
  s.run_summary.stopped_early = !run_steps(*this, *s.context, *s.reporters, s.cfg, s.request, s.checkpoint_file,
                                           target, every, s.external_forces, nullptr);
  return !s.run_summary.stopped_early;
}

void Simulation::flush_outputs() {
  Impl& s = *impl_;
  if (s.reporters && s.reporters->trajectory) s.reporters->trajectory->flush();
}

// A run that a stop request ended in its start's minimisation: nothing was written.
RunSummary Simulation::stopped_in_minimization() {
  RunSummary stopped = impl_->summary;
  stopped.first_step = stopped.last_step = impl_->context->state(StateRequest{false, false}).step;
  stopped.stopped_early = stopped.stopped_in_minimization = true;
  return stopped;
}

RunSummary Simulation::run_for(std::int64_t steps) {
  end_steps();
  Impl& s = *impl_;
  if (s.staged())
    throw InputError(at_config_key(s.cfg, "stages",
                                   "a config with stages runs them in order: run() takes no length for it (step(n) "
                                   "advances without reporters)"));
  if (steps < 0) throw InputError(fmt::format("run: the length must not be negative, got {} steps", steps));
  if (!start_run()) return stopped_in_minimization();
  auto& progress = s.reporters->progress;  // counts to this run's end, not run.steps
  if (progress) progress.emplace(stderr, s.first_step, s.first_step + steps, s.cfg.integrator.timestep_ps);
  finish_on_error([&] { steps_to(s.first_step + steps); });
  return finish_run();
}

bool Simulation::step_reported(std::int64_t steps) {
  Impl& s = *impl_;
  if (s.staged())
    throw InputError(at_config_key(s.cfg, "stages", "a config with stages reports through run() (step(n) of a "
                                                    "staged config advances without reporters)"));
  if (!s.stepping) {
    s.fresh = false;  // step(n) never minimises
    start_run();
    s.reporters->progress.reset();
    s.stepping = true;
  }
  const std::int64_t now = s.context->state(StateRequest{false, false}).step;
  bool done = true;
  finish_on_error([&] { done = steps_to(now + steps); });
  if (!done) end_steps();
  return done;
}

bool Simulation::steps_report() const {
  const Impl& s = *impl_;
  const OutputConfig& out = s.cfg.output;
  return !s.staged() && (!s.observers.empty() || (out.trajectory.interval_steps > 0 && !out.trajectory.file.empty()) ||
                         (out.state.interval_steps > 0 && !out.state.file.empty()) || !out.checkpoint.file.empty());
}

void Simulation::end_steps() {
  Impl& s = *impl_;
  if (!s.stepping) return;
  s.final_structure = false;
  finish_run(s.run_summary.stopped_early);
}

// What an observer, an external force or the platform throws during a run's steps ends the run as a stop request
// does (every output closed, whole), then goes on to the caller.
void Simulation::finish_on_error(const std::function<void()>& steps) {
  try {
    steps();
  } catch (...) {
    if (impl_->running) {
      try {
        finish_run(/*stopped_early=*/true);
      } catch (...) {  // the first error is the one to report
      }
    }
    throw;
  }
}

RunSummary Simulation::run() {
  end_steps();
  Impl& s = *impl_;
  const RunConfig& cfg = s.cfg;
  if (s.outputs_opened && !s.running) {  // a second run(): nothing to do once the config's end is reached
    const std::int64_t now = s.context->state(StateRequest{false, false}).step;
    if (s.staged() ? s.stage >= cfg.stages.size() : now >= cfg.run.steps) {
      RunSummary done = s.summary;
      done.first_step = done.last_step = now;
      done.already_complete = true;
      return done;
    }
  }
  if (!start_run()) return stopped_in_minimization();  // a stop request during the start's minimisation
  RunSummary& summary = s.run_summary;
  auto& [imager, trajectory, state_log, progress] = *s.reporters;
  StateRequest header_only;
  header_only.positions = false;
  const auto& out = cfg.output;
  if (!s.staged()) {
    finish_on_error([&] { run_to(cfg.run.steps); });
  } else {
    std::size_t first_dynamics = 0;
    while (first_dynamics < cfg.stages.size() && cfg.stages[first_dynamics].steps == 0) ++first_dynamics;
    for (; s.stage < cfg.stages.size(); ++s.stage, s.stage_started = false) {
      const StageConfig& st = s.current_stage();
      const std::int64_t stage_end = s.stage_first[s.stage] + st.steps;
      if (!s.stage_started) {
        // The stage's start: its context, restraints, minimisation and (first dynamics stage, or when asked)
        // velocities. A resumed run skips this for the checkpoint's stage, whose start is behind it.
        if (st.minimize && s.stage > 0 && !s.checkpoint_file.empty()) {
          --s.stage;  // still the previous stage's context and state
          s.before_stage_start = s.checkpoint();
          ++s.stage;
        }
        s.switch_context(trajectory.get());
        s.context->mark_restart_point();
        const SimulationState at_start = s.context->state(StateRequest{});
        s.apply_stage_restraints(&at_start.positions_nm);
        if (st.minimize) {
          const MinimizationResult m = s.context->minimize(st.minimize->tolerance_kj_per_mol_nm, st.minimize->max_iterations);
          if (!s.request.quiet) print_minimization(fmt::format("stage {}: ", st.name), m);
          if (m.interrupted) {
            summary.stopped_early = summary.stopped_in_minimization = s.minimization_interrupted = true;
            break;
          }
        }
        if (st.steps > 0 && (s.stage == first_dynamics || st.initial_velocities)) {
          const InitialVelocities how = st.initial_velocities.value_or(cfg.run.initial_velocities);
          set_initial_velocities(*s.context, how, st.integrator.temperature_k, s.model,
                                 st.integrator.constraint_tolerance,
                                 s.stage == first_dynamics ? 0 : stage_velocity_seed(s.context->seed(), s.stage));
        }
        s.stage_started = true;
      }
      if (st.steps == 0) continue;
      const std::int64_t stage_start = s.context->state(header_only).step;
      if (out.progress)
        progress.emplace(stderr, stage_start, stage_end, st.integrator.timestep_ps,
                         ProgressOptions{std::nullopt, 0.25, 10.0, fmt::format("stage {}: ", st.name)});
      const Intervals every{st.trajectory_interval_steps, st.state_interval_steps, st.checkpoint_interval_steps,
                            &s.observers};
      finish_on_error([&] {
        summary.stopped_early = !run_steps(*this, *s.context, *s.reporters, cfg, s.request, s.checkpoint_file,
                                           stage_end, every, s.external_forces, &st.name);
      });
      const std::int64_t reached = s.context->state(header_only).step;
      if (progress) progress->finish(reached);
      progress.reset();
      s.simulated_ps += static_cast<double>(reached - stage_start) * st.integrator.timestep_ps;
      if (summary.stopped_early) break;
    }
    if (s.stage == cfg.stages.size()) {  // done: the state stays in the last stage (its checkpoint says so)
      s.stage = cfg.stages.size() - 1;
      s.stage_started = true;
    }
  }
  return finish_run();
}

RunSummary Simulation::finish_run(bool stopped_early) {
  Impl& s = *impl_;
  const RunConfig& cfg = s.cfg;
  if (!s.running) throw RuntimeError("finish_run: start_run() first");
  s.running = false;
  s.stepping = false;
  RunSummary summary = s.run_summary;
  summary.stopped_early = summary.stopped_early || stopped_early;
  auto& [imager, trajectory, state_log, progress] = *s.reporters;
  StateRequest header_only;
  header_only.positions = false;
  Context& context = *s.context;
  const std::int64_t step = context.state(header_only).step;
  if (!s.staged()) {
    if (progress) progress->finish(step);
    s.simulated_ps = static_cast<double>(step - s.first_step) * cfg.integrator.timestep_ps;
  }
  summary.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - s.started).count();
  const auto& out = cfg.output;

  // Final outputs: the checkpoint (after the trajectory reached its step), the state log, the final
  // structure (each whole or absent: written under a temporary name), and last the trajectory's
  // complete=1, so that mark means every output of the run was written.
  if (trajectory) trajectory->flush();
  if (!s.checkpoint_file.empty()) {
    if (!s.minimization_interrupted)
      write_checkpoint(s.checkpoint_file, checkpoint());
    else if (s.before_stage_start)
      write_checkpoint(s.checkpoint_file, *s.before_stage_start);  // the last restart point: the previous stage's end
  }
  s.minimization_interrupted = false;
  s.before_stage_start.reset();
  if (state_log) state_log->close();
  const bool final_structure = std::exchange(s.final_structure, true);
  if (!out.final_pdb.empty() && !summary.stopped_early && final_structure) {
    StateRequest positions_only;
    SimulationState st = context.state(positions_only);
    if (imager && st.has_box) imager->image(st.positions_nm, st.box);  // as the frames show it
    const std::string path = output_path(cfg, out.final_pdb);
    write_pdb(path, s.model.topology, st.positions_nm, st.has_box ? std::optional<Boxd>(st.box) : std::nullopt);
    summary.outputs.emplace_back("final structure", path);
  }
  if (trajectory) trajectory->close();
  s.reporters.reset();

  summary.first_step = s.first_step;
  summary.last_step = step;
  summary.simulated_ps = s.simulated_ps;
  summary.ns_per_day = summary.wall_s > 0 ? summary.simulated_ps * 1e-3 * 86400.0 / summary.wall_s : 0.0;
  return summary;
}

namespace {

// A run whose outputs were all finished: the trajectory (when written) marked complete, the final structure (when
// written) there. The trajectory's complete mark is the run's last write.
bool outputs_finished(const RunConfig& cfg) {
  const auto& out = cfg.output;
  std::error_code ec;
  if (!out.final_pdb.empty() && !fs::is_regular_file(output_path(cfg, out.final_pdb), ec)) return false;
  if (out.trajectory.interval_steps > 0 && !out.trajectory.file.empty()) {
    try {
      return TrajectoryReader(output_path(cfg, out.trajectory.file)).complete();
    } catch (const std::exception&) {
      return false;
    }
  }
  return true;
}

}  // namespace

RunSummary run_simulation(const RunConfig& cfg, const RunRequest& request) {
  Simulation simulation(cfg, request);
  // --resume of a run that had finished: say so and touch nothing (a rerun would rewrite its final outputs).
  const std::int64_t step = request.resume ? simulation.context().state(StateRequest{false, false}).step : 0;
  if (request.resume && step >= cfg.run.steps && outputs_finished(cfg)) {
    RunSummary done;
    done.first_step = done.last_step = step;
    done.already_complete = true;
    done.platform = simulation.platform_description();
    return done;
  }
  return simulation.run();
}

}  // namespace mdsim
