#include "engine/simulation.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>

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
#include "io/pdb_writer.hpp"
#include "io/progress.hpp"
#include "io/state_log.hpp"
#include "io/trajectory_h5.hpp"
#include "kernels/cpu/cpu_context.hpp"
#include "kernels/cuda/cuda_context.hpp"
#include "kernels/plan/context.hpp"

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

// The checkpoint file's path, "" when the config has none.
std::string checkpoint_path(const RunConfig& cfg) {
  return cfg.output.checkpoint.file.empty() ? std::string() : output_path(cfg, cfg.output.checkpoint.file);
}

std::int64_t next_multiple(std::int64_t step, int interval) {
  return interval > 0 ? (step / interval + 1) * interval : std::numeric_limits<std::int64_t>::max();
}

bool due(std::int64_t step, int interval) { return interval > 0 && step % interval == 0; }

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

// The platform for this run, with its CUDA options.
struct RunPlatform {
  PlatformChoice choice;
  CudaOptions cuda;
};

RunPlatform run_platform(const RunConfig& cfg, const PlatformChoice& choice, RunSummary& summary) {
  RunPlatform p{choice, cuda_options(cfg.platform, choice.device)};
  summary.platform = p.choice.kind == PlatformKind::Cuda
                         ? std::string(p.cuda.double_precision ? "cuda (double precision)" : "cuda (mixed precision)")
                         : std::string("cpu (double precision)");
  return p;
}

// The platform's context: the CPU reference or the CUDA context (whole step on the GPU), with the
// checkpoint's seed when the run resumes.
std::unique_ptr<Context> make_context(const RunConfig& cfg, const System& system, const RunPlatform& platform,
                                      const std::optional<Checkpoint>& restart, RunSummary& summary) {
  DynamicsSettings settings = dynamics_settings(cfg);
  if (restart) settings.integrator.seed = restart->seed;
  std::unique_ptr<Context> context = platform.choice.kind == PlatformKind::Cuda
                                         ? make_cuda_context(system, settings, platform.cuda)
                                         : make_cpu_context(system, settings);
  summary.seed = context->seed();
  return context;
}

// --resume continues the same simulation: InputError listing every physics setting (physics_settings)
// that differs from the one the checkpoint was written with. A checkpoint from before mdsim recorded
// them carries none, and is accepted as before.
void check_same_physics(const RunConfig& cfg, const Checkpoint& checkpoint, const std::string& path) {
  std::string differences;
  for (const auto& [key, value] : physics_settings(cfg))
    for (const auto& [old_key, old_value] : checkpoint.physics)
      if (old_key == key && old_value != value)
        differences += fmt::format("{}{}: checkpoint {}, config {}", differences.empty() ? "" : "; ", key, old_value,
                                   value);
  if (differences.empty()) return;
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
  if (resume) check_same_physics(cfg, checkpoint, checkpoint_file);  // from_checkpoint may change them
  return checkpoint;
}

// A checkpoint's state into the context.
void restore_state(Context& context, const Checkpoint& c) {
  context.set_positions(c.positions_nm);
  context.set_velocities(c.velocities_nm_per_ps);
  if (c.box) context.set_box(*c.box);
  context.set_step(c.step, c.time_ps);
  context.set_barostat_state(c.barostat_state);
}

// Velocities as run.initial_velocities asks: at the temperature (constrained; drawn from the seed alone,
// so drawing again after a minimisation gives the same numbers) or zero.
void set_initial_velocities(Context& context, const RunConfig& cfg, int particles) {
  if (cfg.run.initial_velocities == InitialVelocities::Temperature)
    context.set_velocities_to_temperature(cfg.integrator.temperature_k, 0);
  else
    context.set_velocities(std::vector<Vec3d>(static_cast<std::size_t>(particles), Vec3d(0, 0, 0)));
}

// The run's reporters (each absent when the config switches it off).
struct Reporters {
  std::unique_ptr<FrameWriter> trajectory;
  std::unique_ptr<StateLog> state_log;
  std::optional<ProgressReporter> progress;
};

