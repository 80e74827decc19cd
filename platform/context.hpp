// The platform interface for dynamics: a Context holds the state of one simulation of a System
// (positions, velocities, box, step, random seed, barostat state) on one platform and advances it.
// Platform-neutral host C++: the CPU reference platform implements it in kernels/cpu/cpu_context,
// the CUDA platform in kernels/cuda. Units: nm, ps, kJ/mol, K, amu.
//
// Integrators (IntegratorConfig::type), as OpenMM 7.7:
//  - LangevinMiddle: OpenMM's LangevinMiddleIntegrator (kick, constrain velocities, half drift,
//    O step, half drift, constrain positions with the velocity correction). Stored velocities are
//    those of the middle of the step; the kinetic energy is computed from them unshifted.
//  - Verlet: OpenMM's VerletIntegrator, leapfrog: stored velocities lag the positions by dt/2; the
//    reported kinetic energy uses v + dt/2 F/m with the velocity constraints applied (OpenMM's
//    on-step estimate), so the total energy is conserved to O(dt^2).
// Random numbers: Philox4x32-10 keyed by (seed, purpose, step, atom) (physics/philox.hpp),
// so a run continued from (positions, velocities, box, step, barostat_state) is bit-identical.
// Each step: remove centre-of-mass motion (when enabled), Monte Carlo barostat move (when due),
// then the integrator.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "common/host_buffer.hpp"
#include "physics/pbc.hpp"
#include "physics/vec3.hpp"
#include "platform/energy_terms.hpp"
#include "model/run_config.hpp"
#include "model/system.hpp"

