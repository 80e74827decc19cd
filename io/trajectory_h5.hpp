// HDF5 trajectory that both H5MD 1.1 readers (MDAnalysis H5MDReader) and MDTraj's HDF5 reader open
// as they are (layout checked with h5py 3.7, MDTraj 1.9.7 and MDAnalysis 2.4.2):
//
//   /                      attrs conventions="Pande", conventionVersion="1.1", program="mdsim",
//                                programVersion, title, application, complete (0 while writing, 1
//                                after a clean close, which `mdsim run` does after every other
//                                output of the run was written), mdsim_selection, [seed], [config_hash],
//                                [mdsim_stage_names, mdsim_stage_first_step, mdsim_stage_last_step: a staged
//                                run's stages, their names (strings) and step ranges (int64; a stage's frames
//                                are those with first_step < step <= last_step)]
//   /h5md                  attr version=[1,1]; author/{name}, creator/{name, version}
//   /particles/all/position/value   frames×N×3 float32, unit="nm", units="nanometers"
//                          /step    frames int64;  /time frames float64, unit="ps", units="picoseconds"
//   /particles/all/box     attrs dimension=3, boundary=["periodic"]*3 (["none"]*3 without a box)
//                  /edges/{value frames×3×3 float64 (rows = box vectors a, b, c; unit="nm"), step, time}
//   /particles/all/velocity/{value (unit "nm ps-1"), step, time}   (optional)
//   /particles/all/force/{value (unit "kJ mol-1 nm-1"), step, time} (optional)
//   /coordinates, /time    hard links to position/value and position/time (MDTraj; one copy of data)
//   /velocities            hard link to velocity/value (when recorded)
//   /cell_lengths, /cell_angles   frames×3 float32 (units "nanometers" / "degrees"), when periodic
//   /topology              one-element string array: MDTraj's topology JSON of the selected atoms
// Every step/time dataset is one object hard-linked into each group (H5MD allows shared step/time).
//
// Strings are variable-length UTF-8 attributes (h5py gives str, as MDAnalysis' unit lookup needs).
//
// Crash safety:
//  - The file is set up under "<path>.partial" and renamed to `path` once its header is flushed.
//  - Frames are appended to extendible chunked datasets (position/velocity/force optionally
//    gzip+shuffle, one frame per compressed chunk). The metadata cache is configured to write
//    nothing between flushes, so the file on disk is always the state of the last flush():
//    a process killed (SIGKILL) between flushes leaves a file that h5py, MDTraj and MDAnalysis
//    open, with exactly the flushed frames and complete=0. A kill during the few milliseconds of an
//    H5Fflush itself can leave the datasets' extents inconsistent (HDF5 without SWMR has no atomic
//    commit; SWMR files are refused by non-SWMR readers after a crash), so flushes should stay
//    seconds apart (FrameWriter's defaults) and SIGINT/SIGTERM should end the run through close().
//  - Before each frame and flush, the blocks needed are allocated (fallocate) so a full disk is
//    found before anything is written; on any write failure the writer stops touching the file
//    (HDF5's descriptor is swapped for an in-memory file) and throws one RuntimeError naming the
//    file, the frame and the reason ("No space left on device"): the file keeps the frames of the
//    last flush and complete=0. A writer destroyed without close() also leaves complete=0.
//  - No HDF5 file locking, so the flushed frames can be read while the run goes on.
#pragma once

#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "io/frame_writer.hpp"
#include "model/topology.hpp"

