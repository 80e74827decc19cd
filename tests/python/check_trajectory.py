#!/usr/bin/python3
"""Open an mdsim HDF5 trajectory with h5py, MDTraj and MDAnalysis and compare with what was written.

Run by tests/io/test_trajectory_h5.cpp through /usr/bin/python3 (Debian's python3-h5py, python3-mdtraj,
python3-mdanalysis; CI installs them with scripts/setup.sh --tests). A missing reader is an error
(non-zero exit), never a skip.

    check_trajectory.py EXPECTED.json

EXPECTED.json (written by the C++ test) holds:
  trajectory       path of the .h5 file
  pdb              PDB of exactly the atoms in the file (topology for MDAnalysis)
  atom_names, residue_names, res_seq, elements, chains, residues   what MDTraj's /topology must give
  protein_atoms    (optional) atoms MDTraj's "protein" selection must find
  frames, atoms    expected shape
  positions_file   raw little-endian float32, frames x atoms x 3 (nm), the exact values written
  velocities_file / forces_file   the same for velocities / forces, or null when not recorded
  steps, times_ps  per frame
  boxes_nm         per frame 3x3 rows a, b, c, or null for a non-periodic file
  bonds            expected MDTraj bonds (index pairs in the file's numbering)
  complete         expected value of the root attribute `complete`
  readers          subset of ["h5py", "mdtraj", "mdanalysis"] to run (all by default)
Prints one line per check group; exits 1 with a message on the first mismatch.
"""
import json
import math
import sys
import warnings

import numpy as np


def fail(msg):
    print("FAIL: " + msg, flush=True)
    sys.exit(1)


def check(cond, msg):
    if not cond:
        fail(msg)


def as_str(v):
    if isinstance(v, bytes):
        return v.decode()
    if isinstance(v, np.ndarray) and v.shape == ():
        return as_str(v[()])
    return str(v)


def cell_from_box(box):
    a, b, c = (np.asarray(v, dtype=np.float64) for v in box)
    la, lb, lc = np.linalg.norm(a), np.linalg.norm(b), np.linalg.norm(c)
    ang = lambda u, v: math.degrees(math.acos(np.clip(np.dot(u, v) / (np.linalg.norm(u) * np.linalg.norm(v)), -1, 1)))
    return np.array([la, lb, lc]), np.array([ang(b, c), ang(a, c), ang(a, b)])


