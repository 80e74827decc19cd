#include "engine/platform.hpp"
#include "support/catch.hpp"
TEST_CASE("probe_cuda never throws") { REQUIRE_NOTHROW(mdsim::probe_cuda()); }
