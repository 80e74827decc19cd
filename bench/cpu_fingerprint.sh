#!/usr/bin/env bash
# CPU-platform fingerprint of every system in tests/data/shared/systems under every nonbonded method
# (and the switch, constraints, rigid water, hydrogen-mass and PME-grid variants): `mdsim energy --json
# --forces` per case, and a short CPU trajectory (minimisation, two stages of Langevin dynamics, the second
# restrained and under a Monte Carlo barostat: positions of every frame and the state log but its speed
# column), written to OUTDIR. A refactoring must leave these byte-identical:
#   bench/cpu_fingerprint.sh build/mdsim /tmp/before; ... ; bench/cpu_fingerprint.sh build/mdsim /tmp/after
#   diff -r /tmp/before /tmp/after && echo identical   (h5 forces are compared with h5diff)
set -euo pipefail
mdsim=$(realpath "$1"); out=$2; before=${3:-}
root=$(cd "$(dirname "$0")/.." && pwd)
systems=$root/tests/data/shared/systems
mkdir -p "$out"; work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
case_run() {  # name pdb extra-yaml
  local name=$1 pdb=$2 extra=$3
  cat > "$work/$name.yaml" <<YAML
system:
  pdb: $systems/$pdb
  forcefield: [amber14-all.xml, amber14/tip3p.xml]
$extra
platform: {name: cpu}
YAML
  "$mdsim" energy "$work/$name.yaml" --json --platform cpu --forces "$out/$name.forces.h5" > "$out/$name.json"
}
case_run ala2_vacuum_nocutoff ala2_vacuum.pdb "  nonbonded_method: no_cutoff"
case_run ala2_vacuum_cutoff ala2_vacuum.pdb "  nonbonded_method: cutoff_nonperiodic
  cutoff: 1.0 nm"
case_run ala2_vacuum_switch_hmr ala2_vacuum.pdb "  nonbonded_method: cutoff_nonperiodic
  cutoff: 1.0 nm
  switch_distance: 0.8 nm
  constraints: hbonds
  hydrogen_mass: 1.5 amu"
for sys in ala2_water villin_water dhfr; do
  case_run ${sys}_pme $sys.pdb "  nonbonded_method: pme
  cutoff: 0.9 nm"
  case_run ${sys}_pme_switch_fft $sys.pdb "  nonbonded_method: pme
  cutoff: 1.0 nm
  switch_distance: 0.9 nm
  pme_grid: fft_friendly
  ewald_tolerance: 1.0e-4
  constraints: hbonds
  rigid_water: true"
  case_run ${sys}_rf $sys.pdb "  nonbonded_method: cutoff_periodic
  cutoff: 0.9 nm
  dispersion_correction: false
  constraints: allbonds
  rigid_water: false"
done
# The short trajectory: every CPU piece of a step (forces, constraints, integrator, barostat, restraints).
cat > "$work/trajectory.yaml" <<YAML
system:
  pdb: $systems/ala2_water.pdb
  forcefield: [amber14-all.xml, amber14/tip3p.xml]
  nonbonded_method: pme
  cutoff: 0.9 nm
  constraints: hbonds
  rigid_water: true
integrator: {type: langevin_middle, temperature: 300 K, friction: 1/ps, timestep: 2 fs, seed: 7}
barostat: {pressure: 1 bar, interval: 5}
stages:
  - {name: min, minimize: {tolerance: 10 kJ/mol/nm, max_iterations: 50}}
  - {name: nvt, steps: 20, barostat: null}
  - {name: npt, steps: 20, restraints: {atoms: protein and not hydrogen, k: 1000 kJ/mol/nm^2}}
output:
  directory: $work/run
  trajectory: {file: trajectory.h5, interval: 5}
  state: {file: state.csv, interval: 5}
  checkpoint: {file: checkpoint.h5, interval: 0}
platform: {name: cpu}
YAML
"$mdsim" run "$work/trajectory.yaml" > /dev/null
cp "$work/run/trajectory.h5" "$out/trajectory.h5.run"
cut -d, -f1-8,10- "$work/run/state.csv" > "$out/trajectory.state.csv"
status=0
if [ -n "$before" ]; then
  for d in /coordinates /cell_lengths /time; do
    if ! h5diff "$before/trajectory.h5.run" "$out/trajectory.h5.run" $d >/dev/null; then echo "trajectory differs: $d"; status=1; fi
  done
  if ! cmp -s "$before/trajectory.state.csv" "$out/trajectory.state.csv"; then echo "state log differs"; status=1; fi
  for f in "$before"/*.json; do
    b=$(basename "$f")
    if ! diff <(grep -v forces_file "$f") <(grep -v forces_file "$out/$b") >/dev/null; then echo "energies differ: $b"; status=1; fi
  done
  for f in "$before"/*.h5; do
    b=$(basename "$f")
    if [ -n "$(h5diff "$f" "$out/$b")" ]; then echo "forces differ: $b"; status=1; fi
  done
  [ $status -eq 0 ] && echo "cpu fingerprint: $(ls "$before"/*.json | wc -l) cases and the trajectory identical to $before"
  exit $status
fi
echo "cpu fingerprint: $(ls "$out"/*.json | wc -l) cases and a trajectory of $(grep -c . "$out/trajectory.state.csv") state lines in $out"
