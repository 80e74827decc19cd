#!/usr/bin/env python3
"""Energy drift and temperature from an mdsim state log (state.csv).

    python3 bench/energy_drift.py STATE_CSV [--skip-ps 20]

Prints, for the lines after --skip-ps (equilibration of kinetic and potential energy):
  - the mean temperature (K) with its standard error from 10 block averages;
  - the drift of the total energy: slope of a least-squares line (kJ/mol/ns) with its standard
    error from 10 block slopes, and the same in kT/ns per degree of freedom, where k_B T uses the
    mean temperature and the degrees of freedom are 2 <KE> / (k_B <T>) (the run's own count).
Only numpy is needed.
"""
import argparse
import sys

import numpy as np

K_BOLTZMANN = 0.0083144626181532  # kJ/mol/K


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("state_csv")
    ap.add_argument("--skip-ps", type=float, default=20.0, help="leading time left out (ps)")
    args = ap.parse_args()
    data = np.genfromtxt(args.state_csv, delimiter=",", names=True)
    keep = data["time_ps"] >= data["time_ps"][0] + args.skip_ps
    d = data[keep]
    if len(d) < 20:
        sys.exit(f"{args.state_csv}: only {len(d)} lines after {args.skip_ps} ps; need at least 20")
    t_ns = d["time_ps"] * 1e-3
    total = d["total_kj_per_mol"]
    temperature = d["temperature_k"]
    blocks_t = np.array_split(temperature, 10)
    mean_t = temperature.mean()
    sem_t = np.std([b.mean() for b in blocks_t], ddof=1) / np.sqrt(10)
    dof = 2.0 * d["kinetic_kj_per_mol"].mean() / (K_BOLTZMANN * mean_t)
    slope, intercept = np.polyfit(t_ns, total, 1)
    block_slopes = [np.polyfit(tb, eb, 1)[0] for tb, eb in zip(np.array_split(t_ns, 10), np.array_split(total, 10))]
    # Uncertainty: standard error of the mean of the 10 block slopes (conservative for the full fit).
    slope_err = np.std(block_slopes, ddof=1) / np.sqrt(10)
    kt = K_BOLTZMANN * mean_t
    print(f"lines used: {len(d)} ({d['time_ps'][0]:.1f} to {d['time_ps'][-1]:.1f} ps)")
    print(f"mean temperature: {mean_t:.2f} +- {sem_t:.2f} K ({100 * (mean_t / 300.0 - 1):+.2f}% from 300 K)")
    print(f"degrees of freedom: {dof:.0f}")
    print(f"total energy: mean {total.mean():.1f} kJ/mol, std {total.std():.2f} kJ/mol")
    print(f"drift: {slope:.2f} +- {slope_err:.2f} kJ/mol/ns = {slope / (kt * dof):.2e} +- {slope_err / (kt * dof):.1e} "
          f"kT/ns per degree of freedom")


if __name__ == "__main__":
    main()
