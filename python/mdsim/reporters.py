"""Reporters: what a Simulation writes while it runs, as OpenMM's ``simulation.reporters``.

    sim.reporters.append(mdsim.TrajectoryReporter("traj.h5", interval=1000))   # HDF5 (H5MD + MDTraj layout)
    sim.reporters.append(mdsim.StateReporter("state.csv", interval=1000))      # the state log (CSV)
    sim.reporters.append(mdsim.StateReporter(print, interval=1000))            # or a callable: f(state dict)
    sim.reporters.append(mdsim.CheckpointReporter("checkpoint.h5", interval=10000))
    sim.step(5000); sim.run(time="1 ns")                                       # both report

A Simulation built from a YAML config starts with the reporters of its ``output:`` section (marked ``from_config``:
they write as ``mdsim run`` does, a fresh simulation's first run writing them anew). A reporter made in Python
never overwrites: a file that exists and that this simulation has not written is an error unless the reporter was
made with ``append=True``, which continues it after the current step as ``mdsim run --resume`` does (frames and
lines after that step are dropped; load the checkpoint first). A checkpoint holds one state and is rewritten at
each interval. The engine writes one trajectory, one state log and one checkpoint at a time; any number of
callable StateReporters may be added.
"""
import operator
import os

__all__ = ["TrajectoryReporter", "StateReporter", "CheckpointReporter"]


def _interval(value, what, zero_ok=False):
    """A reporting interval in steps: a whole number >= 1 (>= 0 with zero_ok)."""
    if isinstance(value, bool):
        raise TypeError(f"{what}: interval must be a whole number of steps (int), got {value!r}")
    try:
        n = operator.index(value)
    except TypeError:
        raise TypeError(f"{what}: interval must be a whole number of steps (int), got {value!r}") from None
    if n < (0 if zero_ok else 1) or n > 2**31 - 1:
        raise ValueError(f"{what}: interval must be from {0 if zero_ok else 1} to 2147483647 steps, got {n}")
    return n


def _path(value, what):
    """An output path, absolute (relative ones resolve against the current folder now)."""
    if not isinstance(value, (str, os.PathLike)):
        raise TypeError(f"{what}: file must be a path (str or os.PathLike), got {value!r}")
    path = os.fspath(value)
    if not path or path.endswith(os.sep):
        raise ValueError(f"{what}: file must name a file, got {path!r}")
    return os.path.abspath(path)


class _Reporter:
    from_config = False  # made from the config's output: section

    def _settings(self):
        return tuple(sorted(vars(self).items()))

    def __repr__(self):
        args = ", ".join(f"{k}={v!r}" for k, v in vars(self).items())
        return f"mdsim.{type(self).__name__}({args})"


class TrajectoryReporter(_Reporter):
    """Frames every ``interval`` steps into an HDF5 file (H5MD 1.1 + MDTraj layout; positions in nm, velocities in
    nm/ps and forces in kJ/mol/nm when asked) that MDTraj, MDAnalysis and h5py read as they are
    (mdsim.load_trajectory too). ``atoms``: an atom selection ("all", "protein", "not water", "0-21,30").
    ``append=True`` continues an existing file after the current step (as ``mdsim run --resume``)."""

    def __init__(self, file, interval, *, velocities=False, forces=False, atoms="all", append=False):
        self.file = _path(file, "TrajectoryReporter")
        self.interval = _interval(interval, "TrajectoryReporter")
        self.velocities = bool(velocities)
        self.forces = bool(forces)
        if not isinstance(atoms, str):
            raise TypeError(f"TrajectoryReporter: atoms must be a selection string (\"all\", \"protein\", "
                            f"\"not water\", \"0-21,30\"), got {atoms!r}")
        self.atoms = atoms
        self.append = bool(append)


class StateReporter(_Reporter):
    """Every ``interval`` steps: a line of the state log (CSV: step, time in ps, energies in kJ/mol, temperature in K,
    volume in nm^3, density, speed) when ``file`` is a path, or a call ``file(state)`` with the dict state() returns
    when ``file`` is a callable. ``append=True`` continues an existing log after the current step."""

    def __init__(self, file, interval, *, append=False):
        self.interval = _interval(interval, "StateReporter")
        if callable(file) and not isinstance(file, (str, os.PathLike)):
            self.file = None
            self.callback = file
        else:
            self.file = _path(file, "StateReporter")
            self.callback = None
        self.append = bool(append)

    def _settings(self):
        return (self.file, self.interval, self.append, id(self.callback))


