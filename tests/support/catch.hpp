// One include for Catch2 v2 (single header, Debian 12) and v3 (split headers, the GPU machine).
// Write Catch::Approx in tests: it names the same class in both versions.
#pragma once
#if __has_include(<catch2/catch_all.hpp>)
#include <catch2/catch_all.hpp>
#define MDSIM_CATCH3 1
#else
#include <catch2/catch.hpp>
namespace Catch {
using Detail::Approx;
}
#endif
