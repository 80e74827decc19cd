#include "common/errors.hpp"

#include <cstdio>

#include <fmt/format.h>

namespace mdsim {

std::string located(const std::string& file, int line, int column, const std::string& message) {
  if (line > 0 && column > 0) return fmt::format("{}:{}:{}: {}", file, line, column, message);
  if (line > 0) return fmt::format("{}:{}: {}", file, line, message);
  if (!file.empty()) return fmt::format("{}: {}", file, message);
  return message;
}

std::string quoted_number(double value) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%g", value);
  return buf;
}

}  // namespace mdsim
