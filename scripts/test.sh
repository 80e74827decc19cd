#!/usr/bin/env bash
# Quick start, step 2: install what is missing (test packages too), build with warnings as errors, and run
# the whole test suite through CTest. GPU tests (label `cuda`) report "skipped" on machines without a GPU.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh --tests
scripts/build.sh -DMDSIM_WERROR=ON -DMDSIM_BUILD_TESTS=ON
ctest --test-dir build --output-on-failure -j "$(nproc)" "$@"
