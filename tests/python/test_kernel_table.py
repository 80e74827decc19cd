#!/usr/bin/env python3
"""bench/kernel_table.py on Nsight Compute CSVs written here in its raw-page layout (a header row, a units
row, one row per kernel launch, numbers with thousands separators): steps counted by the fused step's
noise kernel, per-step times, durations and bytes scaled by their units, registers as the largest,
occupancy and issue use weighted by duration, DRAM and L2 bandwidth as bytes over time; and the plain
table when the CSV has durations only.

    test_kernel_table.py SOURCE_DIR SCRATCH_DIR
"""
import pathlib
import subprocess
import sys

source, scratch = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
scratch.mkdir(parents=True, exist_ok=True)
script = source / "bench" / "kernel_table.py"
failures = []


def check(ok, what):
    print(("ok    " if ok else "FAIL  ") + what)
    if not ok:
        failures.append(what)


def table(name, text):
    path = scratch / name
    path.write_text(text)
    r = subprocess.run([sys.executable, str(script), str(path)], capture_output=True, text=True)
    check(r.returncode == 0, f"{name}: runs (rc {r.returncode}) {r.stderr.strip()}")
    rows = {}
    for line in r.stdout.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("| ") and cells[0] not in ("kernel",):
            rows[cells[0]] = cells
    return r.stdout, rows


columns = ["ID", "Kernel Name", "gpu__time_duration.sum", "launch__registers_per_thread",
           "sm__maximum_warps_per_active_cycle_pct", "sm__warps_active.avg.pct_of_peak_sustained_active",
           "sm__inst_issued.avg.pct_of_peak_sustained_active", "dram__bytes_read.sum", "dram__bytes_write.sum",
           "lts__t_bytes.sum"]
units = ["", "", "usecond", "register/thread", "%", "%", "%", "Mbyte", "Kbyte", "Mbyte"]
launches = [  # two steps: the pair kernel twice, the noise kernel twice, the gather once at each of two lengths
    ["0", "void mdsim::cuda::nonbonded_tile_kernel<float, (mdsim::CoulombMethod)2>(const int *)", "50", "46", "62.5", "40", "60", "5", "0", "100"],
    ["1", "void mdsim::cuda::langevin_noise_kernel<float>(int)", "6", "38", "75", "9", "10", "0.01", "0", "4"],
    ["2", "void mdsim::cuda::(anonymous namespace)::gather_kernel<float, float4>(const float4 *)", "10", "72", "44", "10", "10", "2", "0", "6"],
    ["3", "void mdsim::cuda::nonbonded_tile_kernel<float, (mdsim::CoulombMethod)2>(const int *)", "1,050", "46", "62.5", "20", "80", "95", "500", "1,900"],
    ["4", "void mdsim::cuda::langevin_noise_kernel<float>(int)", "6", "40", "75", "11", "10", "0.01", "0", "4"],
    ["5", "void mdsim::cuda::(anonymous namespace)::gather_kernel<float, float4>(const float4 *)", "30", "72", "44", "30", "20", "2", "0", "6"],
]
quote = lambda row: ",".join(f'"{c}"' for c in row)
text = "==PROF== Connected to process\n" + "\n".join(quote(r) for r in [columns, units] + launches) + "\n"
out, rows = table("detail.csv", text)
check("2 steps profiled" in out, "steps counted by langevin_noise_kernel")
tile = rows.get("nonbonded_tile_kernel", [])
check(len(tile) == 10, f"a row of ten cells for the pair kernel: {tile}")
if len(tile) == 10:
    check(tile[1] == "1.00" and tile[2] == "550.0" and tile[3] == "550.0", f"launches, µs per launch, µs per step: {tile[1:4]}")
    check(tile[4] == "46", f"registers: {tile[4]}")
    # Achieved occupancy weighted by duration: (40*50 + 20*1050) / 1100 = 20.9; issue (60*50 + 80*1050)/1100 = 79.1.
    check(tile[5] == "62 / 21", f"occupancy theoretical / achieved weighted by duration: {tile[5]}")
    check(tile[6] == "79", f"issue slots busy weighted by duration: {tile[6]}")
    # DRAM: 100 MB read + 0.5 MB written over two steps; 100.5e6 bytes over 1100e3 ns = 91 GB/s; L2 2000 MB / 1.1 ms.
    check(tile[7] == "50.00 + 0.25", f"DRAM MB per step, read + write: {tile[7]}")
    check(tile[8] == "91" and tile[9] == "1818", f"DRAM and L2 GB/s: {tile[8]}, {tile[9]}")
gather = rows.get("gather_kernel", [])
check(len(gather) == 10 and gather[3] == "20.0" and gather[5] == "44 / 25", f"anonymous-namespace kernel named, weighted: {gather}")
check(list(rows)[:3] == ["nonbonded_tile_kernel", "gather_kernel", "langevin_noise_kernel"], f"longest first: {list(rows)}")
check(rows.get("all", [""] * 4)[3] == "576.0", f"sum per step: {rows.get('all')}")

plain = "\n".join(quote([r[0], r[1], r[2]]) for r in [columns, ["", "", "nsecond"]] + launches) + "\n"
out, rows = table("plain.csv", plain)
check("| kernel | launches per step | µs per launch | µs per step |\n" in out and "registers" not in out,
      "durations only: the plain table")
check(rows.get("nonbonded_tile_kernel", [""] * 4)[3] == "0.6", f"nanosecond durations: {rows.get('nonbonded_tile_kernel')}")

if failures:
    print(f"{len(failures)} check(s) failed")
    sys.exit(1)
print("all checks passed")
