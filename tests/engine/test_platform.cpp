#include "engine/platform.hpp"
#include "support/catch.hpp"
TEST_CASE("probe_devices never throws") { REQUIRE_NOTHROW(mdsim::probe_devices()); }
