#!/usr/bin/env bash
# Configures and builds mdsim into ./build (Release, Ninja). Extra arguments go to CMake's configure step,
# e.g. scripts/build.sh -DCMAKE_CUDA_ARCHITECTURES=80 -DMDSIM_WERROR=ON
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release "$@" >/dev/null
cmake --build build -j "$(nproc)"
