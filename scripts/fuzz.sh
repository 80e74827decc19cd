#!/usr/bin/env bash
# Fuzzes mdsim's readers with libFuzzer (docs/FUZZING.md): builds the targets of fuzz/ with clang into
# ./build-fuzz (ASan + UBSan), replays every committed crash input in fuzz/regressions/<target>/ (each must
# now be handled), then runs each target for SECONDS (default 60) from seed corpora made of the project's
# own inputs. Exits non-zero on any crash, sanitizer report, unexpected exception, timeout (-timeout=10)
# or memory blow-up (-rss_limit_mb=2048); the failing input is saved under build-fuzz/artifacts/.
#   scripts/fuzz.sh [SECONDS_PER_TARGET] [TARGET...]     e.g. scripts/fuzz.sh 600 pdb
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
shift || true
targets=("$@")
all_targets=(config pdb forcefield_xml checkpoint structure prepare_config exchange_log system_xml amber_prmtop
  amber_coordinates gromacs_top gro charmm)
if [ ${#targets[@]} -eq 0 ]; then targets=("${all_targets[@]}"); fi
case "$seconds" in ''|*[!0-9]*) echo "usage: $0 [SECONDS_PER_TARGET] [TARGET...]" >&2; exit 2 ;; esac

scripts/setup.sh --fuzz
launcher=()
if command -v ccache >/dev/null 2>&1; then
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
fi
cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DMDSIM_FUZZ=ON -DMDSIM_WERROR=ON \
  -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ "${launcher[@]}" >/dev/null
cmake --build build-fuzz -j "$(nproc)"

export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
max_len() {
  case "$1" in
    config) echo 4096 ;;
    pdb) echo 8192 ;;
    forcefield_xml) echo 24576 ;;
    checkpoint) echo 1024 ;;
    structure) echo 8192 ;;
    prepare_config) echo 4096 ;;
    exchange_log) echo 4096 ;;
    system_xml) echo 16384 ;;
    amber_prmtop) echo 40960 ;;
    amber_coordinates) echo 4096 ;;
    gromacs_top) echo 65536 ;;
    gro) echo 4096 ;;
    charmm) echo 32768 ;;
  esac
}

