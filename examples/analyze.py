#!/usr/bin/env python3
"""Analyse an mdsim output folder: RMSD and radius of gyration from the trajectory, plots of the state log.

Usage (Debian 12: python3-mdtraj, python3-matplotlib, python3-numpy):
    /usr/bin/python3 examples/analyze.py OUTPUT_DIR [--selection 'protein and name CA'] [--out PREFIX]

Reads OUTPUT_DIR/trajectory.h5 (MDTraj's HDF5 layout, positions in nm, time in ps) and OUTPUT_DIR/state.csv
(step, time_ps, potential/kinetic/total in kJ/mol, temperature_k, ...). For the atoms of --selection (an MDTraj
selection, default 'protein') and every frame it computes
  - RMSD (nm) to the first frame after least-squares superposition of the selection on it (MDTraj's
    Trajectory.superpose; the deviation is then summed in float64, so frame 0 is exactly 0);
  - radius of gyration (nm), mass-weighted about the selection's centre of mass, with element masses (amu):
    Rg = sqrt(sum_i m_i |r_i - r_com|^2 / sum_i m_i).
It prints a table (time ps, RMSD nm, Rg nm), writes PREFIX + rmsd_rg.csv and three PNG plots:
PREFIX + energy.png (potential, kinetic, total energy in kJ/mol vs time in ps), PREFIX + temperature.png
(K vs ps) and PREFIX + rmsd_rg.png (nm vs ps). PREFIX defaults to OUTPUT_DIR/; `--out results/run1_` writes
results/run1_energy.png and so on. Exit code 2 with a one-line message for a missing or unreadable file, a
trajectory without frames, and a selection that matches no atom.
"""
import argparse
import csv
import os
import sys
import warnings

import matplotlib

matplotlib.use("Agg")  # files only, no display
import matplotlib.pyplot as plt  # noqa: E402
import mdtraj  # noqa: E402
import numpy as np  # noqa: E402

STATE_COLUMNS = ("time_ps", "potential_kj_per_mol", "kinetic_kj_per_mol", "total_kj_per_mol", "temperature_k")


def fail(message):
    print(f"analyze.py: {message}", file=sys.stderr)
    sys.exit(2)


def load_trajectory(path, selection):
    """The trajectory and the indices of the selected atoms; exits with code 2 on any input problem."""
    if not os.path.isfile(path):
        fail(f"{path}: no such file (is this an mdsim output folder with a trajectory?)")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # MDTraj warns that the HDF5 reader ignores top=
            traj = mdtraj.load(path)
    except Exception as e:  # noqa: BLE001 - any reader error is an input error here
        fail(f"{path}: cannot read the trajectory: {(str(e).strip().splitlines() or [type(e).__name__])[-1]}")
    if traj.n_frames == 0:
        fail(f"{path}: the trajectory has no frames (was trajectory.interval larger than the run?)")
    try:
        atoms = traj.topology.select(selection)
    except Exception as e:  # noqa: BLE001 - MDTraj raises several types for a bad selection
        fail(f"selection '{selection}' is not a valid MDTraj selection: {str(e).splitlines()[0]}")
    if len(atoms) == 0:
        has_protein = len(traj.topology.select("protein")) > 0
        fail(f"selection '{selection}' matches none of the {traj.n_atoms} atoms of {path}"
             + ("" if has_protein else " (the trajectory has no protein atoms: choose others with --selection)"))
    return traj, atoms


def rmsd_and_rg(traj, atoms):
    """Per-frame RMSD (nm) to frame 0 after superposition, and mass-weighted Rg (nm), of the selected atoms."""
    sub = traj.atom_slice(atoms)
    masses = np.array([a.element.mass for a in sub.topology.atoms], dtype=np.float64)  # amu
    xyz = sub.xyz.astype(np.float64)
    com = (xyz * masses[None, :, None]).sum(axis=1) / masses.sum()
    rg = np.sqrt((((xyz - com[:, None, :]) ** 2).sum(axis=2) * masses).sum(axis=1) / masses.sum())
    sub.superpose(sub, frame=0)  # in place: every frame fitted onto frame 0
    fitted = sub.xyz.astype(np.float64)
    rmsd = np.sqrt(((fitted - fitted[0]) ** 2).sum(axis=2).mean(axis=1))
    return rmsd, rg


