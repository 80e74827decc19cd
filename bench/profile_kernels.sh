#!/usr/bin/env bash
# Nsight Compute detail (--set full) of single launches of the CUDA platform's main kernels on DHFR
# with OpenMM's benchmark settings (PROFILE_REPLICATE=r: its r x r x r replica), through `mdsim bench`. Needs build-device/mdsim
# (bench/device_check.sh builds it). Writes $OUT/ncu_<kernel>.txt and prints the headline metrics.
#   NCU_KERNELS="name:skip ..." picks the kernels and how many launches of each to skip first; the
#   default skips the warm-up, and tile_build_kernel's skip lands in the benchmark's forced rebuilds.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/device_out}
mkdir -p "$OUT"
cfg=/tmp/profile_dhfr.yaml
sed "s|pdb: ../tests|pdb: $PWD/tests|" \
  configs/dhfr_benchmark.yaml > $cfg
r=${PROFILE_REPLICATE:-1}
[ "$r" = 1 ] || sed -i "s|  hydrogen_mass: 1.5 amu|  hydrogen_mass: 1.5 amu\n  replicate: [$r, $r, $r]|" $cfg
for k in ${NCU_KERNELS:-nonbonded_tile_kernel:30 tile_build_kernel:430 spread_tiled_kernel:30 gather_kernel:30}; do
  name=${k%%:*}; skip=${k##*:}
  ncu --clock-control none --kernel-name regex:$name --launch-skip $skip --launch-count 1 --set full \
    build-device/mdsim bench $cfg > "$OUT/ncu_$name.txt" 2>&1
  echo "=== $name"
  grep -E "Duration|Registers Per|Achieved Occupancy|Theoretical Occupancy|Issue Slots Busy|Issued Instructions  |Warp Cycles Per Issued|Compute \(SM\) Throughput|Memory Throughput" \
    "$OUT/ncu_$name.txt" | head -20
done
