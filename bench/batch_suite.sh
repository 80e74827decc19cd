#!/usr/bin/env bash
# Issues 38 and 39's `mdsim bench` set on the GPU machine: small systems with OpenMM's benchmark settings
# (configs/dhfr_benchmark.yaml with each system's PDB: amber99sb/TIP3P, PME 0.9 nm, HBonds, H 1.5 amu, LangevinMiddle
# 4 fs; mixed precision, reporters off), each alone and as a batch of replicas stepped together (`--replicas K`).
# ROUNDS times (default 2), the cases in turn, so that machine drift hits all alike. Prints each run's µs/step and
# ns/day (summed over the replicas), then a table of the medians with each batch's gain over its system alone.
#   [ROUNDS=2] [CASES="system:replicas:steps ..."] bench/batch_suite.sh   (expects build-device/mdsim, or MDSIM=...)
set -uo pipefail
cd "$(dirname "$0")/.."
MDSIM=${MDSIM:-build-device/mdsim}
OUT=${OUT:-$PWD/device_out}
mkdir -p "$OUT"
cases=${CASES:-"ala2_water:1:10000 ala2_water:32:3000 ala2_water:128:800 villin_water:1:8000 villin_water:16:1500
dhfr:1:6000 dhfr:8:800"}
runs=$OUT/batch_suite_runs.txt
: > "$runs"
for round in $(seq "${ROUNDS:-2}"); do
  for c in $cases; do
    IFS=: read -r system replicas steps <<< "$c"
    config=/tmp/batch_suite_$system.yaml
    sed "s|pdb: ../tests/data/shared/systems/dhfr.pdb|pdb: $PWD/tests/data/shared/systems/$system.pdb|" \
      configs/dhfr_benchmark.yaml > "$config"
    # The steps row of `mdsim bench`: | atoms | integrator | dt | constraints | steps | µs/step | ns/day | ...
    row=$("$MDSIM" bench "$config" --replicas "$replicas" --steps "$steps" 2>&1 | tee "$OUT/batch_suite_last.txt" |
          grep -E "^\| [0-9]+ \| [a-z]" | tail -1 | awk -F'|' '{print $7, $8}')
    if [ -z "$row" ]; then
      echo "round $round, $system x $replicas: no result (see $OUT/batch_suite_last.txt)"; tail -5 "$OUT/batch_suite_last.txt"
      continue
    fi
    echo "round $round, $system x $replicas: $row" | tee -a "$runs"
  done
done
python3 - "$runs" <<'EOF'
import re, statistics, sys
runs = {}
for line in open(sys.argv[1]):
    m = re.match(r"round \d+, (\S+) x (\d+): +([\d.]+) +(\d+)", line)
    if m:
        runs.setdefault((m[1], int(m[2])), []).append((float(m[3]), int(m[4])))
print("| system | replicas | µs/step (rounds) | median µs/step | ns/day in total | × the system alone |")
print("| --- | --- | --- | --- | --- | --- |")
for (system, replicas), results in runs.items():
    us = [u for u, _ in results]
    ns_day = statistics.median(n for _, n in results)
    alone = runs.get((system, 1))
    gain = "1" if replicas == 1 else f"{ns_day / statistics.median(n for _, n in alone):.2f}" if alone else "—"
    print(f"| {system} | {replicas} | {' / '.join(f'{u:.1f}' for u in us)} | {statistics.median(us):.1f} "
          f"| {ns_day:,.0f} | {gain} |")
EOF
