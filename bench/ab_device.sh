#!/usr/bin/env bash
# Same-machine A/B of two builds on the device machine: a base tree (a `git archive` tarball of the
# commit to compare against; only its mdsim is built) and the working tree, each `mdsim bench`ed on
# the same configs in alternation, ROUNDS times, so machine drift hits both alike.
#   [DEB_DIR=folder] bench/ab_device.sh BASE.tar.gz [ROUNDS]   (expects build-device/mdsim already built here)
# Prints one line per run: "<which> <system> <µs/step> <ns/day>", and the medians last.
# AB_VARIANTS="label:VAR=value ..." runs the working tree's mdsim once per label with that environment
# variable set (e.g. a tuning knob read at run time), in place of the one variant "new".
set -uo pipefail
cd "$(dirname "$0")/.."
base_tar=$1; rounds=${2:-3}
source bench/device_env.sh  # configure_device_build (with the headers the machine lacks, DEB_DIR)
rm -rf /tmp/ab_base && mkdir -p /tmp/ab_base && tar -xzf "$base_tar" -C /tmp/ab_base
configure_device_build /tmp/ab_base_configure.log /tmp/ab_base /tmp/ab_base/build -DMDSIM_BUILD_TESTS=OFF || exit 1
ninja -C /tmp/ab_base/build mdsim > /tmp/ab_base_build.log 2>&1 || { grep -E "error" -A3 /tmp/ab_base_build.log | head -30; exit 1; }
sed "s|pdb: ../tests|pdb: $PWD/tests|" configs/dhfr_benchmark.yaml > /tmp/ab_dhfr.yaml
sed "s|  hydrogen_mass: 1.5 amu|  hydrogen_mass: 1.5 amu\n  replicate: [2, 2, 2]|" /tmp/ab_dhfr.yaml > /tmp/ab_dhfr2.yaml
sed "s|pdb: ../tests|pdb: $PWD/tests|" configs/dhfr_amber14.yaml > /tmp/ab_a14.yaml
sed "s|  hydrogen_mass: 1.5 amu|  hydrogen_mass: 1.5 amu\n  replicate: [4, 4, 4]|" /tmp/ab_dhfr.yaml > /tmp/ab_dhfr4.yaml
declare -A steps=([ab_dhfr]=10000 [ab_a14]=10000 [ab_dhfr2]=2000 [ab_dhfr4]=300)
systems=${AB_SYSTEMS:-ab_dhfr ab_a14 ab_dhfr2}  # ab_dhfr4: the 4x4x4 replica
: > /tmp/ab_results.txt
for r in $(seq "$rounds"); do
  for cfg in $systems; do
    for variant in base ${AB_VARIANTS:-new}; do
      which=${variant%%:*}; assignment=${variant#*:}; [ "$assignment" = "$variant" ] && assignment=
      bin=build-device/mdsim; [ $which = base ] && bin=/tmp/ab_base/build/mdsim
      # The step table's row: | atoms | integrator | timestep | constraints | timed steps | µs/step | ns/day | ...
      row=$(env $assignment $bin bench /tmp/$cfg.yaml --steps ${steps[$cfg]} 2>&1 | grep -E "^\| [0-9]+ \| [a-z]" | head -1)
      us=$(echo "$row" | awk -F'|' '{gsub(/ /,"",$7); print $7}'); nsd=$(echo "$row" | awk -F'|' '{gsub(/ /,"",$8); print $8}')
      echo "$which $cfg $us $nsd" | tee -a /tmp/ab_results.txt
    done
  done
done
echo "## medians (µs/step): system base variant variant/base"
median() { awk -v w=$1 -v c=$2 '$1==w && $2==c {print $3}' /tmp/ab_results.txt | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
for cfg in $systems; do
  b=$(median base $cfg)
  for variant in ${AB_VARIANTS:-new}; do
    which=${variant%%:*}; n=$(median $which $cfg)
    echo "$cfg $b $which $n $(awk -v b=$b -v n=$n 'BEGIN {printf "%.4f", n/b}')"
  done
done
