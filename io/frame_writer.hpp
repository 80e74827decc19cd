// Background writing of trajectory frames.
//
// The simulation loop (producer) fills a pooled frame buffer and hands it over; a writer thread
// takes buffers from a bounded queue, passes them to a FrameSink (the HDF5 TrajectoryWriter) and
// returns them to the pool. The producer never waits on the disk unless every buffer is queued.
//
//   FrameWriter writer(std::make_unique<TrajectoryWriter>(...), {num_atoms, velocities, forces});
//   FrameBuffer& f = writer.acquire();          // rethrows a writer-thread error
//   f.step = step; f.time_ps = t; f.box = box;  // fill f.positions_nm() (3 floats per atom) ...
//   writer.submit();
//   ...
//   writer.close();                             // drains, flushes, closes the sink cleanly
//
// Flush policy: the writer thread calls sink.flush() once `flush_every_frames` frames are unflushed
// or `flush_interval_s` seconds after the oldest unflushed frame was written (it wakes up for that
// even when no new frame arrives), so a killed process loses at most the frames since the last
// flush. flush() forces one and waits for it (e.g. before a checkpoint is written).
//
// Errors thrown by the sink on the writer thread stop writing; the exception is re-thrown to the
// producer by the next acquire/submit/write/flush/close call. Buffers can come from a caller-given
// allocator (the CUDA platform passes pinned host memory so a device-to-host copy on its own stream
// can fill them directly, and FrameBuffer::ready makes the writer thread wait for that copy).
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <thread>
#include <vector>

#include "common/host_buffer.hpp"
#include "physics/pbc.hpp"
#include "physics/vec3.hpp"

namespace mdsim {

// One frame as the sink sees it. Arrays hold 3 floats per atom of the whole system (x0 y0 z0 x1 ...);
// velocities / forces are empty when not recorded.
struct FrameView {
  std::int64_t step = 0;
  double time_ps = 0.0;
  std::optional<Boxd> box;                       // nm; none for a non-periodic system
  std::span<const float> positions_nm;
  std::span<const float> velocities_nm_per_ps;
  std::span<const float> forces_kj_per_mol_nm;
};

// Where frames go. Called from the writer thread only (one call at a time).
class FrameSink {
 public:
  virtual ~FrameSink() = default;
  virtual void write_frame(const FrameView& frame) = 0;
  virtual void flush() = 0;
  virtual void close() = 0;  // clean end of the run (TrajectoryWriter marks the file complete)
};

struct FrameLayout {
  int num_atoms = 0;  // atoms of the whole system (selection happens in the sink)
  bool velocities = false;
  bool forces = false;
};

struct FrameWriterOptions {
  int queue_frames = 4;             // pooled buffers (>= 1); the producer waits only when all are queued
  double flush_interval_s = 10.0;   // flush at most this long after the first unflushed frame (> 0)
  int flush_every_frames = 100;     // ... or once this many frames are unflushed (>= 1)
};

// Called on the writer thread with each periodic frame's positions (3 floats per atom, nm) and box before
// the sink writes them (the run's FrameImager, model/imaging.hpp); empty: written as given.
using ImagePositions = std::function<void(std::span<float> positions_nm, const Boxd& box)>;

// A pooled frame buffer, filled by the producer between acquire() and submit().
class FrameBuffer {
 public:
  std::int64_t step = 0;
  double time_ps = 0.0;
  std::optional<Boxd> box;
  // Set by a producer whose copy into this buffer is still in flight (the CUDA platform's
  // device-to-host copy on its own stream): the writer thread calls it, and it returns once the
  // arrays hold the frame, before the frame is written. Empty: the arrays are filled already.
  std::function<void()> ready;

  std::span<float> positions_nm() { return {positions_, size_}; }
  std::span<float> velocities_nm_per_ps() { return {velocities_, velocities_ ? size_ : 0}; }
  std::span<float> forces_kj_per_mol_nm() { return {forces_, forces_ ? size_ : 0}; }
  FrameView view() const;

 private:
  friend class FrameWriter;
  float* positions_ = nullptr;
  float* velocities_ = nullptr;
  float* forces_ = nullptr;
  std::size_t size_ = 0;  // floats per array (3 * atoms)
};

class FrameWriter {
 public:
  // Starts the writer thread. Throws InputError when the options are out of range.
  FrameWriter(std::unique_ptr<FrameSink> sink, FrameLayout layout, FrameWriterOptions options = {},
              std::shared_ptr<HostBufferAllocator> allocator = nullptr, ImagePositions image_positions = {});
  // Without close(): writes what is queued, stops the thread and destroys the sink without
  // closing it cleanly (an HDF5 trajectory stays marked incomplete). Never throws.
  ~FrameWriter();
  FrameWriter(const FrameWriter&) = delete;
  FrameWriter& operator=(const FrameWriter&) = delete;

  // Producer side (one producer thread). acquire() returns a free buffer, waiting only while all
  // buffers are queued; at most one buffer may be acquired at a time. submit() queues it.
  FrameBuffer& acquire();
  void submit();
  // acquire + copy + submit. Spans hold 3 floats per atom; velocities/forces may be empty only
  // when the layout does not record them.
  void write(std::int64_t step, double time_ps, const std::optional<Boxd>& box, std::span<const float> positions_nm,
             std::span<const float> velocities_nm_per_ps = {}, std::span<const float> forces_kj_per_mol_nm = {});
  // The same from double-precision vectors (CPU platform); nullptr = not given.
  void write(std::int64_t step, double time_ps, const std::optional<Boxd>& box, const std::vector<Vec3d>& positions_nm,
             const std::vector<Vec3d>* velocities_nm_per_ps = nullptr,
             const std::vector<Vec3d>* forces_kj_per_mol_nm = nullptr);
  // Waits until every submitted frame is written and the sink flushed.
  void flush();
  // Drains the queue, flushes, closes the sink, stops the thread. Rethrows a writer error.
  void close();

  std::int64_t frames_written() const;   // by the sink
  std::int64_t frames_flushed() const;
  double producer_wait_s() const;        // total time acquire() waited for a free buffer

 private:
  void run();
  void rethrow_locked();
  void stop_thread() noexcept;

  std::unique_ptr<FrameSink> sink_;
  FrameLayout layout_;
  FrameWriterOptions options_;
  ImagePositions image_positions_;
  std::shared_ptr<HostBufferAllocator> allocator_;
  std::vector<std::unique_ptr<FrameBuffer>> buffers_;

  mutable std::mutex mutex_;
  std::condition_variable producer_cv_, writer_cv_;
  std::vector<FrameBuffer*> free_;
  std::deque<FrameBuffer*> queue_;
  FrameBuffer* acquired_ = nullptr;
  FrameBuffer* in_progress_ = nullptr;
  bool stop_ = false;
  bool flush_requested_ = false;
  std::int64_t flush_generation_ = 0, flush_done_generation_ = 0;
  std::exception_ptr error_;
  std::int64_t written_ = 0, flushed_ = 0;
  double wait_s_ = 0.0;
  bool closed_ = false;
  std::thread thread_;
};

}  // namespace mdsim
