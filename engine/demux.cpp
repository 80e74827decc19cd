#include "engine/demux.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>

#include <fmt/format.h>

#include "common/errors.hpp"
#include "engine/model.hpp"
#include "engine/replicas.hpp"
#include "io/atom_selection.hpp"
#include "io/atomic_file.hpp"
#include "io/exchange_log.hpp"
#include "io/trajectory_h5.hpp"
#include "io/trajectory_reader.hpp"

namespace fs = std::filesystem;

namespace mdsim {

std::vector<int> replicas_by_temperature_at(const std::vector<ExchangeMapPoint>& maps, std::int64_t step, int replicas) {
  std::vector<int> at(static_cast<std::size_t>(replicas));
  for (int t = 0; t < replicas; ++t) at[static_cast<std::size_t>(t)] = t;
  // The last round strictly before `step` (maps are in order of step).
  const auto after = std::lower_bound(maps.begin(), maps.end(), step,
                                      [](const ExchangeMapPoint& p, std::int64_t s) { return p.step < s; });
  if (after != maps.begin()) at = std::prev(after)->replica_at;
  return at;
}

namespace {

std::string temperature_name(int t, double temperature_k) { return fmt::format("temperature_{:02d}_{:.2f}K", t, temperature_k); }

// A state log's lines: header and (step, line) in order.
struct StateLines {
  std::string header;
  std::vector<std::pair<std::int64_t, std::string>> lines;
};
StateLines read_state_lines(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(fmt::format("{}: cannot open the state log (did the run write it?)", path));
  StateLines s;
  std::getline(in, s.header);
  if (s.header.rfind("step,", 0) != 0) throw InputError(fmt::format("{}:1: not an mdsim state log", path));
  const long columns = std::count(s.header.begin(), s.header.end(), ',') + 1;
  std::string line;
  for (int n = 2; std::getline(in, line); ++n) {
    if (line.empty()) continue;
    // A line cut short (a run killed while writing it, a damaged copy) has fewer cells, or no newline at its end.
    const long cells = std::count(line.begin(), line.end(), ',') + 1;
    if (cells != columns || in.eof())
      throw InputError(fmt::format("{}:{}: the line {}: a line cut short, as a run killed while writing leaves it; "
                                   "`mdsim run --resume` keeps only whole lines up to its checkpoint, or remove the "
                                   "line",
                                   path, n,
                                   cells != columns ? fmt::format("has {} cells, the header {}", cells, columns)
                                                    : std::string("has no newline at its end")));
    char* end = nullptr;
    const long long step = std::strtoll(line.c_str(), &end, 10);
    if (end == line.c_str() || *end != ',') throw InputError(fmt::format("{}:{}: no step at the start of the line", path, n));
    s.lines.emplace_back(step, line);
  }
  return s;
}

// What the demultiplexing stages share: the ladder, the replicas' folders, the exchange log's maps and the
// output folder.
struct Demux {
  const RunConfig& cfg;
  const ReplicaConfig& rc;
  int n;  // replicas = temperatures
  fs::path dir;
  std::string out_dir;
  std::vector<ExchangeMapPoint> maps;

