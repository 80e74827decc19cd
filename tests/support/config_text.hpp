// Configs parsed from text for the io/config tests: read as "test.yaml" in /base, the structure file not looked
// for.
#pragma once

#include <string>

#include "common/errors.hpp"
#include "io/config.hpp"

namespace mdsim_test {

inline mdsim::RunConfig parse(const std::string& text) {
  return mdsim::parse_config(text, "test.yaml", "/base", false);
}

// The InputError message parse() throws for `text` ("" if none).
inline std::string error_of(const std::string& text) {
  try {
    parse(text);
  } catch (const mdsim::InputError& e) {
    return e.what();
  }
  return "";
}

}  // namespace mdsim_test
