#!/usr/bin/env bash
# Quick start, step 1: install what is missing, build, and run the bundled example
# (alanine dipeptide in TIP3P water, examples/ala2_water/config.yaml).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
# Only what the example needs: the program (and the Python package), not the tests, whose packages
# (Catch2, ...) only `scripts/setup.sh --tests` installs.
scripts/build.sh -DMDSIM_BUILD_TESTS=OFF
exec build/mdsim run examples/ala2_water/config.yaml
