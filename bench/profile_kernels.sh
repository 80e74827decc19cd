#!/usr/bin/env bash
# Nsight Compute summary of the CUDA platform's main kernels on DHFR (device machine; needs a build in
# build-device from bench/device_check.sh). Writes $OUT/ncu.txt.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/device_out}
mkdir -p "$OUT"
cfg=/tmp/profile_dhfr.yaml
sed "s|pdb: ../tests|pdb: $PWD/tests|; s/^platform:.*/platform: {name: cuda, precision: mixed}/" configs/dhfr_benchmark.yaml > $cfg
ncu --clock-control none --kernel-name regex:"tile_build|nonbonded_tile|block_bounds|spread|gather" --launch-skip 40 \
  --launch-count 6 --section SpeedOfLight --section LaunchStats --section Occupancy --section WarpStateStats \
  build-device/mdsim bench $cfg > "$OUT/ncu.txt" 2>&1
grep -E "^  [a-z_]+.*\(|Duration|Compute \(SM\) Throughput|Memory Throughput|Achieved Occupancy|Registers Per|Grid Size|Block Size|Stall|Warp Cycles Per Issued" "$OUT/ncu.txt" | head -120
