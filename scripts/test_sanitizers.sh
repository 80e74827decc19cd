#!/usr/bin/env bash
# The CPU test suite (CTest label `cpu`) built with AddressSanitizer and UndefinedBehaviorSanitizer
# (host code; g++) into ./build-asan. Run by CI after scripts/test.sh. Any report fails the test
# that triggered it (UBSan halts on the first error; ASan checks leaks at exit).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh --tests
flags="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined"
# The Python module is left out: an ASan-instrumented extension cannot load into an uninstrumented python3.
# Without MPI: Open MPI's own allocations, which it never frees, fail LeakSanitizer in every mpirun'd process (the
# ensembles' MPI path is tested in the normal build, CTest replicas_mpi; their one-process path runs here too).
cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DMDSIM_WERROR=ON -DMDSIM_BUILD_PYTHON=OFF -DMDSIM_MPI=OFF \
  -DCMAKE_CXX_FLAGS="$flags" -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined" >/dev/null
cmake --build build-asan -j "$(nproc)"
export ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
ctest --test-dir build-asan -L cpu --output-on-failure -j "$(nproc)" "$@"