namespace mdsim {

// See Context::mark_restart_point.
inline constexpr int kRestartIntervalSteps = 100;

struct DynamicsSettings {  // from RunConfig
  IntegratorConfig integrator;
  std::optional<BarostatConfig> barostat;
  bool remove_cm_motion = true;
  // With remove_cm_motion: the centre-of-mass velocity is removed at the start of each step whose number (the
  // context's step count before it) is a multiple of this, as OpenMM's CMMotionRemover with this frequency.
  int remove_cm_motion_interval = 1;
  bool removes_cm_motion_at(std::int64_t step) const {
    return remove_cm_motion && step % remove_cm_motion_interval == 0;
  }
};

inline DynamicsSettings dynamics_settings(const RunConfig& config) {
  DynamicsSettings s;
  s.integrator = config.integrator;
  s.barostat = config.barostat;
  s.remove_cm_motion = config.system.remove_cm_motion;
  s.remove_cm_motion_interval = config.system.remove_cm_motion_interval;
  return s;
}

struct StateRequest {
  bool positions = true, velocities = false, forces = false, energy = false;
};

struct SimulationState {
  std::int64_t step = 0;
  double time_ps = 0;
  Boxd box{};
  bool has_box = false;
  std::vector<Vec3d> positions_nm, velocities_nm_per_ps, forces_kj_per_mol_nm;
  EnergyTerms potential;          // filled when energy was requested
  double kinetic_kj_per_mol = 0;  // filled when energy was requested
  double temperature_k = 0;       // 2 KE / (dof k_B), filled when energy was requested
  int degrees_of_freedom = 0;     // 3N - constraints - (3 when COM motion is removed); always filled
};

struct MinimizationResult {
  double initial_energy;             // kJ/mol, of the positions as they were before minimize()
  double final_energy;               // kJ/mol, of the final (exactly constrained) positions
  double max_force_kj_per_mol_nm;    // largest per-atom force with the constraint components removed
  int iterations;                    // L-BFGS iterations
  bool converged;                    // max force below the tolerance and constraints satisfied
  bool interrupted = false;          // a stop request (SIGINT/SIGTERM) ended it early, at the last accepted iterate
};

// A per-particle array in the context's own storage, for zero-copy views (the Python package): `rows`
// rows of x, y, z float64, row i at data + i * row_stride doubles; host memory on the CPU platform,
// device memory on CUDA (device `device_index`, work ordered on `stream`, a cudaStream_t).
struct StateArray {
  double* data = nullptr;
  std::size_t rows = 0;
  std::size_t row_stride = 3;  // in doubles (CUDA positions: 4, the fourth unused)
  bool on_device = false;
  int device_index = 0;
  void* stream = nullptr;
};
enum class StateField { Positions, Velocities, Forces };

// A force computed outside the platform (the Python package's add_force): called inside every force
// evaluation of the context (steps, minimisation, barostat trials, state()) with the positions being
// evaluated and the force array to add its forces into (kJ/mol/nm; same layout and memory space as
// state_array's, on the same stream), and the box (null without one). Returns its energy (kJ/mol);
// `energy_wanted` is false where the platform does not use it (a step's forces), so an implementation
// may skip computing it.
class ExternalForce {
 public:
  virtual ~ExternalForce() = default;
  virtual double add(const StateArray& positions, const StateArray& forces, const Boxd* box, bool energy_wanted) = 0;
  // The same on a replica batch (kernels/cuda's make_cuda_replica_batch): `positions` and `forces` hold the K =
  // `replicas` replicas' rows one after another (K N rows), and replica r's energy goes to energies[r] (kJ/mol; when
  // energy_wanted). By default a RuntimeError: a force made for one system.
  virtual void add_batch(const StateArray& positions, const StateArray& forces, int replicas, const Boxd* box,
                         bool energy_wanted, double* energies);
  virtual std::string name() const = 0;  // for messages ("the force added by add_force #1")
};

// `energy` as `force` returned it, or a RuntimeError naming the force when it is not finite.
double checked_external_energy(const ExternalForce& force, double energy);
// The forces' names, "a, b", for messages.
std::string external_force_names(const std::vector<std::shared_ptr<ExternalForce>>& forces);

// Harmonic position restraints, E = ½ Σ_a k_a (x_a − x0_a)² per entry (a = x, y, z; the displacement by
// minimum image in a periodic box; physics/restraint.hpp): with equal constants OpenMM's
// CustomExternalForce("0.5*k*periodicdistance(x,y,z,x0,y0,z0)^2"), per axis GROMACS's [position_restraints].
// An atom may be in several entries (a stage's restraint and a topology's): their springs add, as two
// forces would. Reported as EnergyTerms::restraint. Units: nm, kJ/mol/nm².
struct PositionRestraints {
  std::vector<int> atoms;                // particle index of each entry
  std::vector<Vec3d> reference_nm;       // one per entry
  std::vector<Vec3d> k_kj_per_mol_nm2;   // one per entry: the force constants along x, y, z
  bool empty() const { return atoms.empty(); }
  void add(int atom, const Vec3d& reference, const Vec3d& k) {
    atoms.push_back(atom);
    reference_nm.push_back(reference);
    k_kj_per_mol_nm2.push_back(k);
  }
  // Every entry's k set to k_kj_per_mol_nm2 along every axis (one per atom already listed).
  void set_isotropic_k(double k) { k_kj_per_mol_nm2.assign(atoms.size(), Vec3d(k, k, k)); }
};

// One round of a temperature ladder decided where its replicas live (Context::ladder_exchanger).
struct LadderRound {
  std::vector<double> energies_kj_per_mol;  // per replica: the potential energy the round's decisions used
  std::vector<std::uint8_t> accepted;       // per attempt, in order of its lower temperature
  bool skipped = false;  // the evaluation's pair list overflowed: nothing was exchanged (every attempt rejected)
};

// The rounds of a temperature ladder whose every replica is in one CUDA batch, decided and applied on the device
// (physics/replica_exchange.hpp's rule, ReplicaExchange's random numbers) with no host round trip: the host learns
// each round's outcome later.
class LadderExchanger {
 public:
  virtual ~LadderExchanger() = default;
  // Starts round `round` (ReplicaExchange::rounds(), which fixes its pairs and random numbers) at the batch's
  // current step: every replica's potential energy, the decisions, the swapped bath temperatures and the rescaled
  // velocities, queued behind the steps. False (nothing queued) when the batch has forces added from outside, whose
  // energies only the host knows: decide that round on the host.
  virtual bool start_round(std::int64_t round) = 0;
  // The outcome of the round started last (waits for the device to have done it).
  virtual LadderRound finish_round() = 0;
};

class Context {
 public:
  virtual ~Context() = default;
  virtual void set_positions(const std::vector<Vec3d>&) = 0;  // as given (apply constraints via apply_constraints())
  virtual void set_velocities(const std::vector<Vec3d>&) = 0;
  // Every velocity times `factor` (temperature exchange's rescaling, v sqrt(T_new / T_old)), in the context's own
  // storage, each component multiplied once in double precision. Default: through state() and set_velocities().
  virtual void scale_velocities(double factor);
  // Maxwell-Boltzmann at temperature_k, constrained, COM motion removed (when the settings remove
  // it). seed 0 = the context's seed().
  virtual void set_velocities_to_temperature(double temperature_k, std::uint64_t seed) = 0;
  virtual void apply_constraints(double tolerance) = 0;  // positions onto the constraint surface (and velocities)
  virtual void set_box(const Boxd&) = 0;
  virtual void set_step(std::int64_t step, double time_ps) = 0;
  virtual void step(int steps) = 0;
  virtual SimulationState state(const StateRequest&) = 0;
  // L-BFGS until the largest per-atom force (constraint components removed) is below the
  // tolerance, constraints held; max_iterations 0 = until converged.
  virtual MinimizationResult minimize(double tolerance_kj_per_mol_nm, int max_iterations) = 0;
  // Trajectory frames without stopping the platform. Enqueues copies of the current positions (and
  // velocities / forces where the pointer is not null) as float, 3 per atom in the System's order,
  // into the given host arrays, and returns a function that waits until they are there (empty when
  // they are there already). Host arrays from frame_allocator(), when it gives one (pinned memory
  // for the CUDA platform's asynchronous copies). The arrays must stay alive until the wait returns.
  // Default: a synchronous state() read.
  struct FrameTarget {
    float* positions_nm = nullptr;
    float* velocities_nm_per_ps = nullptr;
    float* forces_kj_per_mol_nm = nullptr;
  };
  virtual std::function<void()> capture_frame(const FrameTarget& target) {
    StateRequest request;
    request.positions = target.positions_nm != nullptr;
    request.velocities = target.velocities_nm_per_ps != nullptr;
    request.forces = target.forces_kj_per_mol_nm != nullptr;
    const SimulationState s = state(request);
    const auto put = [](const std::vector<Vec3d>& from, float* to) {
      if (to == nullptr) return;
      for (std::size_t i = 0; i < from.size(); ++i)
        for (int d = 0; d < 3; ++d) to[3 * i + static_cast<std::size_t>(d)] = static_cast<float>(from[i][d]);
    };
    put(s.positions_nm, target.positions_nm);
    put(s.velocities_nm_per_ps, target.velocities_nm_per_ps);
    put(s.forces_kj_per_mol_nm, target.forces_kj_per_mol_nm);
    return {};
  }
  virtual std::shared_ptr<HostBufferAllocator> frame_allocator() { return nullptr; }

