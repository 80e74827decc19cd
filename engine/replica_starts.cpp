#include "engine/replica_starts.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <utility>

#include "io/trajectory_reader.hpp"
#include "model/system.hpp"

namespace mdsim {

namespace {

// Replica k's file (the list's k-th, or the one trajectory) and the config key that names it.
std::pair<std::string, std::string> start_file(const RunConfig& config, int replica) {
  const std::vector<std::string>& files = config.replicas->coordinates;
  if (files.size() == 1) return {files.front(), "replicas.coordinates"};
  return {files.at(static_cast<std::size_t>(replica)), fmt::format("replicas.coordinates.{}", replica)};
}

// The system's atom i as a message names it: "atom 12 (HB1 of ALA 2)".
std::string system_atom(const Topology& top, std::size_t i) {
  if (i >= top.atoms.size() || top.atoms[i].residue < 0) return fmt::format("atom {}", i + 1);
  const TopologyAtom& a = top.atoms[i];
  const TopologyResidue& r = top.residues[static_cast<std::size_t>(a.residue)];
  return fmt::format("atom {} ({} of {} {})", i + 1, a.name, r.name, r.number);
}

// A structure file's atoms have the system's elements, in its order (atoms without an element, such as extra
// points, are not compared).
void check_elements(const RunConfig& config, const std::string& key, int replica, const Topology& file,
                    const Model& model) {
  for (std::size_t i = 0; i < file.atoms.size() && i < model.topology.atoms.size(); ++i) {
    const std::string& mine = file.atoms[i].element;
    const std::string& theirs = model.topology.atoms[i].element;
    if (mine.empty() || theirs.empty() || mine == theirs) continue;
    throw_config_error(config, key,
                       fmt::format("replica {}: {} line {}: atom {} ({}) is {}, but the system's {} is {}: a "
                                   "replica's coordinates must list the system's atoms in its order",
                                   replica, file.source, file.atoms[i].line, i + 1, file.atoms[i].name, mine,
                                   system_atom(model.topology, i), theirs));
  }
}

// Frame replica_frame(k) of an mdsim trajectory of every atom.
CoordinateFile trajectory_start(const RunConfig& config, const std::string& path, int replica, int particles) {
  const TrajectoryReader reader(path);
  const int count = config.replicas->count;
  if (reader.atoms() != particles)
    throw_config_error(config, "replicas.coordinates",
                       fmt::format("{} records {} atoms (selection '{}'), but the system has {}: replicas start from a "
                                   "trajectory of all atoms (output.trajectory.atoms: all)",
                                   path, reader.atoms(), reader.selection(), particles));
  if (reader.frames() < count)
    throw_config_error(config, "replicas.coordinates",
                       fmt::format("{} holds {} frames for {} replicas: each replica starts from a frame of its own; "
                                   "give a longer trajectory or a list of {} coordinate files",
                                   path, reader.frames(), count, count));
  const std::int64_t frame = replica_frame(replica, count, reader.frames());
  const TrajectoryFrame f = reader.read(frame);
  const auto rows = [](const std::vector<float>& flat) {  // x, y, z per atom
    std::vector<Vec3d> out;
    for (std::size_t i = 0; i + 2 < flat.size(); i += 3) out.emplace_back(flat[i], flat[i + 1], flat[i + 2]);
    return out;
  };
  return CoordinateFile{fmt::format("{} (frame {}, step {})", path, frame, f.step), rows(f.positions_nm),
                        rows(f.velocities_nm_per_ps), f.box};
}

// The start's box: its file's for a periodic system (long enough for the cutoff), else the model's; none otherwise.
void choose_start_box(const RunConfig& config, const std::string& key, const Model& model, CoordinateFile& start) {
  if (!is_periodic(model.system.nonbonded.method)) {
    start.box.reset();
    return;
  }
  if (!start.box) start.box = model.system.box;
  const double half = 0.5 * start.box->smallest_height();
  if (model.system.nonbonded.cutoff_nm > half)
    throw_config_error(config, key,
                       fmt::format("{}: its box's smallest height is {} nm, less than twice the cutoff ({} nm)",
                                   start.source, 2 * half, model.system.nonbonded.cutoff_nm));
}

}  // namespace

std::int64_t replica_frame(int replica, int count, std::int64_t frames) {
  return static_cast<std::int64_t>(replica) * frames / count;
}

CoordinateFile replica_start(const RunConfig& config, const Model& model, int replica) {
  const auto [path, key] = start_file(config, replica);
  const int particles = model.system.num_particles();
  CoordinateFile start;
  if (config.replicas->coordinates.size() == 1) {
    start = trajectory_start(config, path, replica, particles);
  } else {
    Topology structure;
    start = read_coordinate_file(path, &structure);
    if (static_cast<int>(start.positions_nm.size()) != particles)
      throw_config_error(config, key,
                         fmt::format("replica {}: {} has {} atoms, but the system has {}: a replica's coordinates "
                                     "list the system's atoms in its order",
                                     replica, path, start.positions_nm.size(), particles));
    check_elements(config, key, replica, structure, model);
  }
  choose_start_box(config, key, model, start);
  if (config.run.initial_velocities == InitialVelocities::FromCoordinates && start.velocities_nm_per_ps.empty())
    throw_config_error(config, key,
                       fmt::format("run.initial_velocities: from_coordinates starts replica {} from the velocities of "
                                   "{}, which holds none: give coordinates with velocities (a trajectory recorded with "
                                   "velocities: true, a .gro with vx vy vz, an AMBER restart, a serialized State), or "
                                   "use temperature or zero",
                                   replica, start.source));
  return start;
}

Model with_start(const Model& model, const CoordinateFile& start) {
  Model out = model;
  out.positions_nm = start.positions_nm;
  out.topology.positions_nm = start.positions_nm;
  out.velocities_nm_per_ps = start.velocities_nm_per_ps;
  out.system.box = start.box;
  out.topology.box = start.box;
  return out;
}

std::optional<Boxd> shared_box(const std::vector<CoordinateFile>& starts) {
  if (starts.empty() || !starts.front().box) return std::nullopt;
  const Boxd& b = *starts.front().box;
  for (const CoordinateFile& s : starts)
    if (!s.box || !same_box(*s.box, b, 0.0)) return std::nullopt;
  return b;
}

}  // namespace mdsim
