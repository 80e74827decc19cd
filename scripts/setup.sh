#!/usr/bin/env bash
# Installs the Debian 12 packages mdsim needs to build (and, with --tests, to run its tests; with --fuzz, to
# build the libFuzzer targets: clang and its runtime libraries, scripts/fuzz.sh).
# Idempotent: packages already present are skipped; nothing is installed when all are there.
# The CUDA toolkit is expected in /usr/local/cuda (nvcc, cudart, cuFFT); it is not a Debian package here.
set -euo pipefail

build_packages=(g++ cmake ninja-build pkg-config libeigen3-dev libhdf5-dev libyaml-cpp-dev libcli11-dev
                libfmt-dev libexpat1-dev zlib1g-dev gemmi-dev tao-pegtl-dev python3-dev pybind11-dev libdlpack-dev
                python3-numpy libopenmpi-dev openmpi-bin)
fuzz_packages=(clang libclang-rt-dev)
test_packages=(catch2 hdf5-tools python3-h5py python3-mdtraj python3-mdanalysis python3-matplotlib python3-simtk
               python3-pdbfixer gromacs-data python3-venv python3-pip python3-setuptools python3-wheel)
# gromacs-data: the force fields the GROMACS top tests #include; python3-venv, -pip, -setuptools, -wheel: `pip install .`
# into a venv (CTest python_pip_install; setuptools 66 builds wheels with the wheel package's bdist_wheel)

want=("${build_packages[@]}")
for arg in "$@"; do
  case "$arg" in
    --tests) want+=("${test_packages[@]}") ;;
    --fuzz) want+=("${fuzz_packages[@]}") ;;
    -h|--help) echo "usage: $0 [--tests] [--fuzz]"; exit 0 ;;
    *) echo "setup.sh: unknown argument '$arg' (expected --tests or --fuzz)" >&2; exit 2 ;;
  esac
done

missing=()
for p in "${want[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
else
  echo "setup: all ${#want[@]} packages present"
fi

if [ ! -x /usr/local/cuda/bin/nvcc ] && ! command -v nvcc >/dev/null 2>&1; then
  echo "setup: no CUDA toolkit found (expected /usr/local/cuda/bin/nvcc); install the CUDA toolkit first" >&2
  exit 1
fi
