// `mdsim run`: from a validated RunConfig to a finished simulation — model, platform, optional
// minimisation, initial velocities, the steps, and the reporters (HDF5 trajectory through a background
// writer, state CSV, checkpoints, progress, final PDB). A stop request (SIGINT/SIGTERM) ends the run at
// the next step boundary with a checkpoint and every file closed cleanly.
#pragma once

#include <atomic>
#include <functional>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "engine/model.hpp"
#include "engine/platform.hpp"
#include "io/checkpoint_h5.hpp"
#include "platform/context.hpp"
#include "model/run_config.hpp"

namespace mdsim {

struct RunRequest {
  bool resume = false;                           // continue from the config's checkpoint file
  const std::atomic<bool>* stop = nullptr;       // set by a signal handler; checked between steps
  std::string config_text;                       // the config file's bytes (hashed into outputs)
  // For a replica of an ensemble (engine/replicas): the model built once for all replicas (copied), the
  // state to continue from (the ensemble checkpoint's, instead of the config's checkpoint file), and
  // whether the platform's fallback notice is printed.
  const Model* model = nullptr;
  std::optional<Checkpoint> restart;
  bool platform_notice = true;
  std::string label;  // printed before the run's own messages ("replica 3: ")
  bool quiet = false;  // no minimisation line and no progress (the Python package's quiet=True)
  // A context made for this run by its caller (a replica batch's view of one replica: engine/replicas), used instead
  // of one the run makes on its platform; called once. The run's settings must be the context's.
  std::function<std::unique_ptr<Context>()> context;
};

// Something called at each multiple of `interval_steps` that a run (run(), run_for()) reaches, after that step's
// outputs were written: the Python package's callable reporters. What it throws ends the run (outputs closed).
struct StepObserver {
  int interval_steps = 0;
  std::function<void(std::int64_t step)> call;
};

struct RunSummary {
  std::int64_t first_step = 0, last_step = 0;
  double simulated_ps = 0.0, wall_s = 0.0, ns_per_day = 0.0;
  std::uint64_t seed = 0;
  bool stopped_early = false;
  bool stopped_in_minimization = false;  // a stop request interrupted a minimisation (see run())
  bool already_complete = false;  // --resume of a finished run, or run() again after the end: nothing was run and
                                  // no file was touched
  std::string platform;                                    // "cpu (double precision)", ...
  std::vector<std::pair<std::string, std::string>> outputs; // what, path
};

// One simulation assembled from a config: what `mdsim run` runs (run_simulation) and what the Python
// package drives step by step. The constructor does everything run checks before writing (output paths,
// model, prepare_run), creates the platform's context and sets the initial state: the checkpoint's with
// `request.resume`, otherwise the structure's positions, constrained, with velocities as
// run.initial_velocities says. It writes nothing; run() writes the config's outputs. A config with
// `replicas:` is refused (engine/replicas runs it, one Simulation per replica).
class Simulation {
 public:
  Simulation(RunConfig config, RunRequest request);
  ~Simulation();
  Simulation(const Simulation&) = delete;
  Simulation& operator=(const Simulation&) = delete;

  const RunConfig& config() const;
  const Model& model() const;
  Context& context();
  PlatformKind platform_kind() const;
  const std::string& platform_description() const;  // "cpu (double precision)", "cuda (mixed precision)"

  MinimizationResult minimize(double tolerance_kj_per_mol_nm, int max_iterations);
  void step(int steps);  // no reporters
  // The config's run: on a fresh start its minimisation (then velocities drawn again at the minimised
  // positions), then steps from the current one to run.steps with every reporter and the final outputs.
  // A staged config runs its stages in order from where the state is (a resumed run: inside the
  // checkpoint's stage), one trajectory and one state log across them; a stage whose integrator or
  // barostat differs from the previous one's continues on a new context (context() changes; forces from
  // add_external_force are refused then).
  RunSummary run();
  // run() for a given length: `steps` more steps from the current one (beyond run.steps if need be) with every
  // reporter, appending to the outputs a previous run() wrote, then the final outputs. Its start is run()'s (a
  // fresh simulation minimises first when the config asks). InputError for a config with stages.
  RunSummary run_for(std::int64_t steps);
  // `steps` more steps with every reporter, as the Python package's step(n): no minimisation and no progress. The
  // outputs stay open between calls (a frame or line only at its interval, the checkpoint at its interval) until
  // end_steps(), run(), run_for(), set_outputs(), load_checkpoint() or the destructor closes them as finish_run()
  // does (no final structure). False when a stop request ended the steps early (the outputs are closed then).
  bool step_reported(std::int64_t steps);
  void end_steps();  // closes what step_reported() left open (nothing to do otherwise)
  // Whether step_reported() would write or call anything: an output section with a trajectory, state log or
  // checkpoint, or observers; never for a config with stages (its outputs are run()'s).
  bool steps_report() const;
  // A stop request (SIGINT/SIGTERM) during a minimisation ends it at its last accepted iterate, and the run before
  // its first step (RunSummary::stopped_in_minimization): minimisation is not a restart point, so nothing of the
  // partly minimised state is written. A fresh run's minimisation: no output is written (run again to start over;
  // the simulation stays fresh). A stage's: the outputs stay at the previous stage's end, its checkpoint rewritten
  // to that point, so --resume redoes the interrupted stage's start (restraints, minimisation, velocities).
  //
  // run() in parts, for a config without stages (what a replica ensemble drives): minimize_at_start() is the
  // fresh start's minimisation (and the velocities at its positions) when the config asks for one (false: a stop
  // request interrupted it); start_run() does run()'s start (output folder, minimize_at_start, reporters; false,
  // with nothing opened, when the minimisation was interrupted); run_to(step) steps to
  // min(step, run.steps) with every reporter (false when a stop request ended it early); flush_outputs()
  // waits until the trajectory on disk reaches the current step; finish_run() writes the final outputs (with
  // `stopped_early`, as a run ended by a stop request: no final structure).
  bool minimize_at_start();
  bool start_run();
  bool run_to(std::int64_t step);
  void flush_outputs();
  RunSummary finish_run(bool stopped_early = false);
  // Whether run() or load_checkpoint() may continue on a new context (the config's stages differ in
  // integrator or barostat): state arrays and forces taken from context() before would not follow it.
  bool may_switch_context() const;

