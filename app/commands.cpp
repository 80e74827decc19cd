#include "app/commands.hpp"
#include "app/mpi_comm.hpp"

#include <algorithm>
#include <filesystem>
#include <cstdio>

#include <fmt/format.h>

#include "common/errors.hpp"
#include "engine/bench.hpp"
#include "engine/demux.hpp"
#include "engine/evaluator.hpp"
#include "engine/model.hpp"
#include "engine/platform.hpp"
#include "engine/replica_starts.hpp"
#include "engine/replicas.hpp"
#include "engine/simulation.hpp"
#include "engine/stop_signals.hpp"
#include "io/config.hpp"
#include "io/file_names.hpp"
#include "io/hdf5_arrays.hpp"
#include "io/output_paths.hpp"
#include "model/run_config.hpp"

namespace mdsim {

namespace {

// `platform`: the platform the run would get (its precision is the one it computes in).
void print_config_summary(const RunConfig& c, const PlatformChoice& platform) {
  const auto& s = c.system;
  fmt::print("config: {}\n", c.source);
  if (s.topology.empty()) {
    fmt::print("  structure:      {}\n", s.pdb);
    std::string ff;
    for (const auto& f : s.forcefield) ff += (ff.empty() ? "" : ", ") + f;
    fmt::print("  force field:    {}\n", ff);
  } else {
    fmt::print("  topology:       {}{}\n", s.topology,
               topology_format(s.topology) == TopologyFormat::SystemXml ? " (a serialized OpenMM System: its settings hold)"
                                                                        : "");
    fmt::print("  coordinates:    {}\n", s.pdb);
  }
  fmt::print("  nonbonded:      {}, cutoff {} nm{}\n", to_string(s.nonbonded.method), s.nonbonded.cutoff_nm,
             s.nonbonded.method == NonbondedMethod::PME
                 ? fmt::format(", ewald tolerance {}, pme grid {}", s.nonbonded.ewald_tolerance, to_string(s.nonbonded.pme_grid))
                 : std::string());
  fmt::print("  constraints:    {}, rigid water {}\n", to_string(s.constraints), s.rigid_water ? "yes" : "no");
  fmt::print("  integrator:     {}, {} K, {} fs, friction {} /ps\n", to_string(c.integrator.type),
             c.integrator.temperature_k, c.integrator.timestep_ps * 1000.0, c.integrator.friction_per_ps);
  if (const auto& r = c.replicas) {
    if (r->exchange == ReplicaExchangeKind::Temperature) {
      std::string ladder;
      for (const double t : r->temperatures_k) ladder += fmt::format("{}{:.2f}", ladder.empty() ? "" : ", ", t);
      fmt::print("  replicas:       {} at {} K (the integrator's temperature does not apply); exchange every {} steps "
                 "({} ps)\n",
                 r->count, ladder, r->exchange_interval_steps, r->exchange_interval_steps * c.integrator.timestep_ps);
    } else {
      fmt::print("  replicas:       {} independent copies (exchange: none)\n", r->count);
    }
  }
  if (c.stages.empty()) {
    fmt::print("  run:            {} steps ({} ps)\n", c.run.steps, c.run.steps * c.integrator.timestep_ps);
  } else {
    fmt::print("  stages:         {}, {} steps in all\n", c.stages.size(), c.run.steps);
    for (const StageConfig& st : c.stages) {
      std::string what;
      if (st.minimize) what = "minimise";
      if (st.steps > 0)
        what += fmt::format("{}{} steps ({} ps) at {} K{}", what.empty() ? "" : ", then ", st.steps,
                            st.steps * st.integrator.timestep_ps, st.integrator.temperature_k,
                            st.barostat ? fmt::format(", {} bar", st.barostat->pressure_bar) : std::string());
      if (st.restraints)
        what += fmt::format("; restraints on \"{}\", k {} kJ/mol/nm^2 to the {} positions", st.restraints->atoms,
                            st.restraints->k_kj_per_mol_nm2,
                            st.restraints->reference == RestraintReference::File ? st.restraints->reference_file
                                                                                 : to_string(st.restraints->reference));
      fmt::print("    {:<14}{}\n", st.name, what);
    }
  }
  fmt::print("  platform:       {} (asked for: {})\n", platform_description(platform, c.platform), c.platform.name);
  fmt::print("  output:         {}\n", c.output.directory);
}

}  // namespace

int command_platforms() {
  fmt::print("cpu     reference platform (double precision), always available\n");
  const CudaProbe probe = probe_devices();
  if (probe.devices.empty()) {
    fmt::print("cuda    not available: {}\n", probe.reason);
    return 0;
  }
  for (const auto& d : probe.devices) {
    fmt::print("cuda:{}  {}, {:.1f} GiB, compute capability {}.{}, {} multiprocessors\n", d.index, d.name,
               static_cast<double>(d.memory_bytes) / (1024.0 * 1024.0 * 1024.0), d.compute_major, d.compute_minor,
               d.multiprocessors);
  }
  fmt::print("        CUDA runtime {}.{}, driver {}.{}\n", probe.runtime_version / 1000, (probe.runtime_version % 1000) / 10,
             probe.driver_version / 1000, (probe.driver_version % 1000) / 10);
  return 0;
}

namespace {

std::string platform_request(const RunConfig& cfg, const std::string& override_name) {
  return override_name.empty() ? cfg.platform.name : override_name;
}

PlatformChoice pick_platform(const RunConfig& cfg, const std::string& override_name) {
  PlatformChoice choice = choose_platform(platform_request(cfg, override_name), cfg.platform.device);
  if (!choice.notice.empty()) std::fprintf(stderr, "%s\n", choice.notice.c_str());
  return choice;
}

double net_charge(const System& s) {
  double q = 0.0;
  for (double c : s.charge_e) q += c;
  return q;
}

// The bonded terms beyond amber's (Urey-Bradley, RB torsions, harmonic impropers, CMAP) that the System has, as
// ", 3 RB torsions, 2 CMAP torsions (1 map)"; empty without any.
std::string other_bonded_counts(const System& s) {
  std::string out;
  if (!s.urey_bradleys.empty()) out += fmt::format(", {} Urey-Bradley terms", s.urey_bradleys.size());
  if (s.lj_types) out += fmt::format(", pair-specific LJ ({} types)", s.lj_types->num_types);
  if (!s.rb_torsions.empty()) out += fmt::format(", {} RB torsions", s.rb_torsions.size());
  if (!s.impropers.empty()) out += fmt::format(", {} harmonic impropers", s.impropers.size());
  if (!s.cmap_torsions.empty())
    out += fmt::format(", {} CMAP torsions ({} map{})", s.cmap_torsions.size(), s.cmap_maps.size(),
                       s.cmap_maps.size() == 1 ? "" : "s");
  return out;
}

// replicas.coordinates, every start read and checked as a run reads it (engine/replica_starts).
void print_replica_starts(const RunConfig& cfg, const Model& model) {
  if (!cfg.replicas || cfg.replicas->coordinates.empty()) return;
  std::vector<CoordinateFile> starts;
  for (int k = 0; k < cfg.replicas->count; ++k) starts.push_back(replica_start(cfg, model, k));
  const bool periodic = is_periodic(model.system.nonbonded.method);
  fmt::print("  replica starts: {} from {}{}\n", starts.size(),
             cfg.replicas->coordinates.size() == 1 ? "the frames of " + cfg.replicas->coordinates.front()
                                                   : std::string("a coordinate file each"),
             periodic && !shared_box(starts) ? "; their boxes differ, so on CUDA they run one by one" : "");
}

}  // namespace

int command_check(const std::string& config_path) {
  const RunConfig cfg = load_config(config_path);
  check_output_paths(cfg);
  const Model model = build_model(cfg);
  const RunSetup setup = prepare_run(cfg, model, /*resume=*/false);  // what run checks before writing
  print_config_summary(cfg, setup.platform);
  const System& s = model.system;
  const std::size_t sites = s.virtual_sites.size();
  fmt::print("  atoms:          {} in {} residues, {} chains; {} waters{}\n", s.num_particles() - sites,
             model.topology.residues.size(), model.topology.chains.size(), count_waters(model.topology),
             sites > 0 ? fmt::format("; {} virtual sites (extra particles, mass 0)", sites) : std::string());
  fmt::print("  terms:          {} bonds, {} angles, {} torsions{}, {} exceptions, {} constraints\n", s.bonds.size(),
             s.angles.size(), s.torsions.size(), other_bonded_counts(s), s.exceptions.size(), s.constraints.size());
  fmt::print("  Lennard-Jones:  {}, {} dispersion correction\n",
             s.nonbonded.switch_distance_nm ? fmt::format("switched from {} nm", *s.nonbonded.switch_distance_nm)
                                            : std::string("no switching"),
             s.nonbonded.dispersion_correction ? "with" : "no");
  fmt::print("  net charge:     {:.6f} e\n", net_charge(s));
  if (s.box) fmt::print("  box:            {:.4f} x {:.4f} x {:.4f} nm\n", s.box->a.x, s.box->b.y, s.box->c.z);
  if (const std::optional<PmeParameters> pme = pme_parameters(s)) {  // the grid every platform uses
    const PmeParameters& pp = *pme;
    fmt::print("  PME:            alpha {:.6f} /nm, grid {} x {} x {} ({})\n", pp.alpha_per_nm, pp.grid[0], pp.grid[1],
               pp.grid[2], to_string(s.nonbonded.pme_grid));
  }
  fmt::print("  runs on:        {}\n", setup.platform.kind == PlatformKind::Cuda
                                             ? fmt::format("cuda device {}", setup.platform.device)
                                             : std::string("cpu"));
  if (!setup.topology_restraints.empty())
    fmt::print("  restrained:     {} atoms by the topology's [position_restraints], in the whole run\n",
               setup.topology_restraints.atoms.size());
  for (std::size_t i = 0; i < setup.stages.size(); ++i)
    if (!setup.stages[i].restraint_atoms.empty())
      fmt::print("  restrained:     {} atoms in stage {}\n", setup.stages[i].restraint_atoms.size(), cfg.stages[i].name);
  if (!setup.trajectory_atoms.empty() && static_cast<int>(setup.trajectory_atoms.size()) != s.num_particles())
    fmt::print("  trajectory:     {} of {} atoms ({})\n", setup.trajectory_atoms.size(), s.num_particles(),
               cfg.output.trajectory.atoms);
  print_replica_starts(cfg, model);
  fmt::print("config OK\n");
  return 0;
}

int command_energy(const EnergyOptions& options) {
  const RunConfig cfg = load_config(options.config);
  // --forces names a new or regular file in an existing folder, checked before any work.
  if (!options.forces_file.empty())
    if (const std::string problem = output_place_problem(options.forces_file); !problem.empty())
      throw InputError(fmt::format("--forces {}: {}", options.forces_file, problem));
  const Model model = build_model(cfg);
  const PlatformChoice platform = pick_platform(cfg, options.platform);
  const System& s = model.system;
  auto evaluator = make_evaluator(s, platform, cfg.platform);
  std::vector<Vec3d> forces;
  const EnergyTerms e = evaluator->compute(model.positions_nm, options.forces_file.empty() ? nullptr : &forces);
  // JSON has no nan or inf: fail naming the terms rather than print what no reader can parse.
  if (const std::string bad = nonfinite_terms(e); options.json && !bad.empty())
    throw RuntimeError(fmt::format("energy: the energy of {} is not finite ({}); no JSON written", cfg.system.pdb, bad));
  if (!options.forces_file.empty()) write_forces_h5(options.forces_file, model.positions_nm, forces);

  const std::optional<PmeParameters> pme = pme_parameters(s);  // the grid the evaluator uses (CPU and CUDA alike)
  const PmeParameters pp = pme.value_or(PmeParameters{});
  if (options.json) {
    std::string out = "{\n";
    out += fmt::format("  \"atoms\": {},\n  \"platform\": \"{}\",\n", s.num_particles(), evaluator->description());
    out += fmt::format(
        "  \"counts\": {{\"bonds\": {}, \"angles\": {}, \"urey_bradleys\": {}, \"torsion_terms\": {}, \"rb_torsions\": {}, "
        "\"impropers\": {}, \"cmap_torsions\": {}, \"cmap_maps\": {}, \"exceptions\": {}, \"constraints\": {}, "
        "\"waters\": {}}},\n",
        s.bonds.size(), s.angles.size(), s.urey_bradleys.size(), s.torsions.size(), s.rb_torsions.size(), s.impropers.size(),
        s.cmap_torsions.size(), s.cmap_maps.size(), s.exceptions.size(), s.constraints.size(),
        count_waters(model.topology));
    out += fmt::format("  \"net_charge\": {:.12g},\n", net_charge(s));
    // energies_kj_per_mol add up to total; included_kj_per_mol repeats sums and parts already counted there.
    std::string energies, included;
    for (const auto& [name, value] : additive_terms(e))
      energies += fmt::format("{}\"{}\": {:.17g}", energies.empty() ? "" : ", ", name, value);
    energies += fmt::format(", \"total\": {:.17g}", e.total);
    for (const auto& [name, value] : included_terms(e))
      included += fmt::format("{}\"{}\": {:.17g}", included.empty() ? "" : ", ", name, value);
    out += "  \"energies_kj_per_mol\": {" + energies + "},\n  \"included_kj_per_mol\": {" + included + "}";
    if (pme)
      out += fmt::format(",\n  \"pme\": {{\"alpha_per_nm\": {:.17g}, \"grid\": [{}, {}, {}], \"grid_sizes\": \"{}\"}}",
                         pp.alpha_per_nm, pp.grid[0], pp.grid[1], pp.grid[2], to_string(s.nonbonded.pme_grid));
    if (!options.forces_file.empty()) out += fmt::format(",\n  \"forces_file\": \"{}\"", options.forces_file);
    out += "\n}\n";
    fmt::print("{}", out);
    return 0;
  }
  fmt::print("system:     {} ({} atoms)\n", cfg.system.pdb, s.num_particles());
  fmt::print("platform:   {}\n", evaluator->description());
  fmt::print("energies (kJ/mol):\n");
  fmt::print("  bond                  {:>20.6f}\n", e.bond);
  fmt::print("  angle                 {:>20.6f}\n", e.angle);
  // The other bonded terms only where the System has them (an amber system's report stays as it was).
  if (!s.urey_bradleys.empty()) fmt::print("  Urey-Bradley          {:>20.6f}\n", e.urey_bradley);
  fmt::print("  torsion               {:>20.6f}\n", e.torsion);
  if (!s.rb_torsions.empty()) fmt::print("  RB torsion            {:>20.6f}\n", e.rb_torsion);
  if (!s.impropers.empty()) fmt::print("  improper              {:>20.6f}\n", e.improper);
  if (!s.cmap_torsions.empty()) fmt::print("  CMAP                  {:>20.6f}\n", e.cmap);
  fmt::print("  nonbonded (direct)    {:>20.6f}\n", e.nonbonded_direct);
  fmt::print("  nonbonded (recip.)    {:>20.6f}\n", e.nonbonded_reciprocal);
  fmt::print("  dispersion correction {:>20.6f}  (included in direct)\n", e.dispersion_correction);
  fmt::print("  nonbonded             {:>20.6f}\n", e.nonbonded);
  fmt::print("  total                 {:>20.6f}\n", e.total);
  if (pme)
    fmt::print("PME: alpha {:.6f} /nm, grid {} x {} x {} ({})\n", pp.alpha_per_nm, pp.grid[0], pp.grid[1], pp.grid[2],
               to_string(s.nonbonded.pme_grid));
  if (!options.forces_file.empty()) fmt::print("forces written to {}\n", options.forces_file);
  return 0;
}

namespace {

int print_run_summary(const RunSummary& s) {
  if (s.already_complete) {
    fmt::print("nothing to do: the run finished at step {} and its outputs are complete; no file was changed (to run "
               "longer, raise run.steps or a stage's length and resume again)\n",
               s.last_step);
    return 0;
  }
  if (s.stopped_in_minimization && s.outputs.empty()) {
    fmt::print("stopped during the minimisation, before step {}: no output was written (minimisation is not a "
               "restart point); run again to start over\n",
               s.first_step);
    return 1;
  }
  if (s.stopped_in_minimization)
    fmt::print("{}\n", s.last_step == 0 ? "stopped during the first stage's minimisation, before step 0: no step and no "
                                  "checkpoint was written; run again to start over"
                                : "stopped during a stage's minimisation: the outputs end at the previous stage's end, "
                                  "where the checkpoint is; --resume redoes the stage's start");
  fmt::print("{} steps {} to {} ({:.3f} ps) on {} in {:.1f} s: {:.2f} ns/day; seed {}\n",
             s.stopped_early ? "stopped after" : "ran", s.first_step, s.last_step, s.simulated_ps, s.platform, s.wall_s,
             s.ns_per_day, s.seed);
  for (const auto& [what, path] : s.outputs) fmt::print("  {:<16} {}\n", what, path);
  return s.stopped_early ? 1 : 0;
}

// The ensemble's summary (rank 0): speed per replica and in total, acceptance per pair, round trips.
void print_ensemble_summary(const EnsembleSummary& s) {
  if (s.stopped_in_minimization) {
    fmt::print("stopped during the replicas' minimisation: no output was written (minimisation is not a restart "
               "point); run again to start over\n");
    return;
  }
  fmt::print("{} {} replicas ({}; {}) steps {} to {} ({:.3f} ps each) on {} in {:.1f} s: {:.2f} ns/day per "
             "replica, {:.2f} in total; seed {}\n",
             s.stopped_early ? "stopped" : "ran", s.replicas,
             s.exchange == "none" ? std::string("independent copies") : s.exchange + " exchange", s.comm, s.first_step,
             s.last_step, s.simulated_ps_per_replica, s.platform, s.wall_s, s.ns_per_day_per_replica, s.ns_per_day_total,
             s.ensemble_seed);
  if (!s.pairs.empty()) {
    fmt::print("  exchange seed {}; acceptance per pair of temperatures:\n", s.exchange_seed);
    for (const ReplicaPairStatistics& p : s.pairs)
      fmt::print("    {:8.2f} K <-> {:8.2f} K  {:6} of {:6} accepted ({:.1f}%)\n", p.temperature_lower_k,
                 p.temperature_upper_k, p.accepted, p.attempts,
                 p.attempts > 0 ? 100.0 * static_cast<double>(p.accepted) / static_cast<double>(p.attempts) : 0.0);
    int total = 0;
    std::string each;
    for (const int r : s.round_trips) total += r, each += fmt::format(" {}", r);
    fmt::print("  round trips (lowest -> highest -> lowest temperature): {} (per replica:{})\n", total, each);
  }
  for (const auto& [what, path] : s.outputs) fmt::print("  {:<16} {}\n", what, path);
}

int run_ensemble_command(const RunConfig& cfg, const RunRequest& request, EnsembleComm& comm) {
  const EnsembleSummary s = run_ensemble(cfg, request, comm);
  if (comm.rank() == 0) print_ensemble_summary(s);
  return s.stopped_early ? 1 : 0;
}

}  // namespace

int command_demux(const std::string& config_path, const std::string& output_dir) {
  const RunConfig cfg = load_config(config_path);
  const DemuxSummary s = demux_ensemble(cfg, output_dir);
  fmt::print("demultiplexed {} replicas: {} frames and {} state lines per temperature\n", cfg.replicas->count, s.frames,
             s.state_lines);
  for (const auto& [what, path] : s.outputs) fmt::print("  {:<22} {}\n", what, path);
  return 0;
}

int command_run(const RunOptions& options, EnsembleComm* comm) {
  RunRequest request;
  request.resume = options.resume;
  request.stop = &StopSignals::requested();
  // Under an MPI launcher every rank reads the config; errors are agreed on (engine/replicas: collectively)
  // so that one rank reports and all exit with the same status.
  RunConfig cfg;
  if (comm) {
    collectively(*comm, [&] {
      cfg = load_config(options.config, &request.config_text);
      if (!cfg.replicas && comm->size() > 1)
        throw InputError(fmt::format("{}: mpirun started {} ranks, but the config has no 'replicas' section: a single "
                                     "simulation runs in one process (mdsim run {}), an ensemble needs 'replicas:'",
                                     options.config, comm->size(), options.config));
    });
  } else {
    cfg = load_config(options.config, &request.config_text);
  }
  const StopSignals signals(/*sigterm_too=*/true);  // Ctrl-C or a kill stops at the next restart point
  if (cfg.replicas) {
    if (comm) return run_ensemble_command(cfg, request, *comm);
    SingleProcess alone;
    return run_ensemble_command(cfg, request, alone);
  }
  return print_run_summary(run_simulation(cfg, request));
}

namespace {

void print_step_table_header() {
  fmt::print("| atoms | integrator | timestep (fs) | constraints | timed steps | µs/step | ns/day | launches | "
             "list builds | context device MiB | bytes/atom |\n");
  fmt::print("|---|---|---|---|---|---|---|---|---|---|---|\n");
}

std::string plural(int n, const char* word) { return fmt::format("{}{}", word, n == 1 ? "" : "s"); }

void print_cpu_bench(const RunConfig& cfg, const System& s, const BenchReport& r, const std::string& constraints) {
  fmt::print("| system | atoms | platform | ms per evaluation (energy + forces, median of 5) |\n|---|---|---|---|\n");
  fmt::print("| {} | {} | cpu (double) | {:.1f} |\n", cfg.system.pdb, s.num_particles(), r.cpu_ms_per_evaluation);
  if (!r.steps) return;
  const StepBench& t = *r.steps;
  print_step_table_header();
  fmt::print("| {} | {} | {:g} | {} | {} | {:.0f} | {:.3f} | - | - | - | - |\n", s.num_particles(),
             to_string(cfg.integrator.type), cfg.integrator.timestep_ps * 1e3, constraints, t.steps, t.us_per_step,
             t.ns_per_day);
}

// A replica batch's figures are the whole batch's (its atoms: every replica's), with one line more per replica.
void print_cuda_parts(const RunConfig& cfg, const System& one, const ForceBenchTimings& b, int replicas) {
  const ForcePartTimings& t = b.parts;
  fmt::print("device: {}; {} precision; replicate {}x{}x{}; {} tiles{}\n", b.device_name,
             to_string(cfg.platform.precision), cfg.system.replicate[0], cfg.system.replicate[1],
             cfg.system.replicate[2], b.tiles,
             replicas > 1 ? fmt::format("; a batch of {} replicas of {} atoms", replicas, one.num_particles()) : "");
  const long long atoms = static_cast<long long>(one.num_particles()) * replicas;
  fmt::print("| atoms | µs/eval (forces) | µs/eval (+energy) | neighbor rebuild | nonbonded | exceptions | PME | bonded | "
             "device MiB | bytes/atom |\n");
  fmt::print("|---|---|---|---|---|---|---|---|---|---|\n");
  const double mib = static_cast<double>(b.device_memory_bytes) / (1024.0 * 1024.0);
  fmt::print("| {} | {:.1f} | {:.1f} | {:.1f} | {:.1f} | {:.1f} | {:.1f} | {:.1f} | {:.1f} | {:.0f} |\n",
             atoms, t.total_us, t.total_energy_us, t.neighbor_us, t.nonbonded_us, t.exceptions_us, t.pme_us,
             t.bonded_us, mib, static_cast<double>(b.device_memory_bytes) / static_cast<double>(atoms));
  if (replicas > 1)
    fmt::print("per replica: {:.2f} µs/eval (forces), {:.1f} MiB of device memory\n", t.total_us / replicas,
               mib / replicas);
}

void print_cuda_steps(const RunConfig& cfg, const System& s, const StepBench& t, const std::string& constraints) {
  const long long atoms = static_cast<long long>(s.num_particles()) * t.replicas;
  if (t.replicas > 1) {
    fmt::print("## a batch of {} replicas stepped together: µs per step of the batch, ns/day summed over the replicas\n",
               t.replicas);
    fmt::print("| atoms | integrator | dt (fs) | constraints | steps | µs/step | ns/day (all replicas) | ns/day per replica "
               "| device MiB | MiB per replica | bytes/atom |\n|---|---|---|---|---|---|---|---|---|---|---|\n");
    fmt::print("| {} | {} | {:g} | {} | {} | {:.1f} | {:.0f} | {:.0f} | {:.1f} | {:.2f} | {:.0f} |\n", atoms,
               to_string(cfg.integrator.type), cfg.integrator.timestep_ps * 1e3, constraints, t.steps, t.us_per_step,
               t.ns_per_day, t.ns_per_day / t.replicas, t.context_bytes / (1024.0 * 1024.0),
               t.context_bytes / (1024.0 * 1024.0) / t.replicas, t.context_bytes / static_cast<double>(atoms));
    return;
  }
  print_step_table_header();
  fmt::print("| {} | {} | {:g} | {} | {} | {:.1f} | {:.0f} | {} {} per {} {} ({} kernels a step) + {} {} a step "
             "| {} ({:.1f} steps apart) | {:.1f} | {:.0f} |\n",
             s.num_particles(), to_string(cfg.integrator.type), cfg.integrator.timestep_ps * 1e3, constraints, t.steps,
             t.us_per_step, t.ns_per_day, t.graphs, plural(t.graphs, "graph"), t.steps_per_graph,
             plural(t.steps_per_graph, "step"), t.kernels_per_step, t.separate_kernels_per_step,
             plural(t.separate_kernels_per_step, "kernel"), t.list_builds,
             static_cast<double>(t.steps) / std::max(1, t.list_builds), t.context_bytes / (1024.0 * 1024.0),
             t.context_bytes / s.num_particles());
}

void print_timeline(const BenchReport& r) {
  fmt::print("## step timeline ({} single steps, each waited for): µs after the step's start\n", r.timeline_steps);
  fmt::print("| point (stream: finished) | mean | min | max | steps |\n|---|---|---|---|---|\n");
  for (const TimelineRow& row : r.timeline)
    fmt::print("| {} | {:.1f} | {:.1f} | {:.1f} | {} |\n", row.label, row.mean_us, row.min_us, row.max_us, row.steps);
}

}  // namespace

int command_bench(const std::string& config_path, int steps, bool timeline, int replicas) {
  const RunConfig cfg = load_config(config_path);
  const Model model = build_model(cfg);
  const PlatformChoice platform = pick_platform(cfg, "");
  const System& s = model.system;
  const std::string constraints = fmt::format("{}{}", to_string(cfg.system.constraints),
                                              cfg.system.rigid_water ? " + rigid water" : "");
  const BenchReport report = run_bench(cfg, model, platform, steps, timeline, replicas);
  if (report.platform == PlatformKind::Cpu) {
    print_cpu_bench(cfg, s, report, constraints);
    return 0;
  }
  if (report.parts) print_cuda_parts(cfg, s, *report.parts, report.replicas);
  if (report.steps) print_cuda_steps(cfg, s, *report.steps, constraints);
  if (timeline) print_timeline(report);
  return 0;
}

}  // namespace mdsim
