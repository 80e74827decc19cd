// Host memory for buffers that a platform fills directly (FrameWriter's frame buffers). Default
// allocation is operator new; the CUDA platform gives pinned memory so that its device-to-host
// copies run asynchronously on their own stream. C++17 (included by CUDA sources through
// platform/context.hpp).
#pragma once

#include <cstddef>

namespace mdsim {

// Must be thread-safe to free from any thread.
class HostBufferAllocator {
 public:
  virtual ~HostBufferAllocator() = default;
  virtual void* allocate(std::size_t bytes) = 0;
  virtual void deallocate(void* pointer, std::size_t bytes) = 0;
};

}  // namespace mdsim
