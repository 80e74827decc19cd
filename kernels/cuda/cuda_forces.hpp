// The CUDA platform's force evaluation. Host-only header (no CUDA syntax): engine/ and the CLI use it.
//
// All state lives on the device for the evaluator's lifetime: positions (double), per-particle
// parameters, term lists, the neighbour list, PME grids, and forces accumulated as 64-bit fixed point
// (bit-for-bit reproducible). The host copies data only in set_positions / positions / forces /
// energies; compute() enqueues kernels and returns without synchronising.
//
// Nonbonded pairs are found between blocks of 32 spatially sorted atoms (xy columns padded to whole
// blocks, ordered by height; Morton order for non-periodic systems; redone every `reorder_interval`
// evaluations). Each tile pairs a block with 32 packed atoms within cutoff + `neighbor_buffer_nm` of
// its bounding box; the list is rebuilt on the device only when some atom has moved more than half the
// buffer since the last build — the check and the conditional rebuild happen in kernels, with no host
// synchronisation. Exclusions are 32×32 bit masks per tile. The buffer is the config's
// platform.neighbor_buffer. See docs/ARCHITECTURE.md.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "kernels/cuda/build_items.hpp"  // RowBuild
#include "physics/vec3.hpp"
#include "platform/context.hpp"  // PositionRestraints
#include "platform/energy_terms.hpp"
#include "platform/force_timings.hpp"
#include "model/system.hpp"

namespace mdsim {

struct CudaOptions {
  int device = 0;
  bool double_precision = false;     // false: "mixed" (float pair math, fixed-point sums)
  double neighbor_buffer_nm = 0.1;   // tile-list skin beyond the cutoff
  int column_search_min_blocks = 2048;  // periodic rectangular systems with at least this many blocks of 32
                                       // search the tile list by columns (O(N)), smaller ones scan all block pairs
  int reorder_interval = 100;        // evaluations between spatial re-sorts of the atoms (0: only when
                                     // set_positions or reset_neighbor_list asks for one)
  bool fuse_langevin_step = true;    // mixed precision: a LangevinMiddle step as three concurrent kernels
                                     // (langevin_step_kernels.cuh); tests compare with the stage-by-stage
                                     // kernels (false), which agree to rounding
  int initial_tiles = 0;             // tile-list and exclusion-tile buffers to start with (0: estimates);
  int initial_exclusion_tiles = 0;   // tests set them small to exercise the growth path
  // Replica batch: the evaluator holds this many copies of the System, evaluated together in the same kernels
  // (one pair list, one batched PME, one graph). Copy r's particle i is row r N + i of every per-particle array
  // (positions, forces); each copy interacts only with itself and its own periodic images, in the one box
  // they share; energies are kept per copy (replica_energies). A copy's forces equal those of the same
  // System evaluated alone bit for bit (the same blocks and tiles, fixed-point sums), except PME's, which
  // may differ by the batched FFT's rounding.
  int replicas = 1;
  // A periodic system with many uncharged particles (a 4- or 5-site water's oxygens) sorts them into tile-list
  // blocks of their own, so that the list leaves out their pairs with particles that have no LJ (water hydrogens
  // and charge sites: exactly zero; kernels/cuda/neighbor_list.cuh, PairClasses). DHFR in TIP4P-Ew: 17% fewer
  // tiles. Tests compare with false (the same pair terms, grouped into other tiles).
  bool pair_classes = true;
  // Which kernel builds a small system's tile list (cuda::RowBuild; both give the same tiles, tests compare them).
  cuda::RowBuild row_build = cuda::RowBuild::Automatic;
};

// Wall time of each part of one evaluation (µs, medians), from CUDA events.
using CudaTimings = ForcePartTimings;

class CudaForceEvaluator {
 public:
  CudaForceEvaluator(const System& system, const CudaOptions& options);
  ~CudaForceEvaluator();
  CudaForceEvaluator(const CudaForceEvaluator&) = delete;
  CudaForceEvaluator& operator=(const CudaForceEvaluator&) = delete;

  // New coordinates; the next evaluation re-sorts the atoms and rebuilds the tile list.
  void set_positions(const std::vector<Vec3d>& positions_nm);
  // New coordinates as an integrator would leave them: the device-side displacement check alone
  // decides whether the tile list is rebuilt (tests of the neighbour-list logic).
  void update_positions(const std::vector<Vec3d>& positions_nm);
  std::vector<Vec3d> positions() const;
  // A replica batch's rows [first_row, first_row + count): one replica's. set_positions_rows re-sorts as set_positions.
  void set_positions_rows(const std::vector<Vec3d>& positions_nm, std::size_t first_row);
  std::vector<Vec3d> positions_rows(std::size_t first_row, std::size_t count) const;
  std::vector<Vec3d> forces_rows(std::size_t first_row, std::size_t count) const;
  void set_box(const Boxd& box);
  // The next evaluation re-sorts the atoms and rebuilds the tile list from the current positions, as
  // after set_positions. The float pair sums depend on which atoms share a tile, so the forces depend
  // on the positions at the last re-sort and rebuilds: a context that resets at fixed steps (and a
  // run resumed at one of them) reproduces them bit for bit.
  void reset_neighbor_list();

  // Position restraints (physics/restraint.hpp) in every later evaluation, their energy in
  // EnergyTerms::restraint (empty = none: nothing launched). Double precision in both modes; minimum
  // image in the current box when the system has one. InputError from check_position_restraints.
  void set_position_restraints(const PositionRestraints& restraints);

