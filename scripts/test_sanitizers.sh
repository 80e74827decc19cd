#!/usr/bin/env bash
# The CPU test suite (CTest label `cpu`) built with AddressSanitizer and UndefinedBehaviorSanitizer
# (host code; g++) into ./build-asan. Run by CI after scripts/test.sh. Any report fails the test
# that triggered it (UBSan halts on the first error; ASan checks leaks at exit).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh --tests
flags="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined"
# The Python module is left out: an ASan-instrumented extension cannot load into an uninstrumented python3.
# The CUDA- and validation-labelled test executables are not built (only the label `cpu` runs here).
# Cases tagged [large] are skipped (MDSIM_TEST_ARGS): the same code on structures of tens of thousands of atoms, which
# the normal build runs.
# Without MPI: Open MPI's own allocations, which it never frees, fail LeakSanitizer in every mpirun'd process (the
# ensembles' MPI path is tested in the normal build, CTest replicas_mpi; their one-process path runs here too).
# -O1 with line tables (-g1): what ASan's documentation advises, file:line in every report, and half the compile
# time of -O2 -g (test_forcefield.cpp: 26 s against 49 s), the larger part of this script's time.
# The CUDA sources (not instrumented; no GPU runs them here) are compiled as in a quick build: PTX only, no host
# debug information (about 40% less of their compile time).
cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG" \
  -DCMAKE_CUDA_ARCHITECTURES=90-virtual -DCMAKE_CUDA_FLAGS_RELWITHDEBINFO="-O1 -DNDEBUG" \
  -DMDSIM_WERROR=ON -DMDSIM_BUILD_PYTHON=OFF -DMDSIM_MPI=OFF -DMDSIM_CUDA_TESTS=OFF -DMDSIM_VALIDATION_TESTS=OFF \
  "-DMDSIM_TEST_ARGS=~[large]" \
  -DCMAKE_CXX_FLAGS="$flags" -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined" >/dev/null
cmake --build build-asan -j "$(nproc)"
export ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
ctest --test-dir build-asan -L cpu --output-on-failure -j "$(nproc)" "$@"