Reporters open_reporters(const RunConfig& cfg, const Model& model, const std::vector<int>& trajectory_atoms,
                         Context& context, const std::string& config_hash, std::int64_t first_step,
                         std::optional<std::int64_t> append_after, bool external_forces, RunSummary& summary) {
  const auto& out = cfg.output;
  const System& system = model.system;
  Reporters r;
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
    const std::string path = output_path(cfg, out.trajectory.file);
    auto sink = std::make_unique<TrajectoryWriter>(path, model.topology, options);
    FrameWriterOptions writer_options;
    writer_options.flush_interval_s = out.trajectory.flush_interval_s;
    r.trajectory = std::make_unique<FrameWriter>(
        std::move(sink), FrameLayout{system.num_particles(), out.trajectory.velocities, out.trajectory.forces},
        writer_options, context.frame_allocator());
    summary.outputs.emplace_back("trajectory", path);
  }
  if (out.state.interval_steps > 0 && !out.state.file.empty()) {
    double mass = 0.0;
    for (double m : system.mass_amu) mass += m;
    const std::string path = output_path(cfg, out.state.file);
    r.state_log = std::make_unique<StateLog>(path, mass, append_after, external_forces);
    summary.outputs.emplace_back("state log", path);
  }
  if (out.progress) r.progress.emplace(stderr, first_step, cfg.run.steps, cfg.integrator.timestep_ps);
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
                      std::int64_t step, bool external_column) {
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
  state_log.write(sample);
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
  for (const auto& [key, file] : output_files(out)) {
    const std::string path = output_path(cfg, file);
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

RunSetup prepare_run(const RunConfig& cfg, const Model& model, bool resume) {
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
  if (!setup.platform.notice.empty()) std::fprintf(stderr, "%s\n", setup.platform.notice.c_str());
  check_platform_memory(cfg, model.system, setup.platform);
  setup.restart = read_restart(cfg, resume, model.system, checkpoint_path(cfg));
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
  bool external_forces = false;
};

Simulation::Simulation(RunConfig config, RunRequest request) : impl_(std::make_unique<Impl>()) {
  Impl& s = *impl_;
  s.cfg = std::move(config);
  s.request = std::move(request);
  check_output_paths(s.cfg);
  s.model = build_model(s.cfg);
  s.config_hash = content_hash_hex(s.request.config_text);
  s.setup = prepare_run(s.cfg, s.model, s.request.resume);
  s.platform = run_platform(s.cfg, s.setup.platform, s.summary);
  s.checkpoint_file = checkpoint_path(s.cfg);
  s.context = make_context(s.cfg, s.model.system, s.platform, s.setup.restart, s.summary);
  if (s.setup.restart) {
    restore_state(*s.context, *s.setup.restart);
    s.fresh = false;
  } else {
    s.context->set_positions(s.model.positions_nm);
    if (!s.model.system.constraints.empty()) s.context->apply_constraints(s.cfg.integrator.constraint_tolerance);
    set_initial_velocities(*s.context, s.cfg, s.model.system.num_particles());
  }
}

Simulation::~Simulation() = default;

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

Checkpoint Simulation::checkpoint() { return make_checkpoint(*impl_->context, impl_->cfg, impl_->model.system, impl_->config_hash); }

void Simulation::save_checkpoint(const std::string& path) { write_checkpoint(path, checkpoint()); }

void Simulation::load_checkpoint(const std::string& path) {
  const Checkpoint c = read_checkpoint(path, system_fingerprint(impl_->model.system));
  check_same_physics(impl_->cfg, c, path);
  restore_state(*impl_->context, c);
  impl_->fresh = false;
}

RunSummary Simulation::run() {
  Impl& s = *impl_;
  const RunConfig& cfg = s.cfg;
  Context& context = *s.context;
  const System& system = s.model.system;
  RunSummary summary = s.summary;

  // Everything the user could get wrong has been checked: from here on files are written.
  prepare_output_directory(cfg);
  if (s.fresh && cfg.minimize) {
    const MinimizationResult m = context.minimize(cfg.minimize->tolerance_kj_per_mol_nm, cfg.minimize->max_iterations);
    fmt::print("minimized: {:.3f} -> {:.3f} kJ/mol in {} iterations, max force {:.3f} kJ/mol/nm{}\n", m.initial_energy,
               m.final_energy, m.iterations, m.max_force_kj_per_mol_nm, m.converged ? "" : " (not converged)");
    set_initial_velocities(context, cfg, system.num_particles());  // at the minimised positions
  }
  s.fresh = false;

  StateRequest header_only;
  header_only.positions = false;
  const std::int64_t first_step = context.state(header_only).step;
  const std::int64_t last_step = cfg.run.steps;
  const double dt = cfg.integrator.timestep_ps;
  const std::optional<std::int64_t> append_after =
      s.setup.restart ? std::optional<std::int64_t>(first_step) : std::nullopt;
  const auto& out = cfg.output;
  const std::string& checkpoint_file = s.checkpoint_file;
  Reporters reporters =
      open_reporters(cfg, s.model, s.setup.trajectory_atoms, context, s.config_hash, first_step, append_after,
                     s.external_forces, summary);
  auto& [trajectory, state_log, progress] = reporters;
  if (!checkpoint_file.empty()) summary.outputs.emplace_back("checkpoint", checkpoint_file);

  const auto start = std::chrono::steady_clock::now();
  std::int64_t step = first_step;
  while (step < last_step) {
    // A stop request (SIGINT/SIGTERM) is honoured at the next restart point (a multiple of
    // kRestartIntervalSteps or a checkpoint step), where the checkpoint written lets a resumed run
    // continue bit for bit as an uninterrupted one.
    if (s.request.stop && s.request.stop->load() &&
        (step % kRestartIntervalSteps == 0 || due(step, out.checkpoint.interval_steps))) {
      summary.stopped_early = true;
      break;
    }
    // Advance to the next reporting step or restart point.
    std::int64_t target = std::min<std::int64_t>(last_step, next_multiple(step, kRestartIntervalSteps));
    target = std::min(target, next_multiple(step, out.trajectory.interval_steps));
    target = std::min(target, next_multiple(step, out.state.interval_steps));
    target = std::min(target, next_multiple(step, out.checkpoint.interval_steps));
    context.step(static_cast<int>(target - step));
    step = target;

    if (trajectory && due(step, out.trajectory.interval_steps)) write_frame(context, *trajectory, out.trajectory);
    if (state_log && due(step, out.state.interval_steps))
      write_state_line(context, *state_log, progress, step, s.external_forces);
    if (due(step, out.checkpoint.interval_steps)) {
      context.mark_restart_point();  // also without a checkpoint file: the same trajectory either way
      if (!checkpoint_file.empty()) {
        if (trajectory) trajectory->flush();  // the trajectory on disk reaches at least the checkpoint's step
        write_checkpoint(checkpoint_file, checkpoint());
      }
    }
    if (progress) progress->update(step);
  }
  summary.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (progress) progress->finish(step);

  // Final outputs: the checkpoint (after the trajectory reached its step), the state log, the final
  // structure (each whole or absent: written under a temporary name), and last the trajectory's
  // complete=1, so that mark means every output of the run was written.
  if (trajectory) trajectory->flush();
  if (!checkpoint_file.empty()) write_checkpoint(checkpoint_file, checkpoint());
  if (state_log) state_log->close();
  if (!out.final_pdb.empty() && !summary.stopped_early) {
    StateRequest positions_only;
    const SimulationState st = context.state(positions_only);
    const std::string path = output_path(cfg, out.final_pdb);
    write_pdb(path, s.model.topology, st.positions_nm, st.has_box ? std::optional<Boxd>(st.box) : std::nullopt);
    summary.outputs.emplace_back("final structure", path);
  }
  if (trajectory) trajectory->close();

  summary.first_step = first_step;
  summary.last_step = step;
  summary.simulated_ps = static_cast<double>(step - first_step) * dt;
  summary.ns_per_day = summary.wall_s > 0 ? summary.simulated_ps * 1e-3 * 86400.0 / summary.wall_s : 0.0;
  return summary;
}

RunSummary run_simulation(const RunConfig& cfg, const RunRequest& request) { return Simulation(cfg, request).run(); }

}  // namespace mdsim