  fs::path replica_dir(int k) const { return dir / replica_directory_name(k, n); }
  // Temperature t's output file with `extension` (".h5", ".csv").
  std::string output_path(int t, const char* extension) const {
    return (fs::path(out_dir) / (temperature_name(t, rc.temperatures_k[t]) + extension)).string();
  }
};

// Every replica's trajectory, all at the same steps and with the same atoms.
std::vector<std::unique_ptr<TrajectoryReader>> open_replica_trajectories(const Demux& d, const std::string& file) {
  std::vector<std::unique_ptr<TrajectoryReader>> readers;
  for (int k = 0; k < d.n; ++k) {
    readers.push_back(std::make_unique<TrajectoryReader>((d.replica_dir(k) / file).string()));
    const TrajectoryReader& r = *readers.back();
    if (r.steps() != readers.front()->steps() || r.atoms() != readers.front()->atoms())
      throw InputError(fmt::format("{}: {} frames of {} atoms, but {} has {} of {} (or at other steps): the replicas' "
                                   "trajectories must come from one ensemble run",
                                   r.path(), r.frames(), r.atoms(), readers.front()->path(),
                                   readers.front()->frames(), readers.front()->atoms()));
  }
  return readers;
}

// The per-temperature trajectories' options: the config's atom selection (which must match the replicas'
// frames) and the arrays the replicas' trajectories record.
TrajectoryOptions demux_trajectory_options(const RunConfig& cfg, const Topology& topology, const TrajectoryReader& first) {
  const TrajectoryOutput& traj = cfg.output.trajectory;
  TrajectoryOptions options;
  options.atoms = select_atoms(topology, traj.atoms, at_config_key(cfg, "output.trajectory.atoms", "output.trajectory.atoms"));
  if (static_cast<int>(options.atoms.size()) != first.atoms())
    throw InputError(fmt::format("{}: {} atoms per frame, but output.trajectory.atoms ('{}') selects {}: demux with "
                                 "the config that wrote it",
                                 first.path(), first.atoms(), traj.atoms, options.atoms.size()));
  options.selection = traj.atoms;
  options.velocities = first.velocities();
  options.forces = first.forces();
  options.periodic = first.periodic();
  return options;
}

// Trajectories: each frame of the replica at temperature t into temperature t's file.
void demux_trajectories(const Demux& d, DemuxSummary& summary) {
  const std::vector<std::unique_ptr<TrajectoryReader>> readers = open_replica_trajectories(d, d.cfg.output.trajectory.file);
  const Model model = build_model(d.cfg);
  const TrajectoryReader& first = *readers.front();
  TrajectoryOptions options = demux_trajectory_options(d.cfg, model.topology, first);
  std::vector<std::unique_ptr<TrajectoryWriter>> writers;
  for (int t = 0; t < d.n; ++t) {
    options.title = fmt::format("mdsim replica exchange, demultiplexed: temperature {} ({:.2f} K)", t, d.rc.temperatures_k[t]);
    const std::string path = d.output_path(t, ".h5");
    writers.push_back(std::make_unique<TrajectoryWriter>(path, model.topology, options));
    summary.outputs.emplace_back(fmt::format("trajectory {:.2f} K", d.rc.temperatures_k[t]), path);
  }
  // Whole-system arrays (the writers select the recorded atoms again).
  const std::size_t floats = 3 * static_cast<std::size_t>(model.system.num_particles());
  std::vector<float> positions(floats), velocities(options.velocities ? floats : 0), forces(options.forces ? floats : 0);
  const auto scatter = [&](const std::vector<float>& from, std::vector<float>& to) {
    for (std::size_t i = 0; i < options.atoms.size(); ++i)
      for (int c = 0; c < 3; ++c) to[3 * static_cast<std::size_t>(options.atoms[i]) + c] = from[3 * i + c];
  };
  for (std::int64_t i = 0; i < first.frames(); ++i) {
    const std::vector<int> at = replicas_by_temperature_at(d.maps, first.steps()[static_cast<std::size_t>(i)], d.n);
    for (int t = 0; t < d.n; ++t) {
      const TrajectoryFrame f = readers[static_cast<std::size_t>(at[t])]->read(i);
      scatter(f.positions_nm, positions);
      if (options.velocities) scatter(f.velocities_nm_per_ps, velocities);
      if (options.forces) scatter(f.forces_kj_per_mol_nm, forces);
      FrameView view;
      view.step = f.step;
      view.time_ps = f.time_ps;
      view.box = f.box;
      view.positions_nm = positions;
      view.velocities_nm_per_ps = velocities;
      view.forces_kj_per_mol_nm = forces;
      writers[static_cast<std::size_t>(t)]->write_frame(view);
    }
  }
  for (auto& w : writers) w->close();
  summary.frames = first.frames();
}

// Every replica's state log, all with the same header and lines at the same steps.
std::vector<StateLines> read_replica_state_logs(const Demux& d, const std::string& file) {
  std::vector<StateLines> logs;
  for (int k = 0; k < d.n; ++k) {
    const std::string path = (d.replica_dir(k) / file).string();
    logs.push_back(read_state_lines(path));
    const StateLines& a = logs.front();
    const StateLines& b = logs.back();
    bool same = a.header == b.header && a.lines.size() == b.lines.size();
    for (std::size_t i = 0; same && i < a.lines.size(); ++i) same = a.lines[i].first == b.lines[i].first;
    if (!same)
      throw InputError(fmt::format("{}: its lines are not at the steps of {}'s: the replicas' state logs must come "
                                   "from one ensemble run",
                                   path, (d.replica_dir(0) / file).string()));
  }
  return logs;
}

// State logs: each line of the replica at temperature t into temperature t's log.
void demux_state_logs(const Demux& d, const std::vector<StateLines>& logs, DemuxSummary& summary) {
  std::vector<std::string> text(static_cast<std::size_t>(d.n));
  for (std::string& t : text) t = logs.front().header + "\n";
  for (std::size_t i = 0; i < logs.front().lines.size(); ++i) {
    const std::vector<int> at = replicas_by_temperature_at(d.maps, logs.front().lines[i].first, d.n);
    for (int t = 0; t < d.n; ++t) text[static_cast<std::size_t>(t)] += logs[static_cast<std::size_t>(at[t])].lines[i].second + "\n";
  }
  for (int t = 0; t < d.n; ++t) {
    const std::string path = d.output_path(t, ".csv");
    write_file_atomically(path, text[static_cast<std::size_t>(t)], "the demultiplexed state log");
    summary.outputs.emplace_back(fmt::format("state log {:.2f} K", d.rc.temperatures_k[t]), path);
  }
  summary.state_lines = static_cast<std::int64_t>(logs.front().lines.size());
}

}  // namespace

DemuxSummary demux_ensemble(const RunConfig& cfg, std::string out_dir) {
  if (!cfg.replicas || cfg.replicas->exchange != ReplicaExchangeKind::Temperature)
    throw_config_error(cfg, cfg.replicas ? "replicas.exchange" : "replicas",
                       "demux sorts a temperature ladder's outputs by temperature: the config has no 'replicas' with "
                       "'exchange: temperature' (independent copies are already one per replica)");
  const ReplicaConfig& rc = *cfg.replicas;
  const fs::path dir(cfg.output.directory);
  if (out_dir.empty()) out_dir = (dir / "demux").string();
  const Demux d{cfg, rc, rc.count, dir, out_dir, read_exchange_map((dir / rc.log).string(), rc.count, &rc.temperatures_k)};
  const StateOutput& state = cfg.output.state;
  const bool states = state.interval_steps > 0 && !state.file.empty();
  std::vector<StateLines> logs;  // read (and checked) before anything is written
  if (states) logs = read_replica_state_logs(d, state.file);
  std::error_code ec;
  fs::create_directories(out_dir, ec);
  if (ec) throw InputError(fmt::format("{}: cannot create the folder: {}", out_dir, ec.message()));
  DemuxSummary summary;
  const TrajectoryOutput& traj = cfg.output.trajectory;
  if (traj.interval_steps > 0 && !traj.file.empty()) demux_trajectories(d, summary);
  if (states) demux_state_logs(d, logs, summary);
  if (summary.outputs.empty())
    throw_config_error(cfg, "output", "demux: the config writes neither trajectories nor state logs to sort");
  return summary;
}

}  // namespace mdsim