# Seeds: the project's own inputs (big PDB files cut to their first 100 lines), plus fuzz/corpus/<target>/.
seeds=build-fuzz/seeds
rm -rf "$seeds"
for t in "${all_targets[@]}"; do mkdir -p "$seeds/$t"; done
mkdir -p build-fuzz/artifacts build-fuzz/logs
i=0
for f in configs/*.yaml examples/*/config.yaml; do i=$((i + 1)); cp "$f" "$seeds/config/$i-$(basename "$f")"; done
cp tests/data/*.pdb "$seeds/pdb/"
for f in tests/data/shared/systems/*.pdb; do head -n 100 "$f" >"$seeds/pdb/head-$(basename "$f")"; done
# structure: the PDB seeds, and the mmCIF files cut to their first 120 lines (header, _struct_conn, first atoms).
cp "$seeds"/pdb/* "$seeds/structure/"
for f in tests/data/structure_*.cif.gz; do
  gzip -dc "$f" | head -n 120 >"$seeds/structure/head-$(basename "$f" .gz)" || true
done
cp forcefields/*.xml tests/data/ff_*.xml "$seeds/forcefield_xml/"
for f in forcefields/amber14/*.xml; do cp "$f" "$seeds/forcefield_xml/amber14-$(basename "$f")"; done
# The checkpoint target's input is a list of choices, not a file: any bytes will do to start from.
for f in tests/data/pdb_*.pdb; do head -c 1024 "$f" >"$seeds/checkpoint/bytes-$(basename "$f")"; done
# prepare_config: settings files are written in the tests (tests/io/test_prepare_config.cpp) and docs, not kept
# as files; its seeds are fuzz/corpus/prepare_config/. exchange_log: fuzz/corpus/exchange_log/ (exchange and state
# logs as a replica ensemble writes them).
# system_xml: the tests' serialized Systems and State (the water boxes cut to their first 150 lines).
cp tests/data/system_xml_ala2_vacuum.*.xml "$seeds/system_xml/"
for f in tests/data/system_xml_*.system.xml.gz; do
  gzip -dc "$f" | head -n 150 >"$seeds/system_xml/head-$(basename "$f" .gz)" || true
done
# The topology readers: the tests' prmtop, inpcrd/rst7, .top and .gro files (the big coordinate files cut to their
# first 40 lines, which the count in their header then disagrees with). The .top files that #include a GROMACS force
# field find it in /usr/share/gromacs/top where GROMACS is installed, and stop at the #include elsewhere.
cp tests/data/amber/alanine-dipeptide-*.prmtop tests/data/shared/topologies/inputs/peptide_with_tip4p.prmtop \
  "$seeds/amber_prmtop/"
cp tests/data/amber/*.inpcrd tests/data/shared/topologies/inputs/peptide_with_tip4p.inpcrd "$seeds/amber_coordinates/"
for f in tests/data/amber/ff14ipq.rst7 tests/data/shared/topologies/inputs/alanine-dipeptide-explicit.inpcrd; do
  head -n 40 "$f" >"$seeds/amber_coordinates/head-$(basename "$f")"
done
cp tests/data/gromacs/*.top tests/data/shared/topologies/inputs/bnz.top "$seeds/gromacs_top/"
cp tests/data/gromacs/*.gro tests/data/shared/topologies/inputs/*.gro "$seeds/gro/"
# charmm: each test case's parameter files as a stream file, "@@", its PSF; the crd files; the PSFs alone.
charmm_seed() {  # name psf files...
  local name=$1 psf=$2
  shift 2
  { for f in "$@"; do
      case "$f" in *.rtf) echo "read rtf card" ;; *) echo "read para card" ;; esac
      cat "$f"; echo "END"
    done
    echo "@@"; cat "$psf"; } >"$seeds/charmm/$name"
}
c=tests/data/charmm
charmm_seed chlb $c/chlb_cgenff.psf $c/cgenff_chlb.rtf $c/cgenff_chlb.prm
charmm_seed ala3_xplor $c/ala_ala_ala_xplor.psf $c/charmm22_ala.rtf $c/charmm22_ala.par
charmm_seed water_methanol $c/water_methanol.psf $c/water_methanol.prm
cp $c/*.crd $c/*.psf "$seeds/charmm/"
head -n 60 tests/data/shared/topologies/inputs/ala3_solv.crd >"$seeds/charmm/head-ala3_solv.crd"
for t in "${all_targets[@]}"; do
  if [ -d "fuzz/corpus/$t" ]; then cp fuzz/corpus/"$t"/* "$seeds/$t/" 2>/dev/null || true; fi
done

status=0
# 1. Every committed regression input must run clean.
for t in "${targets[@]}"; do
  inputs=(fuzz/regressions/"$t"/*)
  [ -e "${inputs[0]}" ] || continue
  if ! build-fuzz/fuzz/fuzz_"$t" -timeout=10 -rss_limit_mb=2048 "${inputs[@]}" >"build-fuzz/logs/$t-regressions.log" 2>&1; then
    echo "fuzz: $t: a regression input fails again; see build-fuzz/logs/$t-regressions.log" >&2
    tail -n 40 "build-fuzz/logs/$t-regressions.log" >&2
    status=1
  else
    echo "fuzz: $t: ${#inputs[@]} regression inputs pass"
  fi
done

# 2. Bounded fuzzing, as many targets at once as there are cores (each target on a core of its own for SECONDS).
# build-fuzz/corpus/<target> keeps what earlier runs found.
fuzz_one() {  # target: its line on stdout, or its failure on stderr and status 1
  local t=$1 log="build-fuzz/logs/$1.log"
  local dict=()
  mkdir -p "build-fuzz/corpus/$t"
  if [ -f "fuzz/$t.dict" ]; then dict=(-dict="fuzz/$t.dict"); fi
  if build-fuzz/fuzz/fuzz_"$t" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len="$(max_len "$t")" \
      "${dict[@]}" -print_final_stats=1 -artifact_prefix="build-fuzz/artifacts/$t-" \
      "build-fuzz/corpus/$t" "$seeds/$t" >"$log" 2>&1; then
    echo "fuzz: $t: $(grep -E '^#[0-9]+.*(DONE|pulse|NEW|REDUCE)' "$log" | tail -n 1 | sed -E 's/ +/ /g')"
  else
    { echo "fuzz: $t: FAILED; the input is in build-fuzz/artifacts/ ($log):"
      grep -E 'ERROR|SUMMARY|runtime error|Test unit written|terminate|what\(\)' "$log" | head -n 20 || true; } >&2
    return 1
  fi
}
pids=()
for t in "${targets[@]}"; do
  while [ "$(jobs -rp | wc -l)" -ge "$(nproc)" ]; do sleep 1; done
  fuzz_one "$t" &
  pids+=($!)
done
for pid in "${pids[@]}"; do wait "$pid" || status=1; done
exit $status
