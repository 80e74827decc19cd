// The message of what a callable throws, for tests that check an error's text.
#pragma once

#include <exception>
#include <string>

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

}  // namespace mdsim_test
