"""mdsim.load_trajectory: an mdsim HDF5 trajectory (H5MD 1.1 + MDTraj layout, io/trajectory_h5.hpp) as numpy
arrays, read with h5py."""
import os
from dataclasses import dataclass, field
from typing import List, Optional

import numpy as np

from ._mdsim import InputError
from .topology import Topology, _require, _sorted_indices

_ALL = "particles/all"


@dataclass(eq=False)
class Trajectory:
    """The frames of an mdsim trajectory file (mdsim.load_trajectory). Units are mdsim's (nm, ps, kJ/mol).

    - ``positions``: (n_frames, n_atoms, 3) float32, nm (as written; the frames are imaged: molecules whole)
    - ``velocities``: (n_frames, n_atoms, 3) float32, nm/ps, or None when not recorded
    - ``forces``: (n_frames, n_atoms, 3) float32, kJ/mol/nm, or None when not recorded
    - ``steps``: (n_frames,) int64, the time step of each frame; ``time_ps``: (n_frames,) float64, ps
    - ``box_nm``: (n_frames, 3, 3) float64, nm, rows = box vectors a, b, c (OpenMM's reduced form), or None for a
      non-periodic system
    - ``topology``: an mdsim.Topology of the recorded atoms (the file's /topology: names, elements, residues,
      chains, bonds; no serials, insertion codes or box)
    - ``atom_indices``: (n_atoms,) int64, each column's atom index in the simulation's topology, when known: the
      file records every atom (selection "all"); None for a file written with another selection (its atoms'
      original indices are not recorded; ``selection`` holds the text that chose them)
    - ``selection``: the trajectory's atom selection text; ``complete``: True when the run closed the file
      cleanly (False while it is written, or after a crash: the frames then are those of the last flush)
    - ``seed``: the run's random seed, or None; ``stages``: a staged run's stages as (name, first_step,
      last_step) (a stage's frames have first_step < step <= last_step), else []; ``path``: the file
    """
    positions: np.ndarray
    steps: np.ndarray
    time_ps: np.ndarray
    box_nm: Optional[np.ndarray]
    velocities: Optional[np.ndarray]
    forces: Optional[np.ndarray]
    topology: Topology
    atom_indices: Optional[np.ndarray]
    selection: str
    complete: bool
    seed: Optional[int] = None
    stages: List[tuple] = field(default_factory=list)
    path: str = ""

    @property
    def n_frames(self):
        """The number of frames."""
        return self.positions.shape[0]

    @property
    def n_atoms(self):
        """The number of atoms in each frame."""
        return self.positions.shape[1]

    def __len__(self):
        return self.n_frames

    def __repr__(self):
        extra = "".join(f", {name}" for name in ("velocities", "forces") if getattr(self, name) is not None)
        return (f"<mdsim.Trajectory {os.path.basename(self.path)!r}: {self.n_frames} frames, {self.n_atoms} atoms"
                f"{extra}{'' if self.complete else ', incomplete'}>")

    def to_mdtraj(self, topology=None):
        """An mdtraj.Trajectory of these frames: xyz (nm), time (ps), unit cell vectors (nm). ``topology``: an
        mdsim.Topology or mdtraj.Topology of exactly these atoms (default: the file's own). Needs mdtraj."""
        md = _require("mdtraj", "Trajectory.to_mdtraj()")
        topology = self.topology if topology is None else topology
        if isinstance(topology, Topology):
            topology = topology.to_mdtraj()
        if topology.n_atoms != self.n_atoms:
            raise ValueError(f"to_mdtraj(topology): the topology has {topology.n_atoms} atoms, the frames {self.n_atoms}")
        traj = md.Trajectory(self.positions, topology, time=self.time_ps)
        if self.box_nm is not None:
            traj.unitcell_vectors = self.box_nm.astype(np.float32)
        return traj


