#!/usr/bin/env bash
# The benchmark set of docs/PERFORMANCE.md, for the device machine: `mdsim bench` (reporters off, mixed
# precision) on DHFR with OpenMM's benchmark settings (configs/dhfr_benchmark.yaml: amber99sb/TIP3P, PME
# 0.9 nm, HBonds, H 1.5 amu, LangevinMiddle 4 fs) as it is and replicated 2x2x2, 3x3x3 and 4x4x4, and DHFR
# with amber14 at 2 fs (configs/dhfr_amber14.yaml). Each ROUNDS times (default 3), the configs in turn, so
# that machine drift hits all alike; the median µs/step of each goes to $OUT/performance_<gpu>.csv
# (with the context's device memory). bench/performance_report.py turns one or more of those files into
# the table and plot of docs/PERFORMANCE.md.
#   [ROUNDS=3] [SIZES="1 2 3 4"] bench/performance_suite.sh      (expects build-device/mdsim)
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/device_out}
MDSIM=${MDSIM:-build-device/mdsim}
mkdir -p "$OUT"
rounds=${ROUNDS:-3}
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
tag=$(echo "$gpu" | tr -c 'A-Za-z0-9\n' '_' | sed 's/_*$//')
declare -A steps=([1]=10000 [2]=2000 [3]=1000 [4]=500)
names=()
for r in ${SIZES:-1 2 3 4}; do
  sed "s|pdb: ../tests|pdb: $PWD/tests|; s|  hydrogen_mass: 1.5 amu|  hydrogen_mass: 1.5 amu\n  replicate: [$r, $r, $r]|" \
    configs/dhfr_benchmark.yaml > /tmp/suite_dhfr_$r.yaml
  names+=("dhfr_$r")
done
sed "s|pdb: ../tests|pdb: $PWD/tests|" configs/dhfr_amber14.yaml > /tmp/suite_amber14.yaml
names+=(amber14)
: > /tmp/suite_runs.txt
for round in $(seq "$rounds"); do
  for name in "${names[@]}"; do
    n=${steps[${name#dhfr_}]:-10000}
    # The step table's row: | atoms | integrator | timestep | constraints | timed steps | µs/step | ns/day |
    #   launches | list builds | context device MiB | bytes/atom |
    row=$("$MDSIM" bench /tmp/suite_$name.yaml --steps "$n" 2>&1 | grep -E "^\| [0-9]+ \| [a-z]" | head -1)
    echo "$row" | awk -F'|' -v name="$name" '{gsub(/ /,""); print name, $2, $7, $11, $12}' | tee -a /tmp/suite_runs.txt
  done
done
csv="$OUT/performance_$tag.csv"
echo "gpu,system,atoms,timestep_fs,us_per_step,ns_per_day,context_mib,bytes_per_atom,runs" > "$csv"
for name in "${names[@]}"; do
  med=$(awk -v n="$name" '$1 == n {print $3}' /tmp/suite_runs.txt | sort -g |
        awk '{a[NR] = $1} END {print (NR % 2) ? a[(NR + 1) / 2] : 0.5 * (a[NR / 2] + a[NR / 2 + 1])}')
  awk -v name="$name" -v gpu="$gpu" -v med="$med" '$1 == name {atoms = $2; mib = $4; bpa = $5; n++}
    END {
      dt = (name == "amber14") ? 2 : 4;
      printf "%s,%s,%d,%d,%.1f,%.1f,%.1f,%.0f,%d\n", gpu, name, atoms, dt, med, dt * 86.4 / med * 1000, mib, bpa, n
    }' /tmp/suite_runs.txt >> "$csv"
done
cat "$csv"