def read_state(path):
    """Columns of the state log as float arrays (empty cells, e.g. volume without a box, become NaN)."""
    if not os.path.isfile(path):
        fail(f"{path}: no such file (is this an mdsim output folder with a state log?)")
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    if not rows:
        fail(f"{path}: the state log has no data lines")
    missing = [c for c in STATE_COLUMNS if c not in rows[0]]
    if missing:
        fail(f"{path}: missing column(s) {', '.join(missing)} (not an mdsim state log?)")
    try:
        return {c: np.array([float(r[c]) if r[c] else np.nan for r in rows]) for c in STATE_COLUMNS}
    except (TypeError, ValueError) as e:  # a short row gives None, a bad cell a ValueError
        fail(f"{path}: not a number in the state log: {e}")


def save(fig, path):
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    print(f"wrote {path}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("output_dir", help="mdsim output folder (holds trajectory.h5 and state.csv)")
    parser.add_argument("--selection", default="protein", help="MDTraj atom selection (default: protein)")
    parser.add_argument("--out", help="prefix of the files written (default: OUTPUT_DIR/)")
    args = parser.parse_args()
    prefix = args.out if args.out is not None else os.path.join(args.output_dir, "")
    if os.path.dirname(prefix):
        os.makedirs(os.path.dirname(prefix), exist_ok=True)

    traj_path = os.path.join(args.output_dir, "trajectory.h5")
    state_path = os.path.join(args.output_dir, "state.csv")
    traj, atoms = load_trajectory(traj_path, args.selection)
    state = read_state(state_path)
    rmsd, rg = rmsd_and_rg(traj, atoms)
    time = np.asarray(traj.time, dtype=np.float64)  # ps

    print(f"{traj.n_frames} frames, {traj.n_atoms} atoms; selection '{args.selection}': {len(atoms)} atoms")
    print(f"{'time (ps)':>10} {'RMSD (nm)':>10} {'Rg (nm)':>10}")
    stride = max(1, traj.n_frames // 20)  # a short table: about 20 rows, and always the last frame
    for i in sorted(set(range(0, traj.n_frames, stride)) | {traj.n_frames - 1}):
        print(f"{time[i]:10.3f} {rmsd[i]:10.4f} {rg[i]:10.4f}")
    with open(prefix + "rmsd_rg.csv", "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["frame", "time_ps", "rmsd_nm", "rg_nm"])
        for i in range(traj.n_frames):
            w.writerow([i, f"{time[i]:.6g}", f"{rmsd[i]:.8g}", f"{rg[i]:.8g}"])
    print(f"wrote {prefix}rmsd_rg.csv")

    t = state["time_ps"]
    fig, axes = plt.subplots(3, 1, sharex=True, figsize=(7, 6))  # one panel each: their scales differ
    for ax, key, color in zip(axes, ("potential", "kinetic", "total"), ("tab:blue", "tab:orange", "tab:purple")):
        ax.plot(t, state[f"{key}_kj_per_mol"], marker=".", color=color)
        ax.set(ylabel=f"{key} (kJ/mol)")
    axes[0].set(title="energies (state.csv)")
    axes[-1].set(xlabel="time (ps)")
    save(fig, prefix + "energy.png")

    fig, ax = plt.subplots(figsize=(7, 3.5))
    ax.plot(t, state["temperature_k"], marker=".", color="tab:red")
    ax.set(xlabel="time (ps)", ylabel="temperature (K)", title="temperature (state.csv)")
    save(fig, prefix + "temperature.png")

    fig, (ax1, ax2) = plt.subplots(2, 1, sharex=True, figsize=(7, 5))
    ax1.plot(time, rmsd, marker=".")
    ax1.set(ylabel="RMSD (nm)", title=f"selection '{args.selection}' ({len(atoms)} atoms)")
    ax2.plot(time, rg, marker=".", color="tab:green")
    ax2.set(xlabel="time (ps)", ylabel="Rg, mass-weighted (nm)")
    save(fig, prefix + "rmsd_rg.png")


if __name__ == "__main__":
    main()