def load_trajectory(path, atoms=None, frames=None):
    """Read an mdsim HDF5 trajectory (what TrajectoryReporter and ``mdsim run`` write) into a Trajectory of numpy
    arrays (positions nm, velocities nm/ps, forces kJ/mol/nm, time ps, box nm; see Trajectory).

    ``atoms``: the columns to read, as sorted unique indices into the file's atoms or a boolean mask (default: all);
    ``frames``: a slice (``slice(0, None, 10)``: every 10th frame) or sorted unique frame indices (default: all).
    A file still being written reads with ``complete`` False: by another process (or left by a crash), as far as
    its last flush; by a reporter of this process (between step() calls), the frames its writer thread has written. Raises
    FileNotFoundError for a missing file, mdsim.InputError for a file that is not an mdsim/H5MD trajectory, and
    ImportError when h5py is not installed."""
    h5py = _require("h5py", "mdsim.load_trajectory()")
    path = os.fspath(path)
    if not os.path.exists(path):
        raise FileNotFoundError(f"{path}: no such trajectory file")
    with _open(h5py, path) as f:
        if f"{_ALL}/position/value" not in f or f"{_ALL}/position/step" not in f:
            raise InputError(f"{path}: not an mdsim trajectory (no {_ALL}/position/value and step: an H5MD file "
                             "as TrajectoryReporter and `mdsim run` write)")
        n_file_atoms = f[f"{_ALL}/position/value"].shape[1]
        columns = None if atoms is None else _sorted_indices(atoms, n_file_atoms, "load_trajectory(atoms)")
        rows = _frame_rows(frames, _frame_count(f))
        per_atom = lambda name: _read_per_atom(f, f"{_ALL}/{name}/value", rows, columns)
        box = f[f"{_ALL}/box/edges/value"][rows].astype(np.float64) if f"{_ALL}/box/edges/value" in f else None
        attrs = f.attrs
        selection = _text(attrs.get("mdsim_selection", "all"))
        topology = Topology._from_mdtraj_json(_text(f["topology"][0])) if "topology" in f else None
        if topology is not None and columns is not None:
            topology = topology.subset(columns)
        indices = None
        if selection == "all":
            indices = np.arange(n_file_atoms, dtype=np.int64) if columns is None else columns
        return Trajectory(
            positions=per_atom("position"), steps=f[f"{_ALL}/position/step"][rows].astype(np.int64),
            time_ps=f[f"{_ALL}/position/time"][rows].astype(np.float64), box_nm=box,
            velocities=per_atom("velocity") if f"{_ALL}/velocity/value" in f else None,
            forces=per_atom("force") if f"{_ALL}/force/value" in f else None,
            topology=topology, atom_indices=indices, selection=selection,
            complete=int(attrs.get("complete", 0)) == 1,
            seed=int(attrs["seed"]) if "seed" in attrs else None, stages=_stages(attrs), path=path)


def _open(h5py, path):
    """The file for reading without HDF5's file locks, as the writer opens it: a trajectory a reporter of this process
    still writes (between step() calls) then opens too (HDF5 refuses mismatched locking flags), with its frames so far."""
    try:
        return h5py.File(path, "r", locking=False)
    except (TypeError, ValueError):  # an h5py or HDF5 without the locking option
        return h5py.File(path, "r")


def _frame_count(f):
    """Frames every per-frame dataset holds (a file this process is writing may have extended some for the next)."""
    names = [f"{_ALL}/{group}/{name}" for group in ("position", "velocity", "force") for name in ("value", "step", "time")]
    return min(f[name].shape[0] for name in names + [f"{_ALL}/box/edges/value"] if name in f)


def _frame_rows(frames, n):
    """The frames argument (None, a slice with a positive step, or sorted unique frame indices) as what h5py indexes
    the first axis with, within the n frames."""
    if frames is None:
        frames = slice(None)
    if isinstance(frames, slice):
        if frames.step is not None and frames.step <= 0:
            raise ValueError(f"load_trajectory(frames): a slice's step must be positive, got {frames.step}")
        r = range(n)[frames]
        return slice(r.start, r.stop, r.step)
    return _sorted_indices(frames, n, "load_trajectory(frames)")


def _read_per_atom(f, name, rows, columns):
    """A frames x atoms x 3 dataset, only the rows and columns asked for (h5py takes one index list per read)."""
    data = f[name]
    if columns is None:
        return data[rows]
    if isinstance(rows, slice):
        return data[rows, columns, :]
    return data[rows][:, columns, :]


def _text(value):
    """An HDF5 string (attribute or dataset element) as str."""
    if isinstance(value, np.ndarray):
        value = value.reshape(-1)[0] if value.size else ""
    return value.decode() if isinstance(value, bytes) else str(value)


def _stages(attrs):
    """A staged run's mdsim_stage_* attributes as (name, first_step, last_step) tuples."""
    if "mdsim_stage_names" not in attrs:
        return []
    names = [_text(n) for n in attrs["mdsim_stage_names"]]
    return [(n, int(a), int(b)) for n, a, b in zip(names, attrs["mdsim_stage_first_step"], attrs["mdsim_stage_last_step"])]
