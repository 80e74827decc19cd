// Error types. InputError: the user's config or input files are wrong (exit code 2); the message
// is one line and starts with "file:line:column:" where a location is known. RuntimeError: the
// simulation failed while running (exit code 1).
#pragma once

#include <stdexcept>
#include <string>

namespace mdsim {

class InputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class RuntimeError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// "file:line:column: message" (line/column 1-based; 0 leaves them out).
std::string located(const std::string& file, int line, int column, const std::string& message);

// A number as messages quote it: shortest "%g" form ("0.002", "1e-06", "300").
std::string quoted_number(double value);

}  // namespace mdsim