  // Restart points: steps at which what the platform computes next depends only on what a
  // checkpoint holds (positions, velocities, box, step, seed, barostat state), so that a run resumed
  // from a checkpoint written there continues bit for bit as the uninterrupted run. Every multiple
  // of kRestartIntervalSteps is one; mark_restart_point() makes the current step one too (the run
  // marks its checkpoint steps). The CPU platform's forces never depend on history: no-op there.
  virtual void mark_restart_point() {}

  // The storage of positions (nm), velocities (nm/ps) or forces (kJ/mol/nm), valid for the context's life.
  // Positions and velocities are the state itself: a write through the array is what the next step uses,
  // once state_written() said so. Forces are the last evaluation's total (evaluated first when the
  // positions changed since), converted from the platform's accumulators; a write to them is overwritten.
  virtual StateArray state_array(StateField field) = 0;
  // Something outside wrote `field` through state_array(): what was computed from the old values (forces,
  // energies) is dropped, so the next step or state() starts from the new ones.
  virtual void state_written(StateField field) = 0;

  // Makes `stream` (a cudaStream_t of the same device) wait for the work enqueued so far on the context's
  // stream, without blocking the host: a consumer of state_array() on its own stream (DLPack's contract).
  // No-op on the CPU platform and for the context's own stream.
  virtual void order_stream_after_context(void* stream) { (void)stream; }

  // Adds a force to every later evaluation (its energy in EnergyTerms::external). A non-finite energy
  // or force from it is a RuntimeError naming it.
  virtual void add_external_force(std::shared_ptr<ExternalForce> force) = 0;
  // Takes a force add_external_force added out of every later evaluation (InputError when it is not there).
  virtual void remove_external_force(const ExternalForce* force) = 0;

  // Replaces the context's position restraints (empty = none) for every later evaluation: steps,
  // minimisation, barostat trials, state(). InputError for an atom out of range, a reference or k count
  // that differs, a negative or non-finite k or a non-finite reference (check_position_restraints).
  // The reference points stay where they are given when a barostat scales the box, as in OpenMM.
  virtual void set_position_restraints(const PositionRestraints& restraints) = 0;

  // The heat bath's temperature from the next step on: the Langevin thermostat's and the barostat's
  // (temperature replica exchange moves replicas between temperatures). InputError unless positive and
  // finite; the integrator must be LangevinMiddle (Verlet has no bath).
  void set_temperature(double temperature_k);
  // The integrator's temperature (K), friction (1/ps), time step (ps) and constraint tolerance from the next step
  // on (the barostat's temperature follows); its type and seed stay (set_seed). InputError as with_integrator.
  virtual void set_integrator(const IntegratorConfig& integrator) = 0;
  virtual const DynamicsSettings& dynamics() const = 0;  // the settings in force

  virtual std::uint64_t seed() const = 0;                  // the seed in use (config seed 0 -> chosen one)
  // Keys the random numbers of later steps with `seed` (nonzero; a checkpoint's, so that a restart draws what
  // the uninterrupted run would have drawn).
  virtual void set_seed(std::uint64_t seed) = 0;
  virtual std::vector<double> barostat_state() const = 0;  // what a checkpoint must store to resume bit-exactly
  virtual void set_barostat_state(const std::vector<double>&) = 0;

