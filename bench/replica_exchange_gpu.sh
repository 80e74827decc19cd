#!/usr/bin/env bash
# Issue 19 on the GPU machine: the 8-replica DHFR ladder (configs/dhfr_replica_exchange.yaml) in one process
# and over 2, 4 and 8 MPI ranks sharing the GPUs, against one plain run of the same settings and length.
# Needs build-device/mdsim built with MPI. Summary lines go to stdout, logs to $OUT/rex_*.log.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/device_out}
mkdir -p "$OUT"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
MDSIM=$PWD/build-device/mdsim
cfg=configs/dhfr_replica_exchange.yaml
# One plain run: the same system and settings without replicas, at 300 K, 20 ps.
sed -e '/^replicas:/,/^  exchange_interval/d' -e 's/integrator: {type: langevin_middle,/integrator: {type: langevin_middle, temperature: 300 K,/' \
    -e 's/directory: out_dhfr_rex/directory: out_dhfr_plain/' $cfg > configs/.dhfr_plain.yaml
echo "## plain run (one replica's work)"
$MDSIM run configs/.dhfr_plain.yaml > "$OUT/rex_plain.log" 2>&1; echo "rc=$?"; grep "^ran" "$OUT/rex_plain.log"
echo "## 8 replicas, one process"
$MDSIM run $cfg > "$OUT/rex_1.log" 2>&1; echo "rc=$?"; grep -A12 "^ran" "$OUT/rex_1.log"
for n in ${RANKS:-2 4 8}; do
  echo "## 8 replicas, mpirun -n $n"
  mpirun -n $n --oversubscribe --bind-to none $MDSIM run $cfg > "$OUT/rex_$n.log" 2>&1; echo "rc=$?"
  grep -A12 "^ran" "$OUT/rex_$n.log"
done
echo "## demux"
$MDSIM demux $cfg > "$OUT/rex_demux.log" 2>&1; echo "rc=$?"; head -3 "$OUT/rex_demux.log"
rm -f configs/.dhfr_plain.yaml
