#include "engine/resources.hpp"

#include <sys/statvfs.h>
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "common/errors.hpp"

namespace mdsim {

namespace {

// Per-atom figures: measured peak memory (host and device) with about 1.5× margin.
// The model: topology, System terms and positions, at the peak of replicating (the single copy and the
// tiled one both alive).
constexpr double kModelHostBytesPerAtom = 640;
// The CPU platform's context and evaluator beside the model.
constexpr double kCpuHostBytesPerAtom = 1536;
// The CUDA platform's device buffers (state, pair list, bonded terms, constraints; mixed or double
// precision) besides the PME grid.
constexpr double kCudaDeviceBytesPerAtom = 2048;
// A PME grid point: the real grid, its half-complex transform and the FFT's work space.
constexpr double kPmeBytesPerGridPoint = 32;
// What a run leaves to everything else: estimates above this share of what is available are refused.
constexpr double kUsableShare = 0.9;

std::string gib(double bytes) {
  if (bytes >= 1024.0 * 1024 * 1024 * 1024) return fmt::format("{:.1f} TiB", bytes / (1024.0 * 1024 * 1024 * 1024));
  if (bytes >= 1024.0 * 1024 * 1024) return fmt::format("{:.1f} GiB", bytes / (1024.0 * 1024 * 1024));
  return fmt::format("{:.0f} MiB", bytes / (1024.0 * 1024));
}

double copies(const RunConfig& c) {
  return double(c.system.replicate[0]) * double(c.system.replicate[1]) * double(c.system.replicate[2]);
}

bool replicated(const RunConfig& c) { return copies(c) > 1.0; }

double pme_grid_points(const System& s) {
  if (s.nonbonded.method != NonbondedMethod::PME || !s.box) return 0.0;
  const PmeParameters p = choose_pme_parameters(*s.box, s.nonbonded);
  return double(p.grid[0]) * double(p.grid[1]) * double(p.grid[2]);
}

// The key to name when `atoms` atoms and a PME grid of `grid_bytes` ask for too much.
std::string culprit(const RunConfig& c, double atom_bytes, double grid_bytes) {
  if (grid_bytes > atom_bytes) return "system.ewald_tolerance";
  return replicated(c) ? "system.replicate" : structure_key(c);
}

std::string advice(const std::string& key) {
  if (key == "system.replicate") return "replicate fewer times";
  if (key == "system.ewald_tolerance") return "raise ewald_tolerance (5e-4 is OpenMM's default), which coarsens the grid";
  return "use a machine with more memory or a smaller system";
}

}  // namespace

std::optional<std::uint64_t> available_host_memory_bytes() {
  std::ifstream meminfo("/proc/meminfo");
  for (std::string line; std::getline(meminfo, line);) {
    if (line.rfind("MemAvailable:", 0) != 0) continue;
    std::istringstream fields(line.substr(13));
    std::uint64_t kib = 0;
    // 0 is no running system's figure: the line could not be read, so ask sysconf instead.
    if (fields >> kib && kib > 0) return kib * 1024;
  }
  const long pages = ::sysconf(_SC_AVPHYS_PAGES), page_bytes = ::sysconf(_SC_PAGESIZE);
  if (pages > 0 && page_bytes > 0) return static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(page_bytes);
  return std::nullopt;
}

std::optional<std::uint64_t> free_disk_bytes(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::path p = fs::absolute(path, ec);
  if (ec) return std::nullopt;
  while (!p.empty() && !fs::exists(p, ec)) {
    if (p == p.parent_path()) return std::nullopt;
    p = p.parent_path();
  }
  struct statvfs st{};
  if (::statvfs(p.c_str(), &st) != 0) return std::nullopt;
  return static_cast<std::uint64_t>(st.f_bavail) * static_cast<std::uint64_t>(st.f_frsize);
}

void check_model_memory(const RunConfig& c, std::int64_t atoms_per_copy) {
  const std::optional<std::uint64_t> available = available_host_memory_bytes();
  if (!available) return;
  const double atoms = double(atoms_per_copy) * copies(c);
  const double need = atoms * kModelHostBytesPerAtom;
  if (need <= kUsableShare * double(*available)) return;
  const std::string key = replicated(c) ? "system.replicate" : structure_key(c);
  throw_config_error(c, key,
                     fmt::format("{}: {:.0f} atoms{} need about {} of memory for the model alone (~{:.0f} bytes per "
                                 "atom), but {} is available; {}",
                                 key, atoms,
                                 replicated(c) ? fmt::format(" ({} × {} × {} copies of {})", c.system.replicate[0],
                                                             c.system.replicate[1], c.system.replicate[2],
                                                             atoms_per_copy)
                                               : std::string(),
                                 gib(need), kModelHostBytesPerAtom, gib(double(*available)), advice(key)));
}

void check_platform_memory(const RunConfig& c, const System& s, const PlatformChoice& platform, int replicas_here) {
  const double atoms = s.num_particles();
  const double grid_bytes = pme_grid_points(s) * kPmeBytesPerGridPoint;
  const bool cuda = platform.kind == PlatformKind::Cuda;
  const double atom_bytes = atoms * (cuda ? kCudaDeviceBytesPerAtom : kCpuHostBytesPerAtom);
  std::optional<std::uint64_t> available;
  std::string where;
  if (cuda) {
    const CudaProbe probe = probe_devices();
    for (const CudaDevice& d : probe.devices)
      if (d.index == platform.device) {
        available = d.memory_bytes;
        where = fmt::format("CUDA device {} ({}) has {}", d.index, d.name, gib(double(d.memory_bytes)));
      }
  } else {
    available = available_host_memory_bytes();
    if (available) where = fmt::format("{} of host memory is available", gib(double(*available)));
  }
  if (!available || replicas_here * (atom_bytes + grid_bytes) <= kUsableShare * double(*available)) return;
  if (replicas_here > 1 && atom_bytes + grid_bytes <= kUsableShare * double(*available)) {
    const int fit = std::max(1, static_cast<int>(kUsableShare * double(*available) / (atom_bytes + grid_bytes)));
    throw_config_error(c, "replicas",
                       fmt::format("replicas: {} replicas in one process need about {} on the {} platform ({} each), "
                                   "but {}; spread them over more devices, at most {} per rank (mpirun -n {} on as many GPUs)",
                                   replicas_here, gib(replicas_here * (atom_bytes + grid_bytes)), cuda ? "CUDA" : "CPU",
                                   gib(atom_bytes + grid_bytes), where, fit,
                                   (c.replicas ? c.replicas->count + fit - 1 : replicas_here + fit - 1) / fit));
  }
  const std::string key = culprit(c, atom_bytes, grid_bytes);
  throw_config_error(c, key,
                     fmt::format("{}: the {} platform needs about {} for {:.0f} atoms{}, but {}; {}", key,
                                 cuda ? "CUDA" : "CPU", gib(atom_bytes + grid_bytes), atoms,
                                 grid_bytes > 0 ? fmt::format(" and a PME grid of {:.0f} points ({})",
                                                              pme_grid_points(s), gib(grid_bytes))
                                                : std::string(),
                                 where, advice(key)));
}

void check_trajectory_space(const RunConfig& c, std::int64_t selected_atoms, std::int64_t first_step) {
  const TrajectoryOutput& t = c.output.trajectory;
  if (t.interval_steps <= 0 || t.file.empty() || c.run.steps <= first_step) return;
  // Frames at the multiples of the interval in (first_step, end]; a staged run's stages each with their own.
  const auto frames_in = [](std::int64_t from, std::int64_t to, int interval) {
    return interval <= 0 || to <= from ? 0.0 : std::floor(double(to) / interval) - std::floor(double(from) / interval);
  };
  double frames = 0.0;
  if (c.stages.empty()) {
    frames = frames_in(first_step, c.run.steps, t.interval_steps);
  } else {
    std::int64_t stage_first = 0;
    for (const StageConfig& st : c.stages) {
      frames += frames_in(std::max(stage_first, first_step), stage_first + st.steps, st.trajectory_interval_steps);
      stage_first += st.steps;
    }
  }
  const double arrays = 1.0 + (t.velocities ? 1.0 : 0.0) + (t.forces ? 1.0 : 0.0);
  const double need = frames * (double(selected_atoms) * 3 * sizeof(float) * arrays + 200.0);  // + box, step, time
  const std::optional<std::uint64_t> free = free_disk_bytes(c.output.directory);
  if (!free || need <= double(*free)) return;
  throw_config_error(c, "output.trajectory.interval",
                     fmt::format("output.trajectory.interval: {:.0f} frames of {} atoms need about {}, but the "
                                 "file system of {} has {} free; raise the interval, record fewer atoms "
                                 "(output.trajectory.atoms) or free some space",
                                 frames, selected_atoms, gib(need), c.output.directory, gib(double(*free))));
}

}  // namespace mdsim
