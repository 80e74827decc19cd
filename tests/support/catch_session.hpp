// The Catch2 session behind every test executable's main (support/catch_session.cpp).
#pragma once

namespace mdsim_test {

// Runs the tests the command line selects; returns Catch2's exit code.
int run_catch_session(int argc, char* argv[]);

}  // namespace mdsim_test
