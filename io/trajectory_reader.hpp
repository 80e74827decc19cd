// Reads the frames of an mdsim HDF5 trajectory (io/trajectory_h5.hpp's layout) back, one at a time:
// what `mdsim demux` sorts by temperature.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "physics/pbc.hpp"

namespace mdsim {

struct TrajectoryFrame {
  std::int64_t step = 0;
  double time_ps = 0.0;
  std::optional<Boxd> box;                // nm; periodic trajectories only
  std::vector<float> positions_nm;        // 3 per recorded atom
  std::vector<float> velocities_nm_per_ps;  // when recorded
  std::vector<float> forces_kj_per_mol_nm;  // when recorded
};

class TrajectoryReader {
 public:
  // Opens `path` for reading. InputError naming the file when it is not an mdsim trajectory (no
  // /particles/all/position group, shapes that disagree).
  explicit TrajectoryReader(const std::string& path);
  ~TrajectoryReader();
  TrajectoryReader(const TrajectoryReader&) = delete;
  TrajectoryReader& operator=(const TrajectoryReader&) = delete;

  std::int64_t frames() const { return static_cast<std::int64_t>(steps_.size()); }
  int atoms() const { return atoms_; }  // recorded atoms
  bool velocities() const { return velocities_; }
  bool forces() const { return forces_; }
  bool periodic() const { return periodic_; }
  bool complete() const { return complete_; }         // root attribute complete = 1
  const std::string& selection() const { return selection_; }  // root attribute mdsim_selection
  const std::vector<std::int64_t>& steps() const { return steps_; }
  const std::string& path() const { return path_; }

  TrajectoryFrame read(std::int64_t frame) const;

 private:
  std::string path_;
  long long file_ = -1;  // hid_t
  int atoms_ = 0;
  bool velocities_ = false, forces_ = false, periodic_ = false, complete_ = false;
  std::string selection_;
  std::vector<std::int64_t> steps_;
  std::vector<double> times_;
};

}  // namespace mdsim
