// Test runner shared by all test executables. CUDA test executables report "skipped" to CTest
// (exit code 77) when no usable GPU is present, instead of failing.
#if !__has_include(<catch2/catch_all.hpp>)
#define CATCH_CONFIG_RUNNER
#endif
#include "catch.hpp"

#include <cstdio>

#include "engine/platform.hpp"

int main(int argc, char* argv[]) {
#ifdef MDSIM_TEST_REQUIRES_CUDA
  const mdsim::CudaProbe probe = mdsim::probe_cuda();
  if (probe.devices.empty()) {
    std::printf("SKIPPED: no usable CUDA device (%s)\n", probe.reason.c_str());
    return 77;
  }
#endif
  return Catch::Session().run(argc, argv);
}
