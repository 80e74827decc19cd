// A diagnostic timeline of the CUDA step (`mdsim bench --timeline`, docs/PERFORMANCE.md): named points
// on the streams, recorded as CUDA events (external event nodes inside the captured graphs), read
// after a step has completed. Off unless enabled; enable it before a context captures its graphs.
// Host-only header.
#pragma once

#include <string>
#include <vector>

namespace mdsim::cuda {

struct TimelinePoint {
  std::string label;  // "stream: what has finished"
  double us = 0.0;    // after the step's first point ("step")
};

void enable_step_timeline();
bool step_timeline_enabled();
// Records the point `label` (a string literal) on `stream` (a cudaStream_t); nothing unless enabled.
void timeline_mark(void* stream, const char* label);
// Waits for the device, then the points recorded in the last step, in order of time.
std::vector<TimelinePoint> read_step_timeline();

}  // namespace mdsim::cuda