  // A force from outside in every later evaluation (Context::add_external_force); run()'s state log then
  // has the external_kj_per_mol column.
  void add_external_force(std::shared_ptr<ExternalForce> force);
  void remove_external_force(const ExternalForce* force);  // one add_external_force added (InputError otherwise)

  // The integrator's temperature, friction, time step and constraint tolerance from the next step on
  // (Context::set_integrator); the run's config, and so the checkpoints' physics settings, follow. InputError for a
  // config with stages (each stage sets its own) and for what Context::set_integrator refuses.
  void set_integrator(const IntegratorConfig& integrator);
  // Replaces the config's output section (what later runs write; the Python package's reporters): InputError, as
  // for the config's, for an output path that cannot be written or a trajectory selection that fits no atom, and
  // for a config with stages or a run in progress. `continue_existing`: later runs append to the files after the
  // current step (as --resume), creating those that do not exist; otherwise as before (a fresh simulation's first
  // run writes them anew).
  void set_outputs(const OutputConfig& output, bool continue_existing);
  void set_observers(std::vector<StepObserver> observers);  // replaces the observers of later runs

  Checkpoint checkpoint();                      // the current state as a checkpoint holds it
  void save_checkpoint(const std::string& path);  // the CLI's format, written atomically
  // Continues from a checkpoint of this system written with the same physics settings (InputError otherwise); the
  // integrator's temperature, friction, time step and constraint tolerance stay this simulation's (set_integrator).
  void load_checkpoint(const std::string& path);

 private:
  RunSummary stopped_in_minimization();  // the summary of a run whose start's minimisation was interrupted
  void finish_on_error(const std::function<void()>& steps);
  bool steps_to(std::int64_t target);
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

RunSummary run_simulation(const RunConfig& config, const RunRequest& request);

// The checkpoint file's path (in the output folder), "" when the config has none.
std::string checkpoint_path(const RunConfig& config);

// Everything `mdsim run` settles about a model before it writes anything; `mdsim check` goes through
// the same steps, so it rejects what run would. InputError, located at the config key, when the
// platform asked for is absent, the trajectory's atom selection does not fit the structure, the
// platform or the trajectory need more memory or disk than there is (engine/resources.hpp), or the
// checkpoint to resume from is missing, of another system or of other physics; for a staged run also
// when a stage's restraint selection matches no atom or its reference PDB has other atoms, and when the
// checkpoint to resume from was written by other stages (or by a run without stages, or vice versa); a
// topology's position restraint too stiff for a time step of the run (k ≥ 4 m / dt², at its file and line);
// run.initial_velocities: from_coordinates with coordinates that hold no velocities (a fresh start).
// A stage's position restraints resolved against the model (staged runs).
struct StageSetup {
  std::vector<int> restraint_atoms;          // stages[i].restraints.atoms resolved; empty = unrestrained
  std::vector<Vec3d> reference_from_file_nm; // reference: a PDB path: those atoms' positions in it
};
struct RunSetup {
  PlatformChoice platform;             // its notice, when "auto" fell back, is printed by prepare_run
  std::vector<int> trajectory_atoms;   // output.trajectory.atoms resolved (empty without a trajectory)
  std::optional<Checkpoint> restart;   // with --resume or initial_velocities: from_checkpoint
  std::vector<StageSetup> stages;      // one per config stage (staged runs)
  // The topology's own position restraints (Model::position_restraints) about the starting positions
  // (Model::positions_nm, as read): in force for the whole run, added to a stage's own restraints.
  PositionRestraints topology_restraints;
};
RunSetup prepare_run(const RunConfig& config, const Model& model, bool resume, bool platform_notice = true);

// InputError unless every output the config enables can be written as a regular file: the output
// folder is a folder (or does not exist yet) and no output path is an existing directory, device,
// FIFO or socket. `mdsim check` and `mdsim run` (before anything is written) both call it.
void check_output_paths(const RunConfig& config);

}  // namespace mdsim
