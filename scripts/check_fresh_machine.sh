#!/usr/bin/env bash
# The README's commands as a fresh Debian 12 machine runs them: a minimal `debootstrap` chroot with only the CUDA
# toolkit bound in (/usr/local/cuda, read-only; /dev, /proc and /sys as a booted machine has them), the committed
# tree copied in (`git archive HEAD`), then scripts/example.sh inside it (it installs what it needs, builds, runs
# the example). Fails when example.sh needs a package it does not install, as a user's first command would. With
# --tests, scripts/test.sh runs there afterwards too.
#   scripts/check_fresh_machine.sh [--tests]     (root; needs the network for Debian's packages; ~10 min)
# MDSIM_FRESH_ROOT names the chroot's folder (default /tmp/mdsim-fresh), made anew each time.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
root=${MDSIM_FRESH_ROOT:-/tmp/mdsim-fresh}
mirror=${MDSIM_FRESH_MIRROR:-http://deb.debian.org/debian}
run_tests=false
for arg in "$@"; do
  case "$arg" in
    --tests) run_tests=true ;;
    *) echo "check_fresh_machine.sh: unknown argument '$arg' (expected --tests)" >&2; exit 2 ;;
  esac
done
[ "$(id -u)" -eq 0 ] || { echo "check_fresh_machine.sh: run as root (debootstrap, chroot, mount)" >&2; exit 2; }
[ -x /usr/local/cuda/bin/nvcc ] || { echo "check_fresh_machine.sh: no CUDA toolkit in /usr/local/cuda" >&2; exit 2; }
command -v debootstrap >/dev/null || DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap >/dev/null

mounts=("$root/usr/local/cuda" "$root/dev" "$root/proc" "$root/sys")
unmount_all() {
  for m in "${mounts[@]}"; do mountpoint -q "$m" 2>/dev/null && umount -l "$m"; done
  return 0
}
# The folder is removed only with nothing mounted below it (a bind mount would take the host's files with it).
remove_root() {
  unmount_all
  if findmnt -rn -o TARGET | grep -q "^$root/"; then
    echo "check_fresh_machine.sh: $root still has mounts below it; not removing it" >&2
    return 1
  fi
  rm -rf --one-file-system "$root"
}
trap unmount_all EXIT

start=$(date +%s)
remove_root
debootstrap --variant=minbase bookworm "$root" "$mirror" > /tmp/mdsim-fresh-debootstrap.log 2>&1 ||
  { tail -20 /tmp/mdsim-fresh-debootstrap.log; exit 1; }
echo "fresh machine: Debian 12 minbase in $root ($(( $(date +%s) - start )) s)"
mkdir -p "$root/usr/local/cuda" "$root/src"
mount --bind /usr/local/cuda "$root/usr/local/cuda"
mount -o remount,bind,ro "$root/usr/local/cuda"
mount --bind /dev "$root/dev"
mount -t proc proc "$root/proc"
mount -t sysfs sysfs "$root/sys"  # a real machine has it: Open MPI's hwloc reads the CPU topology there
cp /etc/resolv.conf "$root/etc/resolv.conf"
git -C "$repo" archive HEAD | tar -x -C "$root/src"

in_chroot() {  # a command in the chroot's /src, as a fresh login would run it
  chroot "$root" /usr/bin/env -i HOME=/root PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    LANG=C.UTF-8 /bin/bash -c "cd /src && $1"
}
t0=$(date +%s)
in_chroot "scripts/example.sh" > /tmp/mdsim-fresh-example.log 2>&1 ||
  { echo "fresh machine: scripts/example.sh FAILED:"; tail -30 /tmp/mdsim-fresh-example.log; exit 1; }
echo "fresh machine: scripts/example.sh passed in $(( $(date +%s) - t0 )) s: $(grep -E '^ran ' /tmp/mdsim-fresh-example.log)"
if $run_tests; then
  t0=$(date +%s)
  in_chroot "scripts/test.sh" > /tmp/mdsim-fresh-test.log 2>&1 ||
    { echo "fresh machine: scripts/test.sh FAILED:"; tail -40 /tmp/mdsim-fresh-test.log; exit 1; }
  echo "fresh machine: scripts/test.sh passed in $(( $(date +%s) - t0 )) s: $(grep -E 'tests passed' /tmp/mdsim-fresh-test.log)"
fi
remove_root
