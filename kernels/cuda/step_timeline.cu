// See step_timeline.hpp.
#include "kernels/cuda/step_timeline.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <cstring>
#include <utility>

#include "kernels/cuda/cuda_check.hpp"

namespace mdsim::cuda {

namespace {

struct Registry {
  bool enabled = false;
  std::vector<std::pair<const char*, cudaEvent_t>> points;  // label (literal), its event
};

Registry& registry() {
  static Registry r;
  return r;
}

cudaEvent_t event_of(const char* label) {
  Registry& r = registry();
  for (const auto& [name, event] : r.points)
    if (std::strcmp(name, label) == 0) return event;
  cudaEvent_t event = nullptr;
  MDSIM_CUDA_CHECK(cudaEventCreate(&event));
  r.points.emplace_back(label, event);
  return event;
}

}  // namespace

void enable_step_timeline() { registry().enabled = true; }
bool step_timeline_enabled() { return registry().enabled; }

void timeline_mark(void* stream, const char* label) {
  if (!registry().enabled) return;
  // Inside a stream capture an external record becomes an event node of the graph, which records the
  // time at every replay; outside one (the flag is refused there) a plain record.
  const cudaStream_t s = static_cast<cudaStream_t>(stream);
  cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
  MDSIM_CUDA_CHECK(cudaStreamIsCapturing(s, &capture));
  MDSIM_CUDA_CHECK(cudaEventRecordWithFlags(event_of(label), s,
                                            capture == cudaStreamCaptureStatusActive ? cudaEventRecordExternal
                                                                                     : cudaEventRecordDefault));
}

std::vector<TimelinePoint> read_step_timeline() {
  std::vector<TimelinePoint> out;
  if (!registry().enabled) return out;
  MDSIM_CUDA_CHECK(cudaDeviceSynchronize());
  const cudaEvent_t start = event_of("step");
  for (const auto& [name, event] : registry().points) {
    float ms = 0.0f;
    if (cudaEventElapsedTime(&ms, start, event) != cudaSuccess) {
      (void)cudaGetLastError();  // a point this step did not record
      continue;
    }
    out.push_back({name, 1e3 * ms});
  }
  std::stable_sort(out.begin(), out.end(), [](const TimelinePoint& a, const TimelinePoint& b) { return a.us < b.us; });
  return out;
}

}  // namespace mdsim::cuda
