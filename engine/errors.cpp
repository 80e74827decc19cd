#include "engine/errors.hpp"

#include <fmt/format.h>

namespace mdsim {

std::string located(const std::string& file, int line, int column, const std::string& message) {
  if (line > 0 && column > 0) return fmt::format("{}:{}:{}: {}", file, line, column, message);
  if (line > 0) return fmt::format("{}:{}: {}", file, line, message);
  if (!file.empty()) return fmt::format("{}: {}", file, message);
  return message;
}

}  // namespace mdsim
