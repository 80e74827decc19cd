#!/usr/bin/env bash
# Issue 20 on a machine of several GPUs (nvidia-h200-x2 / -x4): build mdsim with MPI, then
# bench/replica_exchange_gpu.sh's runs (a plain run on one GPU; the 8-replica DHFR ladder and an 8-copy
# ensemble in one process, with one rank per GPU and with two ranks per GPU). Each GPU's use and memory are
# sampled every 0.5 s into $OUT/gpu_use.csv, so that which GPUs each run used can be read off against the
# run's start and end times in the summary.
#   [DEB_DIR=folder] [TIME_PS=100] bench/multi_gpu.sh      the summary, machine.txt and gpu_use.csv in
#   $OUT (or ./device_out), the runs' logs packed in $OUT/logs.tgz
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/device_out}
mkdir -p "$OUT"
gpus=$(nvidia-smi -L | tee "$OUT/machine.txt" | wc -l)
cat "$OUT/machine.txt"
source bench/device_env.sh  # configure_device_build (with the headers the machine lacks, DEB_DIR)
configure_device_build "$OUT/configure.log" || exit 1
grep "over MPI" "$OUT/configure.log"
t0=$(date +%s)
ninja -C build-device mdsim > "$OUT/build.log" 2>&1 || { grep -E "error|FAILED" -A5 "$OUT/build.log" | head -60; exit 1; }
echo "build of mdsim: $(($(date +%s) - t0)) s"
nvidia-smi --query-gpu=timestamp,index,utilization.gpu,memory.used --format=csv,noheader -lms 500 > "$OUT/gpu_use.csv" &
smi=$!
# The runs' logs go to a folder of their own (few files come back from $OUT; the summary, written as it goes,
# comes back even if the command is stopped), packed at the end.
logs=$(mktemp -d)
OUT=$logs RANKS="$gpus $((2 * gpus))" bench/replica_exchange_gpu.sh 2>&1 | tee "$OUT/summary.txt"
kill $smi
mv "$OUT/configure.log" "$OUT/build.log" "$logs"/ && tar czf "$OUT/logs.tgz" -C "$logs" .
