#!/usr/bin/env bash
# GPU time of every kernel of full steps (Nsight Compute, kernels serialised, so the figures add up to
# more than a step takes with streams overlapping): DHFR with OpenMM's benchmark settings, and its 2x2x2
# replica. Needs build-device/mdsim (bench/device_check.sh builds it). Writes $OUT/steps_R.csv and
# prints a per-step table for each, with each kernel's registers, occupancy, issue-slot use and DRAM and
# L2 traffic (bench/kernel_table.py). LAUNCHES (default 1000) kernel launches are profiled, about 40 steps.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/device_out}
mkdir -p "$OUT"
for r in ${PROFILE_REPLICAS:-1 2}; do
  cfg=/tmp/profile_steps_$r.yaml
  sed "s|pdb: ../tests|pdb: $PWD/tests|; s|  hydrogen_mass: 1.5 amu|  hydrogen_mass: 1.5 amu\n  replicate: [$r, $r, $r]|" configs/dhfr_benchmark.yaml > $cfg
  # Skip the force-evaluation benchmark and the step warm-up; profile about 80 steps.
  ncu --clock-control none --csv --page raw --launch-skip 26000 --launch-count ${LAUNCHES:-1000} \
    --metrics gpu__time_duration.sum,launch__registers_per_thread,sm__maximum_warps_per_active_cycle_pct,sm__warps_active.avg.pct_of_peak_sustained_active,sm__inst_issued.avg.pct_of_peak_sustained_active,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_bytes.sum \
    build-device/mdsim bench $cfg --steps 3000 > "$OUT/steps_$r.csv" 2> "$OUT/steps_$r.err"
  echo "## replicate $r"
  python3 bench/kernel_table.py "$OUT/steps_$r.csv"
done
