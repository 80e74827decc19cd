#!/usr/bin/env bash
# Issue 38 on the GPU machine: replica ensembles of a small system as one batch (replicas.batch, the default on CUDA)
# against the same ensemble run one replica at a time (batch: false) and against one plain run, all with OpenMM's
# benchmark settings (amber99sb/TIP3P, PME 0.9 nm, HBonds, H 1.5 amu, LangevinMiddle 4 fs). Each replica writes a
# state line every 1 ps and a frame every 10 ps; the ladder exchanges every 1 ps.
#   SYSTEM=ala2_water COUNTS="8 32" TIME_PS=50 [BATCH_MODES="true false"] bench/replica_batch.sh
# What the runner adds to the steps: TRAJECTORY_EVERY and STATE_EVERY (steps; 0: none; default 2500 and 250) and
# EXCHANGE=none (independent copies instead of the ladder), EXCHANGE_PS (the ladder's exchange interval, default 1) and
# TMAX (its highest temperature, default 400 K).
# Needs build-device/mdsim (or MDSIM=another build's). Summaries go to stdout, logs to $OUT/batch_*.txt.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/device_out}
mkdir -p "$OUT"
MDSIM=${MDSIM:-$PWD/build-device/mdsim}  # another build's for an A/B
system=${SYSTEM:-ala2_water}
time_ps=${TIME_PS:-50}
steps=$(python3 -c "print(int(round($time_ps / 0.004)))")
base=$OUT/.bench_$system.yaml
sed -e "s|pdb: ../tests/data/shared/systems/dhfr.pdb|pdb: $PWD/tests/data/shared/systems/$system.pdb|" \
    -e "s|^run: .*|run: {steps: $steps}|" -e '/^output:/,$d' configs/dhfr_benchmark.yaml > "$base"
every() { [ "$1" = 0 ] && echo null || echo "{interval: $1}"; }
output() {  # directory
  printf 'output: {directory: %s, trajectory: %s, state: %s, checkpoint: null, final_pdb: null, progress: false}\n' \
    "$1" "$(every "${TRAJECTORY_EVERY:-2500}")" "$(every "${STATE_EVERY:-250}")"
}
replicas() {  # count batch
  if [ "${EXCHANGE:-temperature}" = none ]; then
    echo "replicas: {exchange: none, count: $1, batch: $2}"
  else
    echo "replicas: {exchange: temperature, temperatures: {min: 300 K, max: ${TMAX:-400} K, count: $1}, exchange_interval: ${EXCHANGE_PS:-1} ps, batch: $2}"
  fi
}
summary() { grep -E "^(ran|stopped)|notice" "$1" | head -3; }
{ cat "$base"; output "$OUT/plain_$system"; } > "$OUT/plain.yaml"
echo "## $system: one plain run, $time_ps ps"
/usr/bin/time -f "wall %e s" $MDSIM run "$OUT/plain.yaml" > "$OUT/batch_plain.txt" 2>&1; echo "rc=$?"
grep -E "^ran|wall" "$OUT/batch_plain.txt"
for count in ${COUNTS:-8 32}; do
  for batch in ${BATCH_MODES:-true false}; do
    cfg=$OUT/ladder_${count}_$batch.yaml
    { if [ "${EXCHANGE:-temperature}" = none ]; then cat "$base"
      else sed 's/integrator: {type: langevin_middle, temperature: 300 K,/integrator: {type: langevin_middle,/' "$base"; fi
      replicas "$count" "$batch"
      output "$OUT/ladder_${system}_${count}_$batch"; } > "$cfg"
    echo "## $system: $count replicas (exchange ${EXCHANGE:-temperature}, every ${EXCHANGE_PS:-1} ps, 300-${TMAX:-400} K), $time_ps ps each, one process, batch: $batch, frames every ${TRAJECTORY_EVERY:-2500} steps, state lines every ${STATE_EVERY:-250}"
    /usr/bin/time -f "wall %e s" $MDSIM run "$cfg" > "$OUT/batch_${count}_$batch.txt" 2>&1; echo "rc=$?"
    summary "$OUT/batch_${count}_$batch.txt"; grep wall "$OUT/batch_${count}_$batch.txt"
  done
done
