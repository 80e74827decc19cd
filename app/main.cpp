#include <cstdio>
#include "engine/platform.hpp"
int main() {
  auto p = mdsim::probe_cuda();
  std::printf("%zu devices: %s\n", p.devices.size(), p.reason.c_str());
}
