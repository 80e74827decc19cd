#!/usr/bin/env bash
# Issue 17's end-to-end check: heavy-atom-only structures (hydrogens, water and ions stripped) prepared by
# `mdsim prepare`, then the generated protocol run by `mdsim run` with NVT_TIME of restrained NVT and NPT_TIME of
# restrained NPT (no production), and the temperature and density per stage summarised from the state log.
#   bench/prepare_validate.sh MDSIM OUT_DIR INPUT.pdb [INPUT.pdb ...]     (env: NVT_TIME, NPT_TIME; default 10 ps)
set -uo pipefail
mdsim=$(realpath "$1"); out=$2; shift 2
nvt=${NVT_TIME:-10ps}; npt=${NPT_TIME:-10ps}
mkdir -p "$out"
py=$(command -v python3)
for input in "$@"; do
  name=$(basename "$input" .pdb)
  dir="$out/$name"; mkdir -p "$dir"
  "$py" - "$input" "$dir/${name}_heavy.pdb" <<'PY'
import sys
src, dst = sys.argv[1], sys.argv[2]
with open(src) as f, open(dst, "w") as out:
    for line in f:
        if line.startswith(("ATOM", "HETATM")):
            element = line[76:78].strip() or line[12:16].strip()[0]
            if element in ("H", "D") or line[17:20].strip() in ("HOH", "WAT", "NA", "CL", "K"):
                continue
        if line.startswith("CONECT"):
            continue
        out.write(line)
PY
  t0=$(date +%s.%N)
  ( cd "$dir" && "$mdsim" prepare "${name}_heavy.pdb" --config run.yaml --nvt-time "$nvt" --npt-time "$npt" \
      --production-time 0 > prepare.log 2>&1 ) || { echo "$name: prepare failed"; tail -3 "$dir/prepare.log"; continue; }
  t1=$(date +%s.%N)
  ( cd "$dir" && "$mdsim" run run.yaml > run.log 2>&1 ) || { echo "$name: run failed"; tail -3 "$dir/run.log"; continue; }
  t2=$(date +%s.%N)
  "$py" - "$dir/out/state.csv" "$name" "$(grep -c . "$dir/${name}_heavy.pdb")" <<'PY'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1])))
print(f"{sys.argv[2]}: {len(rows)} state lines")
for stage in dict.fromkeys(r["stage"] for r in rows):
    r = [x for x in rows if x["stage"] == stage]
    half = r[len(r) // 2:]  # the second half of each stage
    t = [float(x["temperature_k"]) for x in half]
    d = [float(x["density_g_per_cm3"]) for x in half]
    e = [float(x["potential_kj_per_mol"]) for x in half]
    rs = [float(x["restraint_kj_per_mol"]) for x in half]
    print(f"  {stage:8s} steps {r[0]['step']}-{r[-1]['step']}: T {statistics.mean(t):7.2f} ± {statistics.pstdev(t):5.2f} K, "
          f"density {statistics.mean(d):.4f} ± {statistics.pstdev(d):.4f} g/cm3 (last {d[-1]:.4f}), "
          f"potential {statistics.mean(e):.0f} kJ/mol, restraint {statistics.mean(rs):.1f} kJ/mol")
PY
  grep -E "^(hydrogens|protonation|solvent|ions|net charge|atoms):" "$dir/prepare.log" | sed 's/^/  /'
  echo "  wall: prepare $("$py" -c "print(round($t1 - $t0, 1))") s, run $("$py" -c "print(round($t2 - $t1, 1))") s"
done
