#!/usr/bin/env bash
# Long validation runs on the GPU (issue 6 and 7), with an already built mdsim (default
# build-device/mdsim): DHFR NVE 1 ns (energy drift), DHFR LangevinMiddle 100 ps (mean temperature),
# and the reporter overhead on the DHFR benchmark (frames and state lines every 1000 steps against
# none). Results go to $OUT (or ./device_out).
#   bench/device_validation.sh [nve] [langevin] [reporters]   (default: all three)
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/device_out}
MDSIM=${MDSIM:-build-device/mdsim}
mkdir -p "$OUT"
want=("$@")
[ ${#want[@]} -eq 0 ] && want=(nve langevin reporters)
for w in "${want[@]}"; do
  case "$w" in
    nve|langevin)
      cfg=configs/dhfr_$w.yaml
      out=configs/out_dhfr_$w
      rm -rf "$out"
      echo "=== $cfg"
      /usr/bin/time -f "wall %e s" "$MDSIM" run "$cfg" > "$OUT/$w.log" 2>&1
      tail -8 "$OUT/$w.log"
      cp "$out/state.csv" "$OUT/${w}_state.csv"
      python3 bench/energy_drift.py "$out/state.csv" --skip-ps 20
      ;;
    reporters)
      # The same 20,000 steps (80 ps) three times each, alternating: no reporters, and a frame + a
      # state line every 1000 steps (as issue 7's benchmark asks).
      base=configs/dhfr_benchmark.yaml
      sed 's/^run: .*/run: {steps: 20000}/' "$base" > /tmp/rep_off.yaml
      sed 's/^run: .*/run: {steps: 20000}/; s/^  trajectory: null/  directory: \/tmp\/rep_out\n  trajectory: {interval: 1000}/; s/^  state: null/  state: {interval: 1000}/' \
        "$base" > /tmp/rep_on.yaml
      sed -i "s|pdb: ../tests|pdb: $PWD/tests|" /tmp/rep_off.yaml /tmp/rep_on.yaml
      echo "=== reporter overhead (DHFR benchmark settings, 20000 steps of 4 fs)"
      for i in 1 2 3; do
        for mode in off on; do
          rm -rf /tmp/rep_out
          r=$("$MDSIM" run /tmp/rep_$mode.yaml 2>&1 | grep -o '[0-9.]* ns/day')
          echo "reporters $mode (run $i): $r"
        done
      done
      python3 -c "import h5py; f=h5py.File('/tmp/rep_out/trajectory.h5','r'); print('frames in the last trajectory:', f['particles/all/position/value'].shape)"
      ;;
    *) echo "unknown: $w" >&2; exit 2 ;;
  esac
done
