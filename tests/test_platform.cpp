#include "support/catch.hpp"
#include "engine/platform.hpp"
TEST_CASE("probe_cuda never throws") { REQUIRE_NOTHROW(mdsim::probe_cuda()); }