namespace mdsim {

// A stage of a staged run as the trajectory records it.
struct TrajectoryStage {
  std::string name;
  std::int64_t first_step = 0, last_step = 0;
};

struct TrajectoryOptions {
  std::vector<int> atoms;       // selected atom indices (sorted, unique; see select_atoms); empty = all atoms
  std::string selection = "all";  // the selection text, recorded in the file
  bool velocities = false;
  bool forces = false;
  bool periodic = true;         // frames carry a box (else the box group says boundary "none")
  int gzip_level = 0;           // 0 = uncompressed; 1..9 = gzip with shuffle on position/velocity/force
  std::string title = "mdsim trajectory";
  std::optional<std::uint64_t> seed;  // recorded as root attribute `seed`
  std::string config_hash;            // recorded as root attribute `config_hash` when not empty
  std::vector<TrajectoryStage> stages;  // recorded as the mdsim_stage_* attributes when not empty
  // Restart: open an existing trajectory (same atoms and datasets) and keep only its frames with
  // step <= this value, appending after them; a file that does not exist is created.
  std::optional<std::int64_t> append_after_step;
};

// Debian's HDF5 is built thread-safe, others may not be: every mdsim HDF5 call that can run while a
// FrameWriter thread is active (trajectory, checkpoint) holds this lock.
std::mutex& hdf5_mutex();

// MDTraj's topology JSON for the given atoms of `topology` (chains -> residues -> atoms with index,
// name, element; bonds as new-index pairs from topology.bonds, or topology.conect when bonds is empty).
std::string mdtraj_topology_json(const Topology& topology, const std::vector<int>& atoms);

class TrajectoryWriter final : public FrameSink {
 public:
  // Creates (or, with append_after_step, reopens) `path`. Throws InputError when the folder does not
  // exist or is not writable, the file cannot be created, the selection is out of range, or an
  // existing file to append to does not match; RuntimeError on a write failure.
  TrajectoryWriter(const std::string& path, const Topology& topology, TrajectoryOptions options);
  ~TrajectoryWriter() override;  // closes the file; complete stays 0 unless close() ran
  TrajectoryWriter(const TrajectoryWriter&) = delete;
  TrajectoryWriter& operator=(const TrajectoryWriter&) = delete;

  // `frame` holds arrays of the whole system (3 floats per topology atom); the selected atoms are
  // written. Frames must come with a box when periodic.
  void write_frame(const FrameView& frame) override;
  void flush() override;
  void close() override;  // sets complete=1, closes

  // Before each frame and flush the writer allocates (fallocate) the blocks the frame needs plus
  // this much for the metadata of the next flush, so a full disk is found before anything is
  // written and the file keeps exactly the frames of the last flush.
  static constexpr std::uint64_t kSpaceReserveBytes = 256 * 1024;

  // The frame layout a FrameWriter feeding this writer must use.
  FrameLayout frame_layout() const { return {total_atoms_, options_.velocities, options_.forces}; }
  std::int64_t frames() const { return frames_; }
  int num_selected_atoms() const { return static_cast<int>(atoms_.size()); }
  const std::string& path() const { return path_; }

  // Test hook for the disk-full path: writing fails (as if the disk were full) once the file on
  // disk would grow beyond this many bytes. 0 = off.
  void set_fault_injection_byte_limit(std::uint64_t bytes) { fault_limit_bytes_ = bytes; }
  // The same hook for whole processes (end-to-end tests of `mdsim run`): when the environment
  // variable MDSIM_FAULT_TRAJECTORY_BYTES=<n> is set, the constructor sets the byte limit to the
  // file's size once it is set up (or reopened for appending) plus n, so the run fails as on a full
  // disk once its frames would add more than n bytes. A value that is not a whole number is an
  // InputError naming the variable (thrown before any file is touched); empty or unset = off.
  static constexpr const char* kFaultInjectionVariable = "MDSIM_FAULT_TRAJECTORY_BYTES";
  // Test hook: behave as on a file system without fallocate (no space reserved ahead; a failed
  // write is then caught where HDF5 reports it).
  void disable_space_reservation() { reserve_supported_ = false; }

 private:
  static std::optional<std::uint64_t> fault_injection_bytes_from_environment();
  void create(const Topology& topology);
  bool open_for_append(const Topology& topology, std::int64_t after_step);
  [[noreturn]] void fail(const std::string& what);
  [[noreturn]] void fail_with_reason(const std::string& what, const std::string& reason);
  void reserve_space(std::size_t bytes_to_add, const std::string& what);
  void poison() noexcept;
  void trim_reserved_tail() noexcept;  // after the file is closed
  int file_descriptor() const;
  bool close_handles() noexcept;  // caller holds hdf5_mutex()

  std::string path_;
  TrajectoryOptions options_;
  int total_atoms_ = 0;
  std::vector<int> atoms_;
  std::int64_t frames_ = 0;
  std::int64_t file_id_ = -1;  // hid_t
  bool failed_ = false;
  bool closed_ = false;
  std::int64_t flushed_frames_ = 0;
  std::size_t frames_per_chunk_ = 1;
  bool reserve_supported_ = true;  // fallocate works on this file system
  std::uint64_t fault_limit_bytes_ = 0;
  std::vector<float> scratch_;
  std::vector<std::int64_t> ids_;  // open dataset ids, indexed by the enum in the .cpp
};

}  // namespace mdsim
