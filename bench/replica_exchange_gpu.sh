#!/usr/bin/env bash
# Issue 19 on the GPU machine: the 8-replica DHFR ladder (configs/dhfr_replica_exchange.yaml) in one process
# and over MPI ranks sharing the GPUs (RANKS, default "2 4 8"), an 8-copy ensemble (exchange: none) the same
# ways, against one plain run of the same settings and length (TIME_PS per replica, default 100).
# Needs build-device/mdsim built with MPI. Summaries go to stdout, logs to $OUT/rex_*.log.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/device_out}
mkdir -p "$OUT"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
MDSIM=$PWD/build-device/mdsim
time_ps=${TIME_PS:-100}
ladder=configs/.dhfr_ladder.yaml copies=configs/.dhfr_copies.yaml plain=configs/.dhfr_plain.yaml
sed "s/run: {time: 20 ps}/run: {time: $time_ps ps}/" configs/dhfr_replica_exchange.yaml > $ladder
# The same settings at 300 K: without replicas (the plain run), and as 8 independent copies.
sed -e '/^replicas:/,/^  exchange_interval/d' -e 's/integrator: {type: langevin_middle,/integrator: {type: langevin_middle, temperature: 300 K,/' \
    -e 's/directory: out_dhfr_rex/directory: out_dhfr_plain/' $ladder > $plain
sed -e 's/^replicas:$/replicas: {exchange: none, count: 8}/' -e '/^  exchange: temperature/,/^  exchange_interval/d' \
    -e 's/integrator: {type: langevin_middle,/integrator: {type: langevin_middle, temperature: 300 K,/' \
    -e 's/directory: out_dhfr_rex/directory: out_dhfr_copies/' $ladder > $copies
summary() { grep -E "^(ran|stopped)" "$1"; grep -E "K <->|round trips" "$1"; }
echo "## plain run (one replica's work), $time_ps ps, from $(date +%T)"
$MDSIM run $plain > "$OUT/rex_plain.txt" 2>&1; echo "rc=$?"; summary "$OUT/rex_plain.txt"
for kind in ladder copies; do
  cfg=$ladder; [ $kind = copies ] && cfg=$copies
  echo "## $kind: 8 replicas, one process, from $(date +%T)"
  $MDSIM run $cfg > "$OUT/rex_${kind}_1.txt" 2>&1; echo "rc=$?"; summary "$OUT/rex_${kind}_1.txt"
  for n in ${RANKS:-2 4 8}; do
    echo "## $kind: 8 replicas, mpirun -n $n, from $(date +%T)"
    mpirun -n $n --oversubscribe --bind-to none $MDSIM run $cfg > "$OUT/rex_${kind}_$n.txt" 2>&1; echo "rc=$?"
    summary "$OUT/rex_${kind}_$n.txt"
  done
done
echo "## demux of the ladder"
$MDSIM demux $ladder > "$OUT/rex_demux.txt" 2>&1; echo "rc=$?"; head -2 "$OUT/rex_demux.txt"
rm -f $ladder $copies $plain
