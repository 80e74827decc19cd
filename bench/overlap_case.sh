#!/usr/bin/env bash
# Writes a copy of ala2_water with two coincident atoms (HOH F's O moved onto HOH E's O) and a config
# for the given platform into DIR, then runs `mdsim check` and `mdsim run` on it: both must exit 2 with
# the overlap message and leave no output folder (issue 15; on the device machine for the CUDA platform).
#   bench/overlap_case.sh MDSIM DIR [cpu|cuda]
set -uo pipefail
mdsim=$(realpath "$1"); dir=$2; platform=${3:-cuda}
root=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$dir"
python3 - "$root/tests/data/shared/systems/ala2_water.pdb" "$dir/overlap.pdb" <<'PY'
import sys
lines = open(sys.argv[1]).read().split('\n')
lines[41] = lines[41][:30] + lines[37][30:54] + lines[41][54:]
open(sys.argv[2], 'w').write('\n'.join(lines))
PY
cat > "$dir/run.yaml" <<YAML
system: {pdb: overlap.pdb, nonbonded_method: pme, cutoff: 1.0 nm}
platform: {name: $platform}
minimize: {tolerance: 10 kJ/mol/nm}
run: {steps: 100}
output: {directory: out, trajectory: {interval: 10}, state: {interval: 10}, final_pdb: final.pdb}
YAML
for command in check run; do
  (cd "$dir" && "$mdsim" $command run.yaml); echo "mdsim $command ($platform): exit $?"
done
[ -e "$dir/out" ] && echo "output folder created" || echo "no output folder"
