#include "engine/replicas.hpp"

#include <algorithm>
#include <chrono>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <optional>

#include <fmt/format.h>

#include "engine/model.hpp"
#include "engine/platform.hpp"
#include "engine/replica_starts.hpp"
#include "engine/resources.hpp"
#include "io/checkpoint_h5.hpp"
#include "io/exchange_log.hpp"
#include "io/progress.hpp"
#include "platform/barostat.hpp"  // kKjPerMolNm3PerBar
#include "platform/context.hpp"
#include "platform/replica_exchange.hpp"

namespace fs = std::filesystem;

namespace mdsim {

namespace detail {

void agree_on_failure(EnsembleComm& comm, int status, std::exception_ptr error) {
  const int worst = comm.all_max(status);
  if (worst == 0) return;
  // The lowest failing rank reports; the others stop quietly with the worst status.
  const int lowest = -comm.all_max(status != 0 ? -comm.rank() : INT_MIN);
  if (status != 0 && comm.rank() == lowest) std::rethrow_exception(error);
  throw EnsembleStopped(worst);
}

}  // namespace detail

std::string replica_directory_name(int replica, int count) {
  int width = 2;
  for (int m = count - 1; m >= 100; m /= 10) ++width;
  return fmt::format("replica_{:0{}d}", replica, width);
}

std::string idle_devices_notice(int ranks, int devices, int replicas) {
  if (ranks >= devices || replicas <= ranks) return {};
  const int useful = std::min(devices, replicas);
  return fmt::format("notice: {} CUDA devices visible; the ensemble runs on {} ({} rank{}, one device each): "
                     "mpirun -n {} spreads its {} replicas over {} devices",
                     devices, ranks, ranks, ranks == 1 ? "" : "s", useful, replicas, useful);
}

std::uint64_t replica_seed(std::uint64_t ensemble_seed, int replica) {
  std::uint64_t z = ensemble_seed + 0x9E3779B97F4A7C15ull * (static_cast<std::uint64_t>(replica) + 1);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return z != 0 ? z : 1;
}

namespace {

// The exchange decisions' seed when replicas.seed is not given: its own stream of the ensemble's seed.
std::uint64_t derived_exchange_seed(std::uint64_t ensemble_seed) { return replica_seed(ensemble_seed ^ 0x5851F42D4C957F2Dull, -1); }

bool temperature_exchange(const RunConfig& cfg) { return cfg.replicas->exchange == ReplicaExchangeKind::Temperature; }

// The replicas of `rank`: a contiguous block, the first (count mod ranks) ranks holding one more.
std::pair<int, int> replica_block(int count, int ranks, int rank) {
  const int base = count / ranks, extra = count % ranks;
  const int first = rank * base + std::min(rank, extra);
  return {first, first + base + (rank < extra ? 1 : 0)};
}

// The device this rank runs on: platform.device when the config sets it, otherwise its local rank
// modulo the visible CUDA devices (CUDA_VISIBLE_DEVICES applies). Rank 0 says so when GPUs stay idle.
int rank_device(const RunConfig& cfg, const EnsembleComm& comm) {
  if (cfg.locations.count("platform.device") > 0 || cfg.platform.name == "cpu") return cfg.platform.device;
  const CudaProbe probe = probe_devices();
  if (probe.devices.empty()) return cfg.platform.device;
  const int devices = static_cast<int>(probe.devices.size());
  const std::string notice = idle_devices_notice(comm.size(), devices, cfg.replicas->count);
  if (comm.rank() == 0 && !notice.empty()) std::fprintf(stderr, "%s\n", notice.c_str());
  return comm.local_rank() % devices;
}

// Replica k's config: its folder, seed, bath temperature and device; no checkpoint file of its own (the
// ensemble's holds it; the checkpoint interval stays, so its steps remain restart points) and no progress
// line (the ensemble prints one).
RunConfig replica_config(const RunConfig& base, int k, double temperature_k, std::uint64_t seed, int device) {
  RunConfig c = base;
  c.replicas.reset();
  c.output.directory = (fs::path(base.output.directory) / replica_directory_name(k, base.replicas->count)).string();
  c.output.checkpoint.file.clear();
  c.output.progress = false;
  c.integrator.seed = seed;
  if (temperature_exchange(base)) {
    c.integrator.temperature_k = temperature_k;
    if (c.barostat) c.barostat->temperature_k = temperature_k;
  }
  c.platform.device = device;
  return c;
}

// A resumed ensemble continues the one its checkpoint holds: the same replicas and physics (the ladder,
// exchange interval and every physics setting of the base config).
void check_same_ensemble(const RunConfig& cfg, const EnsembleCheckpoint& e, const std::string& path) {
  const ReplicaConfig& rc = *cfg.replicas;
  if (static_cast<int>(e.replicas.size()) != rc.count || e.exchange != to_string(rc.exchange))
    throw_config_error(cfg, "replicas",
                       fmt::format("--resume: {} holds an ensemble of {} replicas with exchange '{}', the config asks "
                                   "for {} with exchange '{}': resume with the config that wrote it",
                                   path, e.replicas.size(), e.exchange, rc.count, to_string(rc.exchange)));
  std::string differences;
  for (const auto& [key, value] : physics_settings(cfg))
    for (const auto& [old_key, old_value] : e.replicas.front().physics)
      if (old_key == key && old_value != value)
        differences += fmt::format("{}{}: checkpoint {}, config {}", differences.empty() ? "" : "; ", key, old_value, value);
  if (!differences.empty())
    throw InputError(fmt::format("{}: --resume continues the ensemble the checkpoint belongs to, but the config changes "
                                 "its physics ({}); change only run length, outputs and intervals",
                                 path, differences));
}

// What a replica's checkpoint holds beyond what every replica shares, as numbers for a gather to rank 0:
// replica index, step, time, seed (two 32-bit halves), box flag + 9, barostat state size + values, positions,
// velocities.
void pack_state(int replica, const Checkpoint& c, std::vector<double>& out) {
  out.push_back(replica);
  out.push_back(static_cast<double>(c.step));
  out.push_back(c.time_ps);
  out.push_back(static_cast<double>(c.seed >> 32));
  out.push_back(static_cast<double>(c.seed & 0xffffffffull));
  out.push_back(c.box ? 1.0 : 0.0);
  const Boxd b = c.box.value_or(Boxd{});
  for (const Vec3d& v : {b.a, b.b, b.c}) out.insert(out.end(), {v.x, v.y, v.z});
  out.push_back(static_cast<double>(c.barostat_state.size()));
  out.insert(out.end(), c.barostat_state.begin(), c.barostat_state.end());
  for (const auto* list : {&c.positions_nm, &c.velocities_nm_per_ps})
    for (const Vec3d& v : *list) out.insert(out.end(), {v.x, v.y, v.z});
}

// The ensemble's checkpoint from the gathered states (rank 0).
EnsembleCheckpoint unpack_states(const std::vector<double>& in, int count, int atoms, const Checkpoint& shared) {
  EnsembleCheckpoint e;
  e.replicas.resize(static_cast<std::size_t>(count));
  std::size_t i = 0;
  for (int r = 0; r < count; ++r) {
    const int k = static_cast<int>(in.at(i++));
    Checkpoint c = shared;
    c.step = static_cast<std::int64_t>(in.at(i++));
    c.time_ps = in.at(i++);
    c.seed = (static_cast<std::uint64_t>(in.at(i)) << 32) | static_cast<std::uint64_t>(in.at(i + 1));
    i += 2;
    const bool has_box = in.at(i++) != 0.0;
    Boxd b;
    for (Vec3d* v : {&b.a, &b.b, &b.c}) *v = Vec3d(in.at(i), in.at(i + 1), in.at(i + 2)), i += 3;
    if (has_box) c.box = b;
    c.barostat_state.assign(in.begin() + static_cast<std::ptrdiff_t>(i + 1),
                            in.begin() + static_cast<std::ptrdiff_t>(i + 1 + static_cast<std::size_t>(in.at(i))));
    i += 1 + c.barostat_state.size();
    c.rng_counter = static_cast<std::uint64_t>(c.step);
    for (auto* list : {&c.positions_nm, &c.velocities_nm_per_ps}) {
      list->resize(static_cast<std::size_t>(atoms));
      for (Vec3d& v : *list) v = Vec3d(in.at(i), in.at(i + 1), in.at(i + 2)), i += 3;
    }
    e.replicas.at(static_cast<std::size_t>(k)) = std::move(c);
  }
  e.step = e.replicas.front().step;
  return e;
}

// Next multiple of `every` after step `s`; never when `every` is 0.
std::int64_t next_multiple(std::int64_t s, std::int64_t every) {
  return every > 0 ? (s / every + 1) * every : std::numeric_limits<std::int64_t>::max();
}

// The ensemble's checkpoint for --resume, checked against the config (InputError when there is none).
EnsembleCheckpoint read_ensemble_restart(const RunConfig& cfg, const std::string& checkpoint_file, const System& system) {
  if (checkpoint_file.empty())
    throw_config_error(cfg, "output.checkpoint", "--resume reads the ensemble's checkpoint, but output.checkpoint is off (null)");
  if (!fs::exists(checkpoint_file)) throw InputError(fmt::format("{}: no checkpoint to resume from", checkpoint_file));
  EnsembleCheckpoint restart = read_ensemble_checkpoint(checkpoint_file, system_fingerprint(system));
  check_same_ensemble(cfg, restart, checkpoint_file);
  return restart;
}

}  // namespace

// One rank's part of an ensemble run: the state its stages share. run_ensemble calls the stages in order, so
// every rank makes the same collective calls in the same sequence.
struct EnsembleRun {
  EnsembleRun(const RunConfig& config, const RunRequest& run_request, EnsembleComm& ensemble_comm);

