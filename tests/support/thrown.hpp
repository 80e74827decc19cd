// The message of what a callable throws, for tests that check an error's text.
#pragma once

#include <exception>
#include <string>

#include "common/errors.hpp"

namespace mdsim_test {

// e.what() of the std::exception `f` throws; "(no exception)" when it throws nothing.
template <typename F>
std::string message_of(F&& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "(no exception)";
}

// e.what() of the InputError `f` throws; "(no InputError)" when it throws none (other exceptions pass through).
template <typename F>
std::string input_error_of(F&& f) {
  try {
    f();
  } catch (const mdsim::InputError& e) {
    return e.what();
  }
  return "(no InputError)";
}

}  // namespace mdsim_test
