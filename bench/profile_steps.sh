#!/usr/bin/env bash
# GPU time of every kernel of full steps (Nsight Compute, kernels serialised, so the figures add up to
# more than a step takes with streams overlapping): DHFR with OpenMM's benchmark settings, and its 2x2x2
# replica. Needs build-device/mdsim (bench/device_check.sh builds it). Writes $OUT/steps_R.csv and
# prints a per-step table for each.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/device_out}
mkdir -p "$OUT"
for r in ${PROFILE_REPLICAS:-1 2}; do
  cfg=/tmp/profile_steps_$r.yaml
  sed "s|pdb: ../tests|pdb: $PWD/tests|; s|  hydrogen_mass: 1.5 amu|  hydrogen_mass: 1.5 amu\n  replicate: [$r, $r, $r]|" configs/dhfr_benchmark.yaml > $cfg
  # Skip the force-evaluation benchmark and the step warm-up; profile about 80 steps.
  ncu --clock-control none --metrics gpu__time_duration.sum --csv --page raw --launch-skip 26000 \
    --launch-count 2000 build-device/mdsim bench $cfg --steps 3000 > "$OUT/steps_$r.csv" 2> "$OUT/steps_$r.err"
  echo "## replicate $r"
  python3 bench/kernel_table.py "$OUT/steps_$r.csv"
done
