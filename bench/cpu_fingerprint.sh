#!/usr/bin/env bash
# CPU-platform fingerprint of every system in tests/data/shared/systems under every nonbonded method
# (and the switch, constraints, rigid water, hydrogen-mass and PME-grid variants): `mdsim energy --json
# --forces` per case, written to OUTDIR. A refactoring must leave these byte-identical:
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
if [ -n "$before" ]; then
  status=0
  for f in "$before"/*.json; do
    b=$(basename "$f")
    if ! diff <(grep -v forces_file "$f") <(grep -v forces_file "$out/$b") >/dev/null; then echo "energies differ: $b"; status=1; fi
  done
  for f in "$before"/*.h5; do
    b=$(basename "$f")
    if [ -n "$(h5diff "$f" "$out/$b")" ]; then echo "forces differ: $b"; status=1; fi
  done
  [ $status -eq 0 ] && echo "cpu fingerprint: $(ls "$before"/*.json | wc -l) cases identical to $before"
  exit $status
fi
echo "cpu fingerprint: $(ls "$out"/*.json | wc -l) cases in $out"
