#!/usr/bin/env bash
# compute-sanitizer (memcheck, racecheck, synccheck) on a medium system: DHFR (23,558 atoms) with
# OpenMM's benchmark settings, through `mdsim bench` (force evaluations with and without energies,
# forced rebuilds, then LangevinMiddle steps with SETTLE + CCMA), and a short `mdsim run` of
# ala2_water with a barostat, trajectory frames (velocities, forces) and a checkpoint. Needs
# build-device/mdsim (bench/device_check.sh). Logs to $OUT.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/device_out}
mkdir -p "$OUT"
sed "s|pdb: ../tests|pdb: $PWD/tests|" configs/dhfr_benchmark.yaml > /tmp/san_dhfr.yaml
cat > /tmp/san_run.yaml <<YAML
system: {pdb: $PWD/examples/ala2_water/ala2_water.pdb, constraints: hbonds, rigid_water: true}
platform: {name: cuda, precision: mixed}
integrator: {type: langevin_middle, temperature: 300 K, friction: 1/ps, timestep: 2 fs, seed: 3}
barostat: {pressure: 1 bar, interval: 10}
run: {steps: 60}
output: {directory: /tmp/san_out, trajectory: {interval: 20, velocities: true, forces: true}, state: {interval: 20}, checkpoint: {interval: 30}, progress: false}
YAML
for tool in memcheck racecheck synccheck; do
  # racecheck's shadow memory for the whole benchmark exceeds the machine's 128 GiB (OOM-killed):
  # under racecheck DHFR gets one evaluation with energies (sort, list build, masks, tiles, PME).
  if [ $tool = racecheck ]; then what="energy /tmp/san_dhfr.yaml"; else what="bench /tmp/san_dhfr.yaml --steps 40"; fi
  compute-sanitizer --tool $tool --error-exitcode 9 build-device/mdsim $what > "$OUT/san_dhfr_$tool.log" 2>&1
  echo "DHFR $what, $tool: rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$OUT/san_dhfr_$tool.log" | tail -1)"
  rm -rf /tmp/san_out
  compute-sanitizer --tool $tool --error-exitcode 9 build-device/mdsim run /tmp/san_run.yaml > "$OUT/san_run_$tool.log" 2>&1
  echo "ala2_water run (barostat, frames, checkpoint), $tool: rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$OUT/san_run_$tool.log" | tail -1)"
done