  // On a view of a replica batch that holds a whole temperature ladder (view r = replica r; temperatures_k in
  // increasing order, replica_at[t] the replica at temperature t now, seed the exchanges'): an exchanger that decides
  // and applies its rounds on the device. Null elsewhere: the caller decides on the host (ReplicaExchange).
  virtual std::unique_ptr<LadderExchanger> ladder_exchanger(const std::vector<double>& temperatures_k,
                                                            const std::vector<int>& replica_at, std::uint64_t seed) {
    (void)temperatures_k, (void)replica_at, (void)seed;
    return nullptr;
  }
};

// The settings every platform's context refuses, as one InputError each (non-positive time step,
// constraint tolerance outside (0, 1), non-positive Langevin temperature, negative friction, a
// barostat without a periodic box or with a non-positive interval or temperature); RuntimeError for
// a non-finite or negative particle mass.
void check_dynamics_settings(const System& system, const DynamicsSettings& settings);

// `settings` with the heat bath at temperature_k (the thermostat's and the barostat's), as every
// platform's set_temperature applies it: InputError for a temperature that is not positive and finite or
// an integrator without a bath (Verlet).
DynamicsSettings with_bath_temperature(const DynamicsSettings& settings, double temperature_k);

// `settings` with `next`'s temperature, friction, time step and constraint tolerance (the barostat's temperature
// following), as every platform's set_integrator applies them: InputError for another integrator type, a value
// check_integrator_config refuses, or a temperature or friction for Verlet, which has no heat bath.
DynamicsSettings with_integrator(const DynamicsSettings& settings, const IntegratorConfig& next);
// InputError for a non-positive time step, a constraint tolerance outside (0, 1), a non-positive Langevin
// temperature or a negative friction (part of check_dynamics_settings).
void check_integrator_config(const IntegratorConfig& integrator);

// InputError for restraints a context must refuse, naming the entry: an atom outside 0 .. particles-1,
// a count of reference positions or of force constants other than the count of atoms, a negative or
// non-finite k, a non-finite reference position. Every platform calls it (set_position_restraints).
void check_position_restraints(const PositionRestraints& restraints, std::size_t particles);

// Removes `force` from a context's external forces (remove_external_force); InputError when it is not among them.
void erase_external_force(std::vector<std::shared_ptr<ExternalForce>>& forces, const ExternalForce* force);

// InputError unless an array of per-particle values (`what`: "positions", ...) has one per particle.
void check_particle_count(std::size_t given, std::size_t particles, const char* what);

// InputError naming the first particle whose vector (`what`: "positions", "velocities") is NaN or
// infinite: what a context is given must be finite on every platform.
void check_finite_input(const std::vector<Vec3d>& values, const char* what);

// Degrees of freedom as OpenMM's StateDataReporter counts them: 3 per particle with mass, minus one
// per constraint (rigid waters' three included in System::constraints), minus 3 when the
// centre-of-mass motion is removed.
inline int degrees_of_freedom(const System& system, bool remove_cm_motion) {
  int dof = 0;
  for (double m : system.mass_amu)
    if (m > 0.0) dof += 3;
  dof -= static_cast<int>(system.constraints.size());
  if (remove_cm_motion) dof -= 3;
  return dof;
}

// What a context's state() reads from its platform. assemble_state calls only those the request needs,
// in the order declared here.
struct StateReaders {
  std::function<std::vector<Vec3d>()> positions;   // nm, the System's order
  std::function<std::vector<Vec3d>()> velocities;  // nm/ps
  std::function<void()> evaluate;                   // before forces or energy are read: brings them up to date
  std::function<std::vector<Vec3d>()> forces;       // kJ/mol/nm
  std::function<EnergyTerms()> potential;           // kJ/mol
  std::function<double()> kinetic_energy;           // kJ/mol
};

// The SimulationState every platform's state() returns: step, time, box (null: none), degrees of freedom
// `dof`, and what `request` asks for from `read`; the temperature as 2 KE / (dof k_B) (0 unless dof > 0).
SimulationState assemble_state(const StateRequest& request, std::int64_t step, double time_ps, const Boxd* box,
                               int dof, const StateReaders& read);

// A nonzero seed: the given one, or (given 0) one mixed from std::random_device and the clock.
inline std::uint64_t choose_seed(std::uint64_t requested) {
  if (requested != 0) return requested;
  std::random_device device;
  std::uint64_t s = (static_cast<std::uint64_t>(device()) << 32) ^ device();
  s ^= static_cast<std::uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count()) * 0x9E3779B97F4A7C15ull;
  s ^= s >> 31;
  return s != 0 ? s : 0x2545F4914F6CDD1Dull;
}

}  // namespace mdsim
