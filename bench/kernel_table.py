#!/usr/bin/env python3
"""Per-step GPU time of each kernel from an Nsight Compute CSV (--metrics gpu__time_duration.sum --csv
--page raw). Steps are counted by the kernel that ends each integrator step."""
import csv
import sys
from collections import defaultdict

STEP_END = ("velocity_correction_kernel", "leapfrog_velocity_kernel", "advance_step_kernel")


def short(name):
    name = name.replace("(anonymous namespace)::", "").split("(")[0].replace("<unnamed>::", "")
    for prefix in ("void ", "mdsim::cuda::", "mdsim::"):
        name = name.replace(prefix, "")
    return name.split("<")[0]


def main(path):
    rows = []
    with open(path, newline="") as f:
        lines = [l for l in f if l.startswith('"')]
    reader = csv.DictReader(lines)
    total = defaultdict(float)
    count = defaultdict(int)
    for row in reader:
        value = row.get("gpu__time_duration.sum", "")
        try:
            ns = float(value.replace(",", ""))
        except ValueError:
            continue  # the units row
        name = short(row["Kernel Name"])
        total[name] += ns
        count[name] += 1
    # The kernel that ends a step: the staged paths' last kernel, else the fused step's counter advance.
    steps = next((count[k] for k in STEP_END if k in count), 1)
    print(f"{steps} steps profiled")
    print("| kernel | launches per step | µs per launch | µs per step |")
    print("|---|---|---|---|")
    for name in sorted(total, key=lambda k: -total[k]):
        print(f"| {name} | {count[name] / steps:.2f} | {total[name] / count[name] / 1e3:.1f} | {total[name] / steps / 1e3:.1f} |")
    print(f"| all | | | {sum(total.values()) / steps / 1e3:.1f} |")


if __name__ == "__main__":
    main(sys.argv[1])
