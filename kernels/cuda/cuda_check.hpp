// Error checking and RAII device memory, streams and events for the CUDA platform. Every CUDA runtime call goes through
// MDSIM_CUDA_CHECK, which throws mdsim::RuntimeError naming the call, file and line.
// Host<->device copies made through DeviceBuffer are counted (transfer_count()), so a test can prove
// that a step makes none.
#pragma once

#include <cuda_runtime.h>

#include <atomic>
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "common/errors.hpp"

namespace mdsim::cuda {

[[noreturn]] void throw_cuda_error(cudaError_t err, const char* call, const char* file, int line);

#define MDSIM_CUDA_CHECK(call)                                                       \
  do {                                                                               \
    const cudaError_t mdsim_err_ = (call);                                           \
    if (mdsim_err_ != cudaSuccess) ::mdsim::cuda::throw_cuda_error(mdsim_err_, #call, __FILE__, __LINE__); \
  } while (0)

// Checks the last kernel launch (launch-configuration errors); asynchronous faults surface at the
// next synchronising call.
#define MDSIM_CUDA_CHECK_LAUNCH() MDSIM_CUDA_CHECK(cudaGetLastError())

// Number of host<->device copies issued through DeviceBuffer since the program started.
std::size_t transfer_count();
void count_transfer();
// Kernel nodes in a captured graph (for the benchmark's "kernels per step").
int count_kernel_nodes(cudaGraph_t graph);
// Instantiates a captured graph so that its kernel nodes keep the priorities of the streams they were
// captured from (StreamPriority).
cudaError_t instantiate_graph(cudaGraphExec_t* exec, cudaGraph_t graph);

// Scheduling priority of a stream's kernels (also of the kernel nodes captured from it, for graphs
// instantiated with cudaGraphInstantiateFlagUseNodePriority): where two streams' kernels compete for
// the multiprocessors, a High stream's thread blocks are started first.
enum class StreamPriority { Normal, High };

// A CUDA stream owned for its lifetime (non-blocking: no implicit order with the legacy default
// stream). Converts to cudaStream_t for launches; the destructor waits for its work, then destroys it.
class Stream {
 public:
  explicit Stream(StreamPriority priority = StreamPriority::Normal) {
    int least = 0, greatest = 0;
    MDSIM_CUDA_CHECK(cudaDeviceGetStreamPriorityRange(&least, &greatest));
    MDSIM_CUDA_CHECK(cudaStreamCreateWithPriority(&stream_, cudaStreamNonBlocking,
                                                  priority == StreamPriority::High ? greatest : least));
  }
  ~Stream() {
    if (stream_ == nullptr) return;
    cudaStreamSynchronize(stream_);
    cudaStreamDestroy(stream_);
  }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  operator cudaStream_t() const { return stream_; }  // NOLINT(google-explicit-constructor): used as a handle

 private:
  cudaStream_t stream_ = nullptr;
};

// A CUDA event owned for its lifetime; `timing` false (the default) makes it a cheaper
// synchronisation-only event.
class Event {
 public:
  explicit Event(bool timing = false) {
    MDSIM_CUDA_CHECK(timing ? cudaEventCreate(&event_) : cudaEventCreateWithFlags(&event_, cudaEventDisableTiming));
  }
  ~Event() {
    if (event_ != nullptr) cudaEventDestroy(event_);
  }
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  operator cudaEvent_t() const { return event_; }  // NOLINT(google-explicit-constructor): used as a handle

 private:
  cudaEvent_t event_ = nullptr;
};

template <typename T>
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(std::size_t n) { resize(n); }
  ~DeviceBuffer() { release(); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  DeviceBuffer(DeviceBuffer&& o) noexcept : ptr_(std::exchange(o.ptr_, nullptr)), n_(std::exchange(o.n_, 0)) {}
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    if (this != &o) {
      release();
      ptr_ = std::exchange(o.ptr_, nullptr);
      n_ = std::exchange(o.n_, 0);
    }
    return *this;
  }

  // Reallocates (contents lost) when the size changes.
  void resize(std::size_t n) {
    if (n == n_) return;
    release();
    if (n > 0) MDSIM_CUDA_CHECK(cudaMalloc(reinterpret_cast<void**>(&ptr_), n * sizeof(T)));
    n_ = n;
  }

  void upload(const T* host, std::size_t n, cudaStream_t stream = nullptr) {
    if (n > n_) resize(n);
    if (n == 0) return;
    count_transfer();
    MDSIM_CUDA_CHECK(cudaMemcpyAsync(ptr_, host, n * sizeof(T), cudaMemcpyHostToDevice, stream));
    MDSIM_CUDA_CHECK(cudaStreamSynchronize(stream));
  }
  void upload(const std::vector<T>& host, cudaStream_t stream = nullptr) {
    resize(host.size());
    upload(host.data(), host.size(), stream);
  }
  std::vector<T> download(cudaStream_t stream = nullptr) const { return download_range(0, n_, stream); }
  // Elements [first, first + n) only (a replica batch's rows), without resizing.
  void upload_range(std::size_t first, const T* host, std::size_t n, cudaStream_t stream = nullptr) {
    check_range(first, n);
    if (n == 0) return;
    count_transfer();
    MDSIM_CUDA_CHECK(cudaMemcpyAsync(ptr_ + first, host, n * sizeof(T), cudaMemcpyHostToDevice, stream));
    MDSIM_CUDA_CHECK(cudaStreamSynchronize(stream));
  }
  std::vector<T> download_range(std::size_t first, std::size_t n, cudaStream_t stream = nullptr) const {
    check_range(first, n);
    std::vector<T> host(n);
    if (n == 0) return host;
    count_transfer();
    MDSIM_CUDA_CHECK(cudaMemcpyAsync(host.data(), ptr_ + first, n * sizeof(T), cudaMemcpyDeviceToHost, stream));
    MDSIM_CUDA_CHECK(cudaStreamSynchronize(stream));
    return host;
  }
  void zero(cudaStream_t stream = nullptr) {
    if (n_ > 0) MDSIM_CUDA_CHECK(cudaMemsetAsync(ptr_, 0, n_ * sizeof(T), stream));
  }

  T* data() { return ptr_; }
  const T* data() const { return ptr_; }
  std::size_t size() const { return n_; }
  std::size_t bytes() const { return n_ * sizeof(T); }

 private:
  void check_range(std::size_t first, std::size_t n) const {
    if (first + n > n_)
      throw RuntimeError("DeviceBuffer: elements " + std::to_string(first) + " .. " + std::to_string(first + n) +
                         " of " + std::to_string(n_));
  }
  void release() {
    if (ptr_) cudaFree(ptr_);
    ptr_ = nullptr;
    n_ = 0;
  }
  T* ptr_ = nullptr;
  std::size_t n_ = 0;
};

}  // namespace mdsim::cuda
