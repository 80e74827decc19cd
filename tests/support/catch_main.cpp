// Test runner shared by all test executables, built twice: CUDA test executables (MDSIM_TEST_REQUIRES_CUDA)
// report "skipped" to CTest (exit code 77) when no usable GPU is present, instead of failing. Catch2 itself
// is compiled once, in support/catch_session.cpp.
#include <cstdio>

#include "engine/platform.hpp"
#include "support/catch_session.hpp"

int main(int argc, char* argv[]) {
#ifdef MDSIM_TEST_REQUIRES_CUDA
  const mdsim::CudaProbe probe = mdsim::probe_devices();
  if (probe.devices.empty()) {
    std::printf("SKIPPED: no usable CUDA device (%s)\n", probe.reason.c_str());
    return 77;
  }
#endif
  return mdsim_test::run_catch_session(argc, argv);
}