  // Forces from outside (Context::add_external_force): `hook` is called at the end of every evaluation,
  // after the platform's work is enqueued on device_stream(), with whether the energy is wanted; it
  // enqueues its own work on that stream, adds its forces through add_external_forces() and returns its
  // energy per replica (kJ/mol, one value for a single system; energies() reports it as EnergyTerms::external). An
  // empty hook removes it.
  const Boxd& box() const;  // the box of the evaluations (a barostat trial's during one)
  // `names` says which forces the hook adds, for the message when the run blows up while they are active.
  void set_external_hook(std::function<std::vector<double>(bool with_energy)> hook, std::string names);
  // Adds N rows of x, y, z double forces (kJ/mol/nm, device memory) into the evaluation's sums, on the stream.
  void add_external_forces(const double* forces_kj_per_mol_nm);

  // Enqueues one evaluation of forces (and energies when with_energy). No host synchronisation.
  void compute(bool with_energy);

  // Whether the next `count` compute(false) calls would each replay the captured evaluation (no re-sort
  // or forced list rebuild due, no forces from outside). If so, a caller may capture `count`
  // enqueue_steady_evaluation()s inside its own graph (the dynamics steps do, with their integration)
  // and, before each launch of that graph, call begin_steady_evaluations(count) instead of compute(false)
  // `count` times; between two evaluations in it, the force sums must be left zero
  // (forces_zeroed_by_consumer). Such a graph must be captured again when graph_generation() changes
  // (the evaluator's own captures became invalid: box, restraints, a grown tile list).
  bool next_evaluations_are_steady(int count) const;
  void begin_steady_evaluations(int count);
  void enqueue_steady_evaluation();
  std::uint64_t graph_generation() const;

  // The force sums start from zero. An evaluation clears them first unless the work enqueued since the
  // last one read every atom's force and left it zero (the fused LangevinMiddle step does, through
  // device_forces_fixed_consumed()) and said so here.
  void forces_zeroed_by_consumer();
  // Synchronise and download the last evaluation's results.
  std::vector<Vec3d> forces() const;
  EnergyTerms energies() const;  // valid after compute(true); a batch's first replica
  std::vector<EnergyTerms> replica_energies() const;  // one per replica (valid after compute(true))
  int replicas() const;

  // Convenience: upload, evaluate, download (tests, `mdsim energy`).
  EnergyTerms compute(const std::vector<Vec3d>& positions_nm, std::vector<Vec3d>* forces);

  // Median timings over `repetitions` evaluations after warm-up (for `mdsim bench`).
  CudaTimings benchmark(int repetitions);

  // Device-side access for the CUDA integrators (kernels/cuda only). Positions: double4_16a (x, y, z,
  // unused) per atom in the System's order, nm; an integrator may move them in place (the next
  // evaluation's displacement check decides about the neighbour list). Forces of the last evaluation:
  // 64-bit fixed point (×2^32, kJ/mol/nm), x of atom i at [i], y at [stride + i], z at [2 stride + i].
  // Work must be enqueued on device_stream() (a cudaStream_t) to stay ordered with evaluations.
  void* device_positions();
  const unsigned long long* device_forces_fixed() const;
  unsigned long long* device_forces_fixed_consumed();  // for a consumer that leaves them zero (above)
  int force_stride() const;
  void* device_stream() const;
  // A cudaEvent_t recorded on device_stream() in each evaluation once its positions are prepared (the pair list's
  // sorted copy written): work that must not compete with the preparation may wait for it (a steady evaluation's,
  // in a caller's graph).
  void* positions_prepared_event() const;
  // Energy sums of the last evaluation with energies (64-bit fixed point, kJ/mol), one block of slots per replica
  // of a batch (the first replica's first); a block's sum is its replica's potential energy less energy_constant().
  const unsigned long long* device_energies_fixed() const;
  // Enqueues each replica's potential energy (kJ/mol) of the last evaluation with energies into out[r] (device
  // memory, one double per replica), summed on the device in replica_energies()'s order, so bit for bit its totals
  // when no force from outside acts (their energies are the host's).
  void replica_potentials_on_device(double* out);
  // Nonzero while the pair list's tiles or exclusion tiles overflowed their buffers (device memory; the host grows
  // them at its next synchronising call): an evaluation then missed pairs.
  const int* device_tile_overflow() const;
  const int* device_exclusion_overflow() const;
  double energy_constant() const;  // self energy + dispersion correction (kJ/mol) for the current box, per replica

  // Virtual sites (System::virtual_sites; nothing is launched for a system without). Every evaluation places them
  // from their parents first and, after all its forces (those added from outside included), spreads the force on
  // each site onto its parents: forces() follows OpenMM's getState convention (a parent's row includes the share
  // spread onto it, a site's row keeps the force on the site itself). place_virtual_sites enqueues the placing
  // alone (a context after its steps); zero_virtual_site_rows zeroes the sites' rows of an N x 3 double device
  // array (a minimiser's gradient). Both on device_stream().
  void place_virtual_sites();
  void zero_virtual_site_rows(void* rows_xyz);
  // The steady evaluations (enqueue_steady_evaluation) neither place these sites (particle indices) nor spread
  // their forces: the step after each does both, and leaves their force sums zero (the fused LangevinMiddle step,
  // for a rigid water's average site). Every other evaluation still places and spreads every site.
  void leave_sites_to_steps(const std::vector<int>& particles);

  std::size_t device_memory_bytes() const;  // memory this evaluator allocated
  int num_tiles() const;                    // tiles in the current list (synchronises)
  int num_list_builds() const;              // tile-list builds so far (synchronises)
  int graph_kernel_count(bool with_energy) const;  // kernels in the steady-state evaluation graph (0: not captured yet)
  std::string device_name() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace mdsim