  void set_up();
  void choose_seeds();
  void create_replicas();
  bool choose_batch() const;
  std::vector<std::unique_ptr<Context>> make_batch();
  void start_outputs();
  void begin_summary();
  void step_to_end();
  bool advance(std::int64_t end, ProgressReporter* progress);
  void save_checkpoint();
  void exchange_round();
  void finish_device_round();
  void move_exchanged(const std::vector<ExchangeAttempt>& attempts, bool scale_velocities);
  void log_attempts(std::int64_t at_step, const std::vector<ExchangeAttempt>& attempts,
                    const std::vector<double>& energies);
  void finish_outputs();
  EnsembleSummary summarise();
  double bath_temperature(int k) const { return rex ? rex->temperature_of(k) : cfg.integrator.temperature_k; }
  // Replica k's config: its folder, seed and device, and its bath temperature now (replica_config).
  RunConfig config_of(int k) const {
    return replica_config(cfg, k, bath_temperature(k), replica_seed(ensemble_seed, k), device);
  }

  const RunConfig& cfg;
  const RunRequest& request;
  EnsembleComm& comm;
  const ReplicaConfig& rc;
  const int count;
  const bool exchange;
  const std::string checkpoint_file;  // "" when the config has none
  const double pv_per_nm3;            // pressure times volume in kJ/mol per nm^3 (0 without a barostat)
  int first = 0, last = 0;            // this rank's replicas: first .. last - 1
  Model model;                        // until each replica holds its copy
  std::vector<CoordinateFile> starts;  // replicas.coordinates: this rank's replicas' own starts (fresh runs)
  std::optional<EnsembleCheckpoint> restart;
  int device = 0;
  PlatformChoice platform;
  bool batched = false;  // this rank's replicas stepped together in one batch (CUDA)
  std::uint64_t ensemble_seed = 0, exchange_seed = 0;
  std::optional<ReplicaExchange> rex;
  // A ladder held whole by this rank's batch (one rank): its rounds decided and applied on the device, each round's
  // outcome brought into rex and the log when the next round starts, at a checkpoint and at the end.
  std::unique_ptr<LadderExchanger> device_exchange;
  std::optional<std::int64_t> device_round_step;  // the step of the device round not yet brought in
  std::vector<std::unique_ptr<Simulation>> sims;  // this rank's replicas
  std::optional<ExchangeLog> log;                 // rank 0 of a temperature ladder
  std::string log_path;
  std::int64_t step = 0;
  Checkpoint shared;  // what every replica's checkpoint shares
  EnsembleSummary summary;
};

EnsembleRun::EnsembleRun(const RunConfig& config, const RunRequest& run_request, EnsembleComm& ensemble_comm)
    : cfg(config),
      request(run_request),
      comm(ensemble_comm),
      rc(*config.replicas),
      count(rc.count),
      exchange(temperature_exchange(config)),
      checkpoint_file(checkpoint_path(config)),
      pv_per_nm3(config.barostat ? config.barostat->pressure_bar * kKjPerMolNm3PerBar : 0.0) {
  const std::pair<int, int> block = replica_block(count, std::max(1, comm.size()), comm.rank());
  first = block.first;
  last = block.second;
}

// The model once per rank, this rank's platform and memory, and on --resume the ensemble's checkpoint.
void EnsembleRun::set_up() {
  collectively(comm, [&] {
    if (comm.size() > count)
      throw_config_error(cfg, "replicas",
                         fmt::format("replicas: {} MPI ranks for {} replicas would leave ranks without work: start at "
                                     "most {} (mpirun -n {})",
                                     comm.size(), count, count, count));
    check_output_paths(cfg);
    model = build_model(cfg);
    if (request.resume) restart = read_ensemble_restart(cfg, checkpoint_file, model.system);
    if (!request.resume && !rc.coordinates.empty())
      for (int k = first; k < last; ++k) starts.push_back(replica_start(cfg, model, k));
    device = rank_device(cfg, comm);
    try {
      platform = choose_platform(cfg.platform.name, device);
    } catch (const InputError& e) {
      throw_config_error(cfg, "platform.name", e.what());
    }
    check_platform_memory(cfg, model.system, platform, last - first);
  });
}

// The ensemble's seed (rank 0's) and the exchange decisions' seed, or the checkpoint's on --resume.
void EnsembleRun::choose_seeds() {
  ensemble_seed = restart ? restart->ensemble_seed : comm.broadcast(choose_seed(cfg.integrator.seed));
  exchange_seed = restart ? restart->exchange_seed : (rc.seed != 0 ? rc.seed : derived_exchange_seed(ensemble_seed));
}

// Whether this rank's replicas run as one batch (docs/replicas.md): on the CUDA platform, more than one here, unless
// replicas.batch is false or a barostat needs the volume of each to move (a one-line notice says so).
bool EnsembleRun::choose_batch() const {
  if (platform.kind != PlatformKind::Cuda || last - first < 2 || !rc.batch) return false;
  if (cfg.barostat) {
    if (comm.rank() == 0)
      std::fprintf(stderr, "notice: the replicas run one by one on each GPU: a batch runs at constant volume, and this "
                           "config has a barostat\n");
    return false;
  }
  if (is_periodic(model.system.nonbonded.method) && !starts.empty() && !shared_box(starts)) {
    if (comm.rank() == 0)
      std::fprintf(stderr, "notice: the replicas run one by one on each GPU: a batch shares one box, and the boxes of "
                           "replicas.coordinates differ\n");
    return false;
  }
  return true;
}

// This rank's replicas' views of one batch, each with its replica's temperature and seed.
std::vector<std::unique_ptr<Context>> EnsembleRun::make_batch() {
  std::vector<DynamicsSettings> settings;
  for (int k = first; k < last; ++k) settings.push_back(dynamics_settings(config_of(k)));
  if (starts.empty()) return make_replica_batch(model.system, settings, platform, cfg.platform);
  System system = model.system;  // in the box its replicas' starts share
  system.box = starts.front().box;
  return make_replica_batch(system, settings, platform, cfg.platform);
}

// The exchange's state and this rank's replicas (their contexts a batch's views when batched).
void EnsembleRun::create_replicas() {
  collectively(comm, [&] {
    if (exchange) {
      rex.emplace(rc.temperatures_k, exchange_seed);
      if (restart) rex->set_state(restart->exchange_state);
    }
    batched = choose_batch();
    std::vector<std::unique_ptr<Context>> views;
    if (batched) views = make_batch();
    for (int k = first; k < last; ++k) {
      RunRequest r;
      r.config_text = request.config_text;
      Model start;  // the replica's own start (replicas.coordinates), copied by its Simulation
      if (!starts.empty()) start = with_start(model, starts[static_cast<std::size_t>(k - first)]);
      r.model = starts.empty() ? &model : &start;
      if (restart) r.restart = restart->replicas[static_cast<std::size_t>(k)];
      r.platform_notice = comm.rank() == 0 && k == first;
      r.label = fmt::format("replica {}: ", k);
      if (batched) {
        auto view = std::make_shared<std::unique_ptr<Context>>(std::move(views[static_cast<std::size_t>(k - first)]));
        r.context = [view] { return std::move(*view); };
      }
      sims.push_back(std::make_unique<Simulation>(config_of(k), std::move(r)));
    }
  });
  model = Model{};  // each replica holds its copy
  starts.clear();
  if (exchange && batched && comm.size() == 1) {
    std::vector<int> replica_at;
    for (int t = 0; t < count; ++t) replica_at.push_back(rex->replica_at(t));
    device_exchange = sims.front()->context().ladder_exchanger(rc.temperatures_k, replica_at, exchange_seed);
  }
}

// Outputs: each replica's (start_run: minimisation on a fresh start, reporters), the exchange log on rank 0;
// what every replica's checkpoint shares.
void EnsembleRun::start_outputs() {
  log_path = (fs::path(cfg.output.directory) / rc.log).string();
  step = restart ? restart->step : 0;
  // The replicas' minimisations first: a stop request during any of them (agreed over the ranks) ends the run
  // before anything is written, as a single run's (engine/simulation.hpp).
  bool interrupted = false;
  collectively(comm, [&] {
    for (auto& sim : sims) interrupted = !sim->minimize_at_start() || interrupted;
  });
  if (comm.all_max(interrupted ? 1 : 0) != 0) {
    summary.stopped_early = summary.stopped_in_minimization = true;
    return;
  }
  collectively(comm, [&] {
    std::error_code ec;
    fs::create_directories(cfg.output.directory, ec);
    for (auto& sim : sims) sim->start_run();
    if (exchange && comm.rank() == 0)
      log.emplace(log_path, count, restart ? std::optional<std::int64_t>(step) : std::nullopt);
    shared = sims.front()->checkpoint();
    shared.physics = physics_settings(cfg);
  });
}

void EnsembleRun::begin_summary() {
  summary.replicas = count;
  summary.ranks = comm.size();
  summary.comm = comm.name();
  summary.exchange = to_string(rc.exchange);
  summary.first_step = step;
  summary.platform = sims.front()->platform_description();
  if (batched) summary.platform += fmt::format(", {} replicas a batch", last - first);
  summary.ensemble_seed = ensemble_seed;
  summary.exchange_seed = exchange ? exchange_seed : 0;
}

// The steps: every replica to the next exchange, checkpoint or restart point, then the agreed stop
// request, the exchange round and the checkpoint when due.
void EnsembleRun::step_to_end() {
  std::optional<ProgressReporter> progress;
  if (cfg.output.progress && comm.rank() == 0)
    progress.emplace(stderr, step, cfg.run.steps, cfg.integrator.timestep_ps,
                     ProgressOptions{std::nullopt, 0.25, 10.0, fmt::format("{} replicas: ", count)});
  const auto start = std::chrono::steady_clock::now();
  advance(cfg.run.steps, progress ? &*progress : nullptr);
  if (progress) progress->finish(step);
  summary.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Every replica to step `end`, stopping at each exchange, checkpoint and restart point (and, batched, each report
// step) on the way for the agreed stop request, the exchange round and the checkpoint when due. False when a stop
// request ended it early.
bool EnsembleRun::advance(std::int64_t end, ProgressReporter* progress) {
  const std::int64_t every_exchange = exchange ? rc.exchange_interval_steps : 0;
  const std::int64_t every_checkpoint = checkpoint_file.empty() ? 0 : cfg.output.checkpoint.interval_steps;
  while (step < end) {
    std::int64_t target = std::min<std::int64_t>(end, next_multiple(step, kRestartIntervalSteps));
    target = std::min(target, next_multiple(step, every_exchange));
    target = std::min(target, next_multiple(step, every_checkpoint));
    if (batched) {  // a batch's replicas advance together: every replica reports at a step before the batch moves on
      target = std::min(target, next_multiple(step, cfg.output.trajectory.interval_steps));
      target = std::min(target, next_multiple(step, cfg.output.state.interval_steps));
    }
    collectively(comm, [&] {
      for (auto& sim : sims) sim->run_to(target);
    });
    step = target;
    const bool stop = comm.all_max(request.stop && request.stop->load() ? 1 : 0) != 0;
    if (every_exchange > 0 && step % every_exchange == 0) exchange_round();
    if (every_checkpoint > 0 && step % every_checkpoint == 0 && step < cfg.run.steps) save_checkpoint();
    if (progress) progress->update(step);
    if (stop) {
      summary.stopped_early = true;
      return false;
    }
  }
  return true;
}

// Writes the ensemble's checkpoint at the current step: every replica's state gathered to rank 0.
void EnsembleRun::save_checkpoint() {
  finish_device_round();
  if (checkpoint_file.empty()) return;
  std::vector<double> mine;
  collectively(comm, [&] {
    for (std::size_t i = 0; i < sims.size(); ++i) {
      sims[i]->flush_outputs();  // the trajectories on disk reach the checkpoint's step
      pack_state(first + static_cast<int>(i), sims[i]->checkpoint(), mine);
    }
  });
  const std::vector<double> all = comm.gather(mine);
  collectively(comm, [&] {
    if (comm.rank() != 0) return;
    EnsembleCheckpoint e = unpack_states(all, count, static_cast<int>(shared.positions_nm.size()), shared);
    e.exchange = to_string(rc.exchange);
    e.temperatures_k = exchange ? rc.temperatures_k : std::vector<double>{};
    e.ensemble_seed = ensemble_seed;
    e.exchange_seed = exchange ? exchange_seed : 0;
    if (rex) e.exchange_state = rex->state();
    write_ensemble_checkpoint(checkpoint_file, e);
  });
}

// One exchange round at `step`: energies gathered, the same decisions on every rank, this rank's
// replicas moved, the attempts logged on rank 0.
void EnsembleRun::exchange_round() {
  finish_device_round();
  if (device_exchange && device_exchange->start_round(rex->rounds())) {
    device_round_step = step;
    return;
  }
  std::vector<double> mine;  // per replica: potential (kJ/mol), volume (nm^3; 0 without a box)
  collectively(comm, [&] {
    StateRequest energy;
    energy.positions = false;
    energy.energy = true;
    for (auto& sim : sims) {
      const SimulationState s = sim->context().state(energy);
      mine.push_back(s.potential.total);
      mine.push_back(s.has_box ? s.box.volume() : 0.0);
    }
  });
  const std::vector<double> all = comm.all_gather(mine);
  collectively(comm, [&] {
    std::vector<double> reduced(static_cast<std::size_t>(count));  // U + pV, kJ/mol
    for (int k = 0; k < count; ++k) reduced[k] = all[2 * k] + pv_per_nm3 * all[2 * k + 1];
    const std::vector<ExchangeAttempt> attempts = rex->exchange(reduced);
    move_exchanged(attempts, true);
    if (log) log_attempts(step, attempts, all);
  });
}

// The device round started last (exchange_round), if any: its decisions into rex (the same attempts, energies and
// probabilities as the host's rule), the replicas' bath temperatures as the device set them, the log.
void EnsembleRun::finish_device_round() {
  if (!device_round_step) return;
  const std::int64_t at_step = *device_round_step;
  device_round_step.reset();
  const LadderRound round = device_exchange->finish_round();
  const std::vector<ExchangeAttempt> attempts = rex->apply(round.energies_kj_per_mol, round.accepted);
  move_exchanged(attempts, false);  // the device scaled the velocities
  if (round.skipped)
    std::fprintf(stderr, "notice: the exchange round at step %lld exchanged nothing: the pair list overflowed at its "
                         "evaluation (it grows now)\n", static_cast<long long>(at_step));
  StateRequest header;  // the box (a batch's replicas share it)
  header.positions = false;
  const SimulationState h = sims.front()->context().state(header);
  const double volume_nm3 = h.has_box ? h.box.volume() : 0.0;
  std::vector<double> energies;  // per replica: potential, volume (exchange_round's layout)
  for (const double e : round.energies_kj_per_mol) energies.insert(energies.end(), {e, volume_nm3});
  if (log) log_attempts(at_step, attempts, energies);
}

// This rank's replicas of the accepted attempts to their new temperatures, velocities scaled when asked.
void EnsembleRun::move_exchanged(const std::vector<ExchangeAttempt>& attempts, bool scale_velocities) {
  for (const ExchangeAttempt& a : attempts) {
    if (!a.accepted) continue;
    for (const auto& [replica, scale] : {std::pair{a.replica_lower, a.velocity_scale_lower},
                                         std::pair{a.replica_upper, a.velocity_scale_upper}}) {
      if (replica < first || replica >= last) continue;
      Simulation& sim = *sims[static_cast<std::size_t>(replica - first)];
      sim.context().set_temperature(rex->temperature_of(replica));
      if (scale_velocities) sim.context().scale_velocities(scale);
    }
  }
}

// The round's attempts into the exchange log; `energies` per replica: potential, volume (exchange_round).
void EnsembleRun::log_attempts(std::int64_t at_step, const std::vector<ExchangeAttempt>& attempts,
                               const std::vector<double>& energies) {
  std::vector<int> replica_at(static_cast<std::size_t>(count));
  for (int t = 0; t < count; ++t) replica_at[t] = rex->replica_at(t);
  for (const ExchangeAttempt& a : attempts) {
    ExchangeLogRow row;
    row.step = at_step;
    row.time_ps = static_cast<double>(at_step) * cfg.integrator.timestep_ps;
    row.round = a.round;
    row.pair = a.lower;
    row.temperature_lower_k = rc.temperatures_k[static_cast<std::size_t>(a.lower)];
    row.temperature_upper_k = rc.temperatures_k[static_cast<std::size_t>(a.lower + 1)];
    row.replica_lower = a.replica_lower;
    row.replica_upper = a.replica_upper;
    row.potential_lower_kj_per_mol = energies[2 * a.replica_lower];
    row.potential_upper_kj_per_mol = energies[2 * a.replica_upper];
    if (shared.box) {
      row.volume_lower_nm3 = energies[2 * a.replica_lower + 1];
      row.volume_upper_nm3 = energies[2 * a.replica_upper + 1];
    }
    row.probability = a.probability;
    row.accepted = a.accepted;
    row.replica_at = replica_at;
    log->write(row);
  }
}

// Final outputs of every replica (the final structures when the run was not stopped, then the
// trajectories' complete mark) and the exchange log closed.
void EnsembleRun::finish_outputs() {
  finish_device_round();
  collectively(comm, [&] {
    for (auto& sim : sims) sim->finish_run(summary.stopped_early);
    if (log) log->close();
  });
}

EnsembleSummary EnsembleRun::summarise() {
  summary.last_step = step;
  summary.simulated_ps_per_replica = static_cast<double>(step - summary.first_step) * cfg.integrator.timestep_ps;
  summary.ns_per_day_per_replica =
      summary.wall_s > 0 ? summary.simulated_ps_per_replica * 1e-3 * 86400.0 / summary.wall_s : 0.0;
  summary.ns_per_day_total = summary.ns_per_day_per_replica * count;
  if (rex) {
    for (int k = 0; k + 1 < count; ++k)
      summary.pairs.push_back({rc.temperatures_k[static_cast<std::size_t>(k)],
                               rc.temperatures_k[static_cast<std::size_t>(k + 1)], rex->attempts(k),
                               rex->acceptances(k)});
    for (int k = 0; k < count; ++k) summary.round_trips.push_back(rex->round_trips(k));
  }
  for (int k = 0; k < count; ++k)
    summary.outputs.emplace_back(fmt::format("replica {}", k),
                                 (fs::path(cfg.output.directory) / replica_directory_name(k, count)).string());
  if (log) summary.outputs.emplace_back("exchange log", log_path);
  if (!checkpoint_file.empty()) summary.outputs.emplace_back("checkpoint", checkpoint_file);
  return std::move(summary);
}

Ensemble::Ensemble(RunConfig config, RunRequest request, EnsembleComm& comm)
    : config_(std::move(config)), request_(std::move(request)) {
  if (!config_.replicas) throw_config_error(config_, "replicas", "an Ensemble needs a config with 'replicas:'");
  run_ = std::make_unique<EnsembleRun>(config_, request_, comm);
  run_->set_up();
  run_->choose_seeds();
  run_->create_replicas();
  run_->start_outputs();
  run_->begin_summary();
  if (run_->summary.stopped_in_minimization)
    throw RuntimeError("the replicas' minimisation was interrupted; nothing was written");
}

Ensemble::~Ensemble() = default;

std::int64_t Ensemble::current_step() const { return run_->step; }
int Ensemble::first_replica() const { return run_->first; }
int Ensemble::replicas() const { return run_->last - run_->first; }
bool Ensemble::batched() const { return run_->batched; }
Simulation& Ensemble::replica(int local_index) { return *run_->sims.at(static_cast<std::size_t>(local_index)); }
double Ensemble::bath_temperature(int replica) const { return run_->bath_temperature(replica); }

void Ensemble::add_batch_force(std::shared_ptr<ExternalForce> force) {
  if (!batched())
    throw InputError("a force on the whole ensemble acts on a replica batch: these replicas run one by one (the CPU "
                     "platform, replicas.batch: false, a barostat, or starts in different boxes)");
  mdsim::add_batch_force(replica(0).context(), std::move(force));
}
void Ensemble::remove_batch_force(const ExternalForce* force) { mdsim::remove_batch_force(replica(0).context(), force); }

bool Ensemble::run_to(std::int64_t step) {
  if (step > config_.run.steps)
    throw_config_error(config_, "run",
                       fmt::format("the ensemble ends at run.steps = {}: step {} is past it (its replicas' outputs and "
                                   "exchanges are planned to that end); give a longer run",
                                   config_.run.steps, step));
  const auto start = std::chrono::steady_clock::now();
  const bool whole = run_->advance(step, nullptr);
  run_->finish_device_round();  // the exchange log and bath temperatures up to date between calls
  run_->summary.wall_s += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return whole;
}

EnsembleSummary Ensemble::finish(bool stopped_early) {
  run_->summary.stopped_early = run_->summary.stopped_early || stopped_early;
  run_->save_checkpoint();
  run_->finish_outputs();
  return run_->summarise();
}

EnsembleSummary run_ensemble(const RunConfig& cfg, const RunRequest& request, EnsembleComm& comm) {
  EnsembleRun run(cfg, request, comm);
  run.set_up();
  run.choose_seeds();
  run.create_replicas();
  run.start_outputs();
  run.begin_summary();
  if (run.summary.stopped_in_minimization) return run.summary;
  run.step_to_end();
  run.save_checkpoint();  // the final state
  run.finish_outputs();
  return run.summarise();
}

}  // namespace mdsim
