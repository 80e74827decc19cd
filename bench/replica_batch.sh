#!/usr/bin/env bash
# Issue 38 on the GPU machine: replica ensembles of a small system as one batch (replicas.batch, the default on CUDA)
# against the same ensemble run one replica at a time (batch: false) and against one plain run, all with OpenMM's
# benchmark settings (amber99sb/TIP3P, PME 0.9 nm, HBonds, H 1.5 amu, LangevinMiddle 4 fs). Each replica writes a
# state line every 1 ps and a frame every 10 ps; the ladder exchanges every 1 ps.
#   SYSTEM=ala2_water COUNTS="8 32" TIME_PS=50 [BATCH_MODES="true false"] bench/replica_batch.sh
# Needs build-device/mdsim. Summaries go to stdout, logs to $OUT/batch_*.txt.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/device_out}
mkdir -p "$OUT"
MDSIM=$PWD/build-device/mdsim
system=${SYSTEM:-ala2_water}
time_ps=${TIME_PS:-50}
steps=$(python3 -c "print(int(round($time_ps / 0.004)))")
base=$OUT/.bench_$system.yaml
sed -e "s|pdb: ../tests/data/shared/systems/dhfr.pdb|pdb: $PWD/tests/data/shared/systems/$system.pdb|" \
    -e "s|^run: .*|run: {steps: $steps}|" -e '/^output:/,$d' configs/dhfr_benchmark.yaml > "$base"
output() {  # directory
  printf 'output: {directory: %s, trajectory: {interval: 2500}, state: {interval: 250}, checkpoint: null, final_pdb: null, progress: false}\n' "$1"
}
summary() { grep -E "^(ran|stopped)|notice" "$1" | head -3; }
{ cat "$base"; output "$OUT/plain_$system"; } > "$OUT/plain.yaml"
echo "## $system: one plain run, $time_ps ps"
/usr/bin/time -f "wall %e s" $MDSIM run "$OUT/plain.yaml" > "$OUT/batch_plain.txt" 2>&1; echo "rc=$?"
grep -E "^ran|wall" "$OUT/batch_plain.txt"
for count in ${COUNTS:-8 32}; do
  for batch in ${BATCH_MODES:-true false}; do
    cfg=$OUT/ladder_${count}_$batch.yaml
    { sed 's/integrator: {type: langevin_middle, temperature: 300 K,/integrator: {type: langevin_middle,/' "$base"
      echo "replicas: {exchange: temperature, temperatures: {min: 300 K, max: 400 K, count: $count}, exchange_interval: 1 ps, batch: $batch}"
      output "$OUT/ladder_${system}_${count}_$batch"; } > "$cfg"
    echo "## $system: $count-replica ladder 300-400 K, $time_ps ps each, one process, batch: $batch"
    /usr/bin/time -f "wall %e s" $MDSIM run "$cfg" > "$OUT/batch_${count}_$batch.txt" 2>&1; echo "rc=$?"
    summary "$OUT/batch_${count}_$batch.txt"; grep wall "$OUT/batch_${count}_$batch.txt"
  done
done