class CheckpointReporter(_Reporter):
    """The state (positions, velocities, box, step, random stream, barostat) every ``interval`` steps and at the end
    of each step() / run(), written atomically, for load_checkpoint() or ``mdsim run --resume``; interval 0: at the
    end only. The file holds the latest state: an existing one is replaced."""

    def __init__(self, file, interval=0):
        self.file = _path(file, "CheckpointReporter")
        self.interval = _interval(interval, "CheckpointReporter", zero_ok=True)
        self.append = False


def from_outputs(outputs):
    """The reporters of a config's output: section (Simulation._outputs())."""
    reporters = []
    if outputs["trajectory"]:
        t = outputs["trajectory"]
        reporters.append(TrajectoryReporter(t["file"], t["interval"], velocities=t["velocities"],
                                            forces=t["forces"], atoms=t["atoms"]))
    if outputs["state"]:
        reporters.append(StateReporter(outputs["state"]["file"], outputs["state"]["interval"]))
    if outputs["checkpoint"]:
        c = outputs["checkpoint"]
        reporters.append(CheckpointReporter(c["file"], c["interval"]))
    for r in reporters:
        r.from_config = True
    return reporters


def _key(reporters):
    return [(id(r), type(r), r._settings()) for r in reporters]


class _Slot:
    """What a Simulation keeps for its reporters: the list, what was last handed to the engine, the files written."""

    def __init__(self, reporters, outputs):
        self.reporters = reporters
        self.outputs = outputs  # the config's output section (final structure and progress stay the config's)
        self.applied = _key(reporters)  # the config's outputs are in force from the start
        self.written = set()


def slot(sim):
    """The simulation's reporter slot, made from its config's outputs at first use."""
    s = sim._reporters
    if s is None:
        outputs = sim._outputs()
        s = _Slot(from_outputs(outputs), outputs)
        sim._reporters = s
    return s


def _check(reporter, written):
    """A Python-made reporter's file: its folder exists; an existing file needs append=True (or to be this
    simulation's own)."""
    folder = os.path.dirname(reporter.file)
    name = type(reporter).__name__
    if not os.path.isdir(folder):
        raise FileNotFoundError(f"{name}: the folder {folder} does not exist: create it or choose another file")
    if (reporter.from_config or reporter.append or isinstance(reporter, CheckpointReporter) or
            reporter.file in written or not os.path.exists(reporter.file)):
        return
    raise FileExistsError(f"{name}: {reporter.file} exists and this simulation did not write it: "
                          f"{name}(..., append=True) continues it after the current step (as `mdsim run --resume`), "
                          f"or remove it or choose another name")


def _outputs(s):
    """The engine's output section and callables for the reporter list (ValueError for two of a kind)."""
    # The reporters' paths are absolute; the folder the engine creates at a run's start is the config's output
    # folder when its final structure goes there, else the current one (which exists).
    folder = s.outputs["directory"] if s.outputs["final_pdb"] else os.getcwd()
    outputs = {"directory": folder, "trajectory": None, "state": None, "checkpoint": None,
               "final_pdb": s.outputs["final_pdb"], "progress": s.outputs["progress"]}
    observers, kinds = [], {}
    for r in s.reporters:
        if not isinstance(r, _Reporter):
            raise TypeError(f"sim.reporters holds {r!r}: use mdsim.TrajectoryReporter, StateReporter or "
                            "CheckpointReporter")
        if isinstance(r, StateReporter) and r.callback is not None:
            observers.append((r.interval, r.callback))
            continue
        kind = {TrajectoryReporter: "trajectory", StateReporter: "state", CheckpointReporter: "checkpoint"}[type(r)]
        if kind in kinds:
            raise ValueError(f"sim.reporters holds two {type(r).__name__}s with files ({kinds[kind].file} and "
                             f"{r.file}): mdsim writes one {kind} file at a time")
        kinds[kind] = r
        _check(r, s.written)
        entry = {"file": r.file, "interval": r.interval}
        if kind == "trajectory":
            entry.update(velocities=r.velocities, forces=r.forces, atoms=r.atoms)
        outputs[kind] = entry
    return outputs, observers


def apply(sim):
    """Hands the reporter list to the engine when it changed since last time (before step() and run())."""
    s = sim._reporters
    if s is None:
        return None  # never looked at: the config's outputs as they are
    key = _key(s.reporters)
    if key == s.applied:
        return s
    outputs, observers = _outputs(s)
    continue_existing = any(r.append for r in s.reporters if not r.from_config)
    sim._set_reporting(outputs, continue_existing, observers)
    s.applied = key
    return s


def record_written(s):
    """After a step() / run(): the files the reporters wrote are this simulation's own (appended to later)."""
    if s is not None:
        s.written.update(r.file for r in s.reporters if getattr(r, "file", None))