def main():
    exp = json.load(open(sys.argv[1]))
    path = exp["trajectory"]
    nf, na = exp["frames"], exp["atoms"]
    pos = np.fromfile(exp["positions_file"], dtype="<f4").reshape(nf, na, 3)
    vel = np.fromfile(exp["velocities_file"], dtype="<f4").reshape(nf, na, 3) if exp.get("velocities_file") else None
    frc = np.fromfile(exp["forces_file"], dtype="<f4").reshape(nf, na, 3) if exp.get("forces_file") else None
    steps = np.array(exp["steps"], dtype=np.int64)
    times = np.array(exp["times_ps"], dtype=np.float64)
    boxes = np.array(exp["boxes_nm"], dtype=np.float64) if exp.get("boxes_nm") is not None else None
    readers = exp.get("readers", ["h5py", "mdtraj", "mdanalysis"])

    if "h5py" in readers:
        import h5py
        with h5py.File(path, "r") as f:
            attrs = f.attrs
            check(as_str(attrs["conventions"]) == "Pande", "conventions")
            check(as_str(attrs["conventionVersion"]) == "1.1", "conventionVersion")
            check(as_str(attrs["program"]) == "mdsim", "program")
            for k in ("programVersion", "title", "application"):
                check(k in attrs, "root attribute " + k)
            check(int(attrs["complete"]) == exp["complete"], "complete=%s, expected %s" % (attrs["complete"], exp["complete"]))
            check(list(f["h5md"].attrs["version"]) == [1, 1], "h5md version")
            check("name" in f["h5md/author"].attrs and "name" in f["h5md/creator"].attrs, "h5md author/creator")
            check(as_str(f["h5md/creator"].attrs["version"]) == as_str(attrs["programVersion"]), "creator version")
            p = f["particles/all/position/value"]
            check(p.shape == (nf, na, 3), "position shape %s, expected %s" % (p.shape, (nf, na, 3)))
            check(p.dtype == np.float32, "position dtype %s" % p.dtype)
            check(as_str(p.attrs["unit"]) == "nm" and as_str(p.attrs["units"]) == "nanometers", "position units")
            check(np.array_equal(p[...], pos), "position values differ (max |d| %g)" % (np.abs(p[...] - pos).max() if nf else 0))
            check(np.array_equal(f["particles/all/position/step"][...], steps), "steps")
            check(np.array_equal(f["particles/all/position/time"][...], times), "times")
            check(as_str(f["particles/all/position/time"].attrs["unit"]) == "ps", "time unit")
            addr = lambda name: h5py.h5o.get_info(f[name].id).addr
            check(addr("coordinates") == addr("particles/all/position/value"), "/coordinates is not a hard link")
            check(addr("time") == addr("particles/all/position/time"), "/time is not a hard link")
            box = f["particles/all/box"]
            check(int(box.attrs["dimension"]) == 3, "box dimension")
            bnd = [as_str(x) for x in box.attrs["boundary"]]
            if boxes is not None:
                check(bnd == ["periodic"] * 3, "boundary %s" % bnd)
                e = box["edges/value"]
                check(e.shape == (nf, 3, 3), "edges shape %s" % (e.shape,))
                check(np.array_equal(e[...], boxes), "box edges")
                check(addr("particles/all/box/edges/step") == addr("particles/all/position/step"), "edges/step link")
                lengths, angles = f["cell_lengths"][...], f["cell_angles"][...]
                check(as_str(f["cell_lengths"].attrs["units"]) == "nanometers", "cell_lengths units")
                check(as_str(f["cell_angles"].attrs["units"]) == "degrees", "cell_angles units")
                for k in range(nf):
                    l, a = cell_from_box(boxes[k])
                    check(np.allclose(lengths[k], l, rtol=1e-6) and np.allclose(angles[k], a, rtol=1e-6, atol=1e-4),
                          "cell of frame %d: %s %s vs %s %s" % (k, lengths[k], angles[k], l, a))
            else:
                check(bnd == ["none"] * 3, "boundary %s" % bnd)
                check("edges" not in box and "cell_lengths" not in f, "non-periodic file has a box")
            if vel is not None:
                v = f["particles/all/velocity/value"]
                check(np.array_equal(v[...], vel) and as_str(v.attrs["unit"]) == "nm ps-1", "velocities")
                check(addr("velocities") == addr("particles/all/velocity/value"), "/velocities link")
            else:
                check("velocity" not in f["particles/all"], "unexpected velocity group")
            if frc is not None:
                v = f["particles/all/force/value"]
                check(np.array_equal(v[...], frc) and as_str(v.attrs["unit"]) == "kJ mol-1 nm-1", "forces")
            else:
                check("force" not in f["particles/all"], "unexpected force group")
            topo = json.loads(f["topology"][0].decode())
            n_topo = sum(len(r["atoms"]) for c in topo["chains"] for r in c["residues"])
            check(n_topo == na, "topology JSON has %d atoms" % n_topo)
        print("h5py: ok (%d frames, %d atoms)" % (nf, na), flush=True)

    if "mdtraj" in readers:
        import mdtraj
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            t = mdtraj.load(path)
        check(t.n_frames == nf and t.n_atoms == na, "mdtraj shape %d x %d" % (t.n_frames, t.n_atoms))
        check(np.array_equal(t.xyz, pos), "mdtraj coordinates")
        check(np.allclose(t.time, times), "mdtraj time")
        if boxes is not None:
            for k in range(nf):
                l, a = cell_from_box(boxes[k])
                check(np.allclose(t.unitcell_lengths[k], l, rtol=1e-6), "mdtraj cell lengths frame %d" % k)
                check(np.allclose(t.unitcell_angles[k], a, rtol=1e-6, atol=1e-4), "mdtraj cell angles frame %d" % k)
                check(np.allclose(t.unitcell_vectors[k], boxes[k], atol=1e-5), "mdtraj box vectors frame %d: %s vs %s"
                      % (k, t.unitcell_vectors[k], boxes[k]))
        else:
            check(t.unitcell_lengths is None, "mdtraj found a cell in a non-periodic file")
        top = t.topology
        check([a.name for a in top.atoms] == exp["atom_names"], "mdtraj atom names")
        check([a.residue.name for a in top.atoms] == exp["residue_names"], "mdtraj residue names")
        check([a.residue.resSeq for a in top.atoms] == exp["res_seq"], "mdtraj resSeq")
        check([a.element.symbol for a in top.atoms] == exp["elements"], "mdtraj elements")
        check(top.n_chains == exp["chains"], "mdtraj chains %d vs %d" % (top.n_chains, exp["chains"]))
        check(top.n_residues == exp["residues"], "mdtraj residues %d vs %d" % (top.n_residues, exp["residues"]))
        bonds = sorted(tuple(sorted((b[0].index, b[1].index))) for b in top.bonds)
        check(bonds == sorted(tuple(sorted(b)) for b in exp["bonds"]), "mdtraj bonds (%d vs %d)" % (len(bonds), len(exp["bonds"])))
        if "protein_atoms" in exp:
            check(len(top.select("protein")) == exp["protein_atoms"], "mdtraj protein selection %d atoms, expected %d"
                  % (len(top.select("protein")), exp["protein_atoms"]))
        print("mdtraj: ok (%d frames, %d atoms, %d bonds)" % (t.n_frames, t.n_atoms, len(bonds)), flush=True)

    if "mdanalysis" in readers:
        import MDAnalysis
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            u = MDAnalysis.Universe(exp["pdb"], path, format="H5MD")
        check(u.trajectory.n_frames == nf, "MDAnalysis frames %d" % u.trajectory.n_frames)
        check(len(u.atoms) == na, "MDAnalysis atoms %d" % len(u.atoms))
        for k, ts in enumerate(u.trajectory):
            check(np.allclose(ts.positions, pos[k] * 10.0, rtol=1e-6, atol=1e-5),
                  "MDAnalysis positions frame %d (max |d| %g A)" % (k, np.abs(ts.positions - pos[k] * 10).max()))
            check(abs(ts.time - times[k]) < 1e-9 * max(1.0, abs(times[k])), "MDAnalysis time frame %d" % k)
            check(int(ts.data["step"]) == steps[k], "MDAnalysis step frame %d" % k)
            if boxes is not None:
                l, a = cell_from_box(boxes[k])
                check(ts.dimensions is not None, "MDAnalysis frame %d has no box" % k)
                check(np.allclose(ts.dimensions[:3], l * 10.0, rtol=1e-5) and np.allclose(ts.dimensions[3:], a, atol=1e-3),
                      "MDAnalysis box frame %d: %s vs %s %s" % (k, ts.dimensions, l * 10, a))
            else:
                check(ts.dimensions is None, "MDAnalysis found a box in a non-periodic file")
            if vel is not None:
                check(np.allclose(ts.velocities, vel[k] * 10.0, rtol=1e-6, atol=1e-5), "MDAnalysis velocities %d" % k)
            if frc is not None:
                check(np.allclose(ts.forces, frc[k] / 10.0, rtol=1e-6, atol=1e-5), "MDAnalysis forces %d" % k)
        print("MDAnalysis: ok (%d frames, %d atoms)" % (nf, na), flush=True)


if __name__ == "__main__":
    main()
