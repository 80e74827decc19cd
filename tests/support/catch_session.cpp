// Catch2's runner, compiled once for all test executables (Catch2 v2's single header builds its whole
// implementation here; v3 has it in its library). support/catch_main.cpp calls it.
#if !__has_include(<catch2/catch_all.hpp>)
#define CATCH_CONFIG_RUNNER
#endif
#include "catch.hpp"

#include "support/catch_session.hpp"

namespace mdsim_test {

int run_catch_session(int argc, char* argv[]) { return Catch::Session().run(argc, argv); }

}  // namespace mdsim_test
