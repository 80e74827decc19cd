#!/usr/bin/env bash
# Issue 36's speed checks on the GPU (mdsim bench, DHFR amber14, PME 1.0 nm, HBonds, rigid water, 2 fs, mixed):
# the serialized TIP3P System (same physics as configs/dhfr_amber14.yaml), the same System with its LJ as a type-pair
# table (NBFIX path), and DHFR in TIP4P-Ew (virtual sites). The systems come from bench/make_topology_bench.py
# (OpenMM 7.7; run it on a machine with python3-openmm and carry the folder).
#   bench/topology_bench.sh MDSIM FOLDER [STEPS]
set -uo pipefail
mdsim=$1 folder=$(cd "$2" && pwd) steps=${3:-10000}
pdb=$(cd "$(dirname "$0")/.." && pwd)/tests/data/shared/systems/dhfr.pdb
config() {  # topology coordinates
  cat <<YAML
system: {topology: $1, coordinates: $2}
platform: {name: cuda, precision: mixed}
integrator: {type: langevin_middle, temperature: 300 K, friction: 1/ps, timestep: 2 fs}
run: {steps: $steps}
output: {trajectory: null, state: null, checkpoint: null, final_pdb: null, progress: false}
YAML
}
config "$folder/dhfr_tip3p.system.xml.gz" "$pdb" > /tmp/topology_bench_tip3p.yaml
config "$folder/dhfr_nbfix.system.xml.gz" "$pdb" > /tmp/topology_bench_nbfix.yaml
config "$folder/dhfr_tip4pew.system.xml.gz" "$folder/dhfr_tip4pew.pdb" > /tmp/topology_bench_tip4pew.yaml
for name in tip3p nbfix tip4pew; do
  echo "## DHFR $name (serialized System)"
  "$mdsim" bench /tmp/topology_bench_$name.yaml --steps "$steps" 2>&1
done
