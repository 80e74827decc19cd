#!/usr/bin/env python3
"""Per-step GPU time of each kernel from an Nsight Compute CSV (--csv --page raw, with at least
gpu__time_duration.sum). Steps are counted by the kernel that ends (or, in the fused LangevinMiddle step,
begins) each integrator step. Where the CSV also has them (bench/profile_steps.sh asks for them), each
kernel's registers per thread, theoretical and achieved occupancy, issue-slot use, and DRAM and L2
traffic are reported too: percentages and bandwidths weighted by each launch's duration."""
import csv
import sys
from collections import defaultdict

# The first of these present counts the steps: the staged paths' last kernel, the fused step's former
# counter kernel, and the fused step's noise kernel (which advances the counter now; once per step).
STEP_END = ("velocity_correction_kernel", "leapfrog_velocity_kernel", "advance_step_kernel",
            "langevin_noise_kernel")

DURATION = "gpu__time_duration.sum"
# Column name -> how a kernel's launches combine: the largest, weighted by duration, or summed (bytes).
DETAIL = {
    "launch__registers_per_thread": "max",
    "sm__maximum_warps_per_active_cycle_pct": "weighted",     # theoretical occupancy, %
    "sm__warps_active.avg.pct_of_peak_sustained_active": "weighted",  # achieved occupancy, %
    "sm__inst_issued.avg.pct_of_peak_sustained_active": "weighted",   # issue slots busy, %
    "dram__bytes_read.sum": "sum",
    "dram__bytes_write.sum": "sum",
    "lts__t_bytes.sum": "sum",
}


def short(name):
    name = name.replace("(anonymous namespace)::", "").split("(")[0].replace("<unnamed>::", "")
    for prefix in ("void ", "mdsim::cuda::", "mdsim::"):
        name = name.replace(prefix, "")
    return name.split("<")[0]


def number(text):
    try:
        return float(text.replace(",", ""))
    except (AttributeError, ValueError):
        return None


def bytes_factor(unit):
    """Bytes per unit of an Nsight Compute byte column (its units row: byte, Kbyte, Mbyte, Gbyte)."""
    return {"byte": 1.0, "Kbyte": 1e3, "Mbyte": 1e6, "Gbyte": 1e9, "KB": 1e3, "MB": 1e6, "GB": 1e9}.get(unit, 1.0)


def time_factor(unit):
    """Nanoseconds per unit of the duration column."""
    return {"nsecond": 1.0, "usecond": 1e3, "msecond": 1e6, "ns": 1.0, "us": 1e3, "ms": 1e6}.get(unit, 1.0)


def main(path):
    with open(path, newline="") as f:
        lines = [l for l in f if l.startswith('"')]
    reader = csv.DictReader(lines)
    units = {}
    total = defaultdict(float)
    count = defaultdict(int)
    detail = defaultdict(lambda: defaultdict(float))
    for row in reader:
        value = number(row.get(DURATION, ""))
        if value is None:
            units = row  # the units row
            continue
        ns = value * time_factor(units.get(DURATION, "nsecond"))
        name = short(row["Kernel Name"])
        total[name] += ns
        count[name] += 1
        for column, how in DETAIL.items():
            v = number(row.get(column, ""))
            if v is None:
                continue
            d = detail[name]
            if how == "max":
                d[column] = max(d[column], v)
            elif how == "weighted":
                d[column] += v * ns
                d[column + "#w"] += ns
            else:
                d[column] += v * bytes_factor(units.get(column, "byte"))
    steps = next((count[k] for k in STEP_END if k in count), 1)
    have_detail = any(detail.values())
    print(f"{steps} steps profiled")
    if not have_detail:
        print("| kernel | launches per step | µs per launch | µs per step |")
        print("|---|---|---|---|")
    else:
        print("| kernel | launches per step | µs per launch | µs per step | registers | occupancy theoretical / "
              "achieved (%) | issue slots busy (%) | DRAM MB per step (read + write) | DRAM GB/s | L2 GB/s |")
        print("|---|---|---|---|---|---|---|---|---|---|")

    def weighted(d, column):
        w = d.get(column + "#w", 0.0)
        return f"{d[column] / w:.0f}" if w > 0 else "—"

    for name in sorted(total, key=lambda k: -total[k]):
        line = f"| {name} | {count[name] / steps:.2f} | {total[name] / count[name] / 1e3:.1f} | {total[name] / steps / 1e3:.1f} |"
        if have_detail:
            d = detail[name]
            dram = d["dram__bytes_read.sum"] + d["dram__bytes_write.sum"]
            line += (f" {d['launch__registers_per_thread']:.0f} |"
                     f" {weighted(d, 'sm__maximum_warps_per_active_cycle_pct')} /"
                     f" {weighted(d, 'sm__warps_active.avg.pct_of_peak_sustained_active')} |"
                     f" {weighted(d, 'sm__inst_issued.avg.pct_of_peak_sustained_active')} |"
                     f" {d['dram__bytes_read.sum'] / steps / 1e6:.2f} + {d['dram__bytes_write.sum'] / steps / 1e6:.2f} |"
                     f" {dram / total[name]:.0f} | {d['lts__t_bytes.sum'] / total[name]:.0f} |")
        print(line)
    print(f"| all | | | {sum(total.values()) / steps / 1e3:.1f} |" + (" | | | | | |" if have_detail else ""))


if __name__ == "__main__":
    main(sys.argv[1])
