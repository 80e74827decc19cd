#include "io/frame_writer.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <new>

#include "common/errors.hpp"

namespace mdsim {

namespace {

class NewDeleteAllocator final : public HostBufferAllocator {
 public:
  void* allocate(std::size_t bytes) override { return ::operator new(bytes); }
  void deallocate(void* pointer, std::size_t) override { ::operator delete(pointer); }
};

using Clock = std::chrono::steady_clock;

}  // namespace

FrameView FrameBuffer::view() const {
  FrameView v;
  v.step = step;
  v.time_ps = time_ps;
  v.box = box;
  v.positions_nm = {positions_, size_};
  if (velocities_) v.velocities_nm_per_ps = {velocities_, size_};
  if (forces_) v.forces_kj_per_mol_nm = {forces_, size_};
  return v;
}

FrameWriter::FrameWriter(std::unique_ptr<FrameSink> sink, FrameLayout layout, FrameWriterOptions options,
                         std::shared_ptr<HostBufferAllocator> allocator, ImagePositions image_positions)
    : sink_(std::move(sink)),
      layout_(layout),
      options_(options),
      image_positions_(std::move(image_positions)),
      allocator_(std::move(allocator)) {
  if (!sink_) throw RuntimeError("FrameWriter: no sink given");
  if (layout_.num_atoms <= 0)
    throw InputError(fmt::format("FrameWriter: the frame layout needs at least one atom (got {})", layout_.num_atoms));
  if (options_.queue_frames < 1)
    throw InputError(fmt::format("FrameWriter: queue_frames must be at least 1 (got {})", options_.queue_frames));
  if (!(options_.flush_interval_s > 0.0) || !std::isfinite(options_.flush_interval_s))
    throw InputError(
        fmt::format("FrameWriter: flush_interval_s must be a positive number of seconds (got {})", options_.flush_interval_s));
  if (options_.flush_every_frames < 1)
    throw InputError(
        fmt::format("FrameWriter: flush_every_frames must be at least 1 (got {})", options_.flush_every_frames));
  if (!allocator_) allocator_ = std::make_shared<NewDeleteAllocator>();

  const std::size_t floats = 3 * static_cast<std::size_t>(layout_.num_atoms);
  const std::size_t bytes = floats * sizeof(float);
  try {
    for (int i = 0; i < options_.queue_frames; ++i) {
      auto buffer = std::make_unique<FrameBuffer>();
      buffer->size_ = floats;
      buffers_.push_back(std::move(buffer));
      FrameBuffer& b = *buffers_.back();
      b.positions_ = static_cast<float*>(allocator_->allocate(bytes));
      if (layout_.velocities) b.velocities_ = static_cast<float*>(allocator_->allocate(bytes));
      if (layout_.forces) b.forces_ = static_cast<float*>(allocator_->allocate(bytes));
      free_.push_back(&b);
    }
  } catch (const std::bad_alloc&) {
    for (auto& b : buffers_) {
      if (b->positions_) allocator_->deallocate(b->positions_, bytes);
      if (b->velocities_) allocator_->deallocate(b->velocities_, bytes);
      if (b->forces_) allocator_->deallocate(b->forces_, bytes);
    }
    throw RuntimeError(fmt::format("FrameWriter: cannot allocate {} frame buffers of {} atoms", options_.queue_frames,
                                   layout_.num_atoms));
  }
  thread_ = std::thread([this] { run(); });
}

FrameWriter::~FrameWriter() {
  stop_thread();
  sink_.reset();  // not closed: a trajectory stays marked incomplete unless close() ran
  const std::size_t bytes = 3 * static_cast<std::size_t>(layout_.num_atoms) * sizeof(float);
  for (auto& b : buffers_) {
    if (b->positions_) allocator_->deallocate(b->positions_, bytes);
    if (b->velocities_) allocator_->deallocate(b->velocities_, bytes);
    if (b->forces_) allocator_->deallocate(b->forces_, bytes);
  }
}

void FrameWriter::stop_thread() noexcept {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  writer_cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void FrameWriter::rethrow_locked() {
  if (error_) std::rethrow_exception(error_);
  if (closed_) throw RuntimeError("FrameWriter: used after close()");
}

FrameBuffer& FrameWriter::acquire() {
  std::unique_lock<std::mutex> lock(mutex_);
  rethrow_locked();
  if (acquired_) throw RuntimeError("FrameWriter: acquire() called again before submit()");
  if (free_.empty()) {
    const auto t0 = Clock::now();
    producer_cv_.wait(lock, [this] { return !free_.empty() || error_; });
    wait_s_ += std::chrono::duration<double>(Clock::now() - t0).count();
    rethrow_locked();
  }
  acquired_ = free_.back();
  free_.pop_back();
  return *acquired_;
}

void FrameWriter::submit() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!acquired_) throw RuntimeError("FrameWriter: submit() without acquire()");
    FrameBuffer* b = acquired_;
    acquired_ = nullptr;
    if (error_) {
      free_.push_back(b);
      std::rethrow_exception(error_);
    }
    queue_.push_back(b);
  }
  writer_cv_.notify_all();
}

