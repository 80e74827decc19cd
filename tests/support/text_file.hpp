// Text helpers for the tests: a whole file as a string, substring search (one helper each instead of a
// copy per test file).
#pragma once

#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>

namespace mdsim_test {

// The file's bytes; throws std::runtime_error naming the path when it cannot be opened.
inline std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

// Whether `needle` occurs in `hay`.
inline bool contains(const std::string& hay, const std::string& needle) { return hay.find(needle) != std::string::npos; }

}  // namespace mdsim_test
