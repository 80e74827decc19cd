#include "common/stop_request.hpp"

namespace mdsim {

std::atomic<bool>& stop_requested() {
  static std::atomic<bool> flag{false};
  return flag;
}

}  // namespace mdsim
