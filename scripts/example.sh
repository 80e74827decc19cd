#!/usr/bin/env bash
# Quick start, step 1: install what is missing, build, and run the bundled example
# (alanine dipeptide in TIP3P water, examples/ala2_water/config.yaml).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh
exec build/mdsim run examples/ala2_water/config.yaml