void FrameWriter::write(std::int64_t step, double time_ps, const std::optional<Boxd>& box,
                        std::span<const float> positions_nm, std::span<const float> velocities_nm_per_ps,
                        std::span<const float> forces_kj_per_mol_nm) {
  const std::size_t floats = 3 * static_cast<std::size_t>(layout_.num_atoms);
  const auto check = [&](std::span<const float> s, bool wanted, const char* what) {
    if (wanted && s.size() != floats)
      throw RuntimeError(fmt::format("FrameWriter: {} of step {} have {} values, expected {} (3 per atom)", what, step,
                                     s.size(), floats));
  };
  check(positions_nm, true, "positions");
  check(velocities_nm_per_ps, layout_.velocities, "velocities");
  check(forces_kj_per_mol_nm, layout_.forces, "forces");
  FrameBuffer& b = acquire();
  b.step = step;
  b.time_ps = time_ps;
  b.box = box;
  std::copy(positions_nm.begin(), positions_nm.end(), b.positions_nm().begin());
  if (layout_.velocities) std::copy(velocities_nm_per_ps.begin(), velocities_nm_per_ps.end(), b.velocities_nm_per_ps().begin());
  if (layout_.forces) std::copy(forces_kj_per_mol_nm.begin(), forces_kj_per_mol_nm.end(), b.forces_kj_per_mol_nm().begin());
  submit();
}

void FrameWriter::write(std::int64_t step, double time_ps, const std::optional<Boxd>& box,
                        const std::vector<Vec3d>& positions_nm, const std::vector<Vec3d>* velocities_nm_per_ps,
                        const std::vector<Vec3d>* forces_kj_per_mol_nm) {
  const std::size_t atoms = static_cast<std::size_t>(layout_.num_atoms);
  const auto check = [&](const std::vector<Vec3d>* v, bool wanted, const char* what) {
    if (wanted && (!v || v->size() != atoms))
      throw RuntimeError(fmt::format("FrameWriter: {} of step {} have {} atoms, expected {}", what, step,
                                     v ? v->size() : 0, atoms));
  };
  check(&positions_nm, true, "positions");
  check(velocities_nm_per_ps, layout_.velocities, "velocities");
  check(forces_kj_per_mol_nm, layout_.forces, "forces");
  const auto fill = [](std::span<float> out, const std::vector<Vec3d>& in) {
    for (std::size_t i = 0; i < in.size(); ++i) {
      out[3 * i] = static_cast<float>(in[i].x);
      out[3 * i + 1] = static_cast<float>(in[i].y);
      out[3 * i + 2] = static_cast<float>(in[i].z);
    }
  };
  FrameBuffer& b = acquire();
  b.step = step;
  b.time_ps = time_ps;
  b.box = box;
  fill(b.positions_nm(), positions_nm);
  if (layout_.velocities) fill(b.velocities_nm_per_ps(), *velocities_nm_per_ps);
  if (layout_.forces) fill(b.forces_kj_per_mol_nm(), *forces_kj_per_mol_nm);
  submit();
}

void FrameWriter::flush() {
  std::unique_lock<std::mutex> lock(mutex_);
  rethrow_locked();
  const std::int64_t target = ++flush_generation_;
  writer_cv_.notify_all();
  producer_cv_.wait(lock, [&] { return flush_done_generation_ >= target || error_; });
  rethrow_locked();
}

void FrameWriter::close() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    rethrow_locked();
    if (acquired_) {  // acquired but never submitted: give it back unwritten
      free_.push_back(acquired_);
      acquired_ = nullptr;
    }
  }
  stop_thread();  // the thread drains the queue and flushes before it ends
  std::lock_guard<std::mutex> lock(mutex_);
  rethrow_locked();
  closed_ = true;
  try {
    sink_->close();
  } catch (...) {
    error_ = std::current_exception();
    throw;
  }
}

std::int64_t FrameWriter::frames_written() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return written_;
}

std::int64_t FrameWriter::frames_flushed() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return flushed_;
}

double FrameWriter::producer_wait_s() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return wait_s_;
}

void FrameWriter::run() {
  const auto interval = std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(options_.flush_interval_s));
  std::int64_t unflushed = 0;
  Clock::time_point first_unflushed{};
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    // Sleep until there is a frame, a flush request, the end, or the flush deadline.
    const auto has_work = [&] { return !queue_.empty() || stop_ || flush_done_generation_ < flush_generation_; };
    if (unflushed > 0)
      writer_cv_.wait_until(lock, first_unflushed + interval, has_work);
    else
      writer_cv_.wait(lock, has_work);

    std::exception_ptr failure;
    if (!queue_.empty()) {
      FrameBuffer* frame = queue_.front();
      queue_.pop_front();
      in_progress_ = frame;
      lock.unlock();
      try {
        if (frame->ready) {  // the data may still be on its way from the device
          const std::function<void()> wait = std::move(frame->ready);
          frame->ready = nullptr;
          wait();
        }
        if (image_positions_ && frame->box) image_positions_(frame->positions_nm(), *frame->box);
        sink_->write_frame(frame->view());
      } catch (...) {
        failure = std::current_exception();
      }
      lock.lock();
      in_progress_ = nullptr;
      free_.push_back(frame);
      if (!failure) {
        ++written_;
        if (unflushed++ == 0) first_unflushed = Clock::now();
      }
      producer_cv_.notify_all();
    }

    if (!failure) {
      const bool drained = queue_.empty();
      const std::int64_t requested = flush_generation_;
      const bool request = drained && flush_done_generation_ < requested;
      const bool due = unflushed > 0 && (unflushed >= options_.flush_every_frames ||
                                         Clock::now() >= first_unflushed + interval || (stop_ && drained));
      if (request || due) {
        lock.unlock();
        try {
          if (unflushed > 0 || request) sink_->flush();
        } catch (...) {
          failure = std::current_exception();
        }
        lock.lock();
        if (!failure) {
          flushed_ = written_;
          unflushed = 0;
          if (request) flush_done_generation_ = requested;
          producer_cv_.notify_all();
        }
      }
    }

    if (failure) {
      error_ = failure;
      producer_cv_.notify_all();
      return;
    }
    if (stop_ && queue_.empty() && unflushed == 0) return;
  }
}

}  // namespace mdsim
