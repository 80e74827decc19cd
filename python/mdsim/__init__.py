"""mdsim: GPU-accelerated molecular dynamics (units: nm, ps, kJ/mol, K, amu, e).

    sim = mdsim.Simulation("config.yaml")      # the config `mdsim run` takes; platform="cpu", seed=1 optional
    sim = mdsim.Simulation.from_config({...})  # or the config as a dict; from_openmm(system, topology, positions)
    sim.run(time="10 ps")                      # with the config's reporters; a later run() appends
    sim.minimize(); sim.step(1000); sim.state()
    x = sim.positions                          # the engine's own memory: numpy (CPU) or a CUDA device array

See docs/python.md.
"""
import json
import os

from ._mdsim import ConfigError, DeviceArray, Ensemble, InputError, Simulation, SimulationError, __version__
from ._mdsim import _set_bundled_data_root

# A pip-installed package carries the bundled force fields and data in share/mdsim (setup.py): found there first, so
# the source checkout it was built from may move or go.
_SHARE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "share", "mdsim")
if os.path.isdir(_SHARE):
    _set_bundled_data_root(_SHARE)
from . import reporters as _reporters
from .reporters import CheckpointReporter, StateReporter, TrajectoryReporter
from .topology import Topology
from .trajectory import Trajectory, load_trajectory

__all__ = ["Simulation", "Ensemble", "InputError", "ConfigError", "SimulationError", "DeviceArray", "Topology",
           "TrajectoryReporter", "StateReporter", "CheckpointReporter", "Trajectory", "load_trajectory", "__version__"]


class _StreamHandle:
    """The engine's stream through the CUDA stream protocol (__cuda_stream__)."""

    def __init__(self, handle):
        self.handle = handle

    def __cuda_stream__(self):
        return (0, self.handle)


def _cupy_stream(self):
    """The engine's stream as a cupy.cuda.Stream: work launched within `with sim.cupy_stream():` is ordered with
    the engine's steps without synchronising."""
    import cupy
    if hasattr(cupy.cuda.Stream, "from_external"):
        return cupy.cuda.Stream.from_external(_StreamHandle(self.stream))
    return cupy.cuda.ExternalStream(self.stream)


def _torch_stream(self):
    """The engine's stream as a torch.cuda.ExternalStream (use it with torch.cuda.stream(...))."""
    import torch
    return torch.cuda.ExternalStream(self.stream)


Simulation.cupy_stream = _cupy_stream
Simulation.torch_stream = _torch_stream


def _json_value(value):
    """Values json cannot write itself: paths as strings, numpy scalars and arrays as numbers and lists."""
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    if hasattr(value, "tolist"):
        return value.tolist()
    raise TypeError(f"from_config: {value!r} ({type(value).__name__}) is not a config value: use str, int, float, "
                    "bool, None, lists and dicts")


def _config_text(config, cls):
    """A config dict as text the YAML reader takes (JSON is YAML: the dict goes through the reader, its checks and
    messages, which name the key)."""
    if not isinstance(config, dict):
        raise TypeError(f"from_config(config): config must be a dict of the YAML config's keys, got "
                        f"{type(config).__name__}; {cls}(path) takes a file, from_yaml(text) text")
    return json.dumps(config, indent=1, default=_json_value, allow_nan=False)


def _from_config(config, base_dir=".", *, platform=None, seed=None, quiet=False):
    """A simulation from a config given as a dict: the same keys, values and unit strings as the YAML config
    (``{"system": {"pdb": "x.pdb"}, "integrator": {"timestep": "2 fs"}, ...}``). Relative paths resolve against
    base_dir. platform ("cpu" | "cuda" | "auto") and seed (int >= 1) override the config's, as for Simulation()."""
    return Simulation.from_yaml(_config_text(config, "Simulation"), os.fspath(base_dir), platform=platform, seed=seed,
                                quiet=quiet, _source="<config>")


def _ensemble_from_config(config, base_dir=".", *, platform=None, seed=None, quiet=False):
    """An ensemble from a config dict with a "replicas" key, as Simulation.from_config takes one."""
    return Ensemble.from_yaml(_config_text(config, "Ensemble"), os.fspath(base_dir), platform=platform, seed=seed,
                              quiet=quiet, _source="<config>")


Simulation.from_config = staticmethod(_from_config)
Ensemble.from_config = staticmethod(_ensemble_from_config)


def _from_openmm(system, topology, positions, integrator=None, *, platform=None, seed=None, quiet=False,
                 config=None, base_dir="."):
    """A simulation of an OpenMM System: ``system`` (openmm.System), ``topology`` (openmm.app.Topology) and
    ``positions`` (a Quantity, or an N x 3 array in nm) as OpenMM's Simulation takes them.

    The System is serialised (openmm.XmlSerializer) and read as a config's ``system: {topology: system.xml,
    coordinates: structure.pdb}`` (docs/config.md, "A serialized OpenMM System"), so its forces, constraints,
    nonbonded settings and barostat hold; the positions are then set exactly as given (nm, not rounded by the PDB;
    not constrained, as Context.setPositions). ``integrator``: a LangevinMiddleIntegrator or LangevinIntegrator
    (both run as mdsim's langevin_middle) or a VerletIntegrator: its temperature (K), friction (1/ps), step size
    (ps), constraint tolerance and random seed (when not 0) become the config's ``integrator:``; None: the config's
    defaults. ``config``: further top-level keys as a dict (``run``, ``output``, ``minimize``, ``platform``, ...;
    ``output.directory`` relative to base_dir; without ``output`` no reporter is attached: sim.reporters).
    platform=, seed= and quiet= as for Simulation()."""
    import tempfile
    import numpy as np
    import openmm
    import openmm.app as app
    from openmm import unit
    settings = dict(config or {})
    settings.setdefault("output", dict(_NO_OUTPUTS))  # reporters from Python (sim.reporters), as OpenMM's
    if "system" in settings:
        raise ValueError("from_openmm: config must not hold 'system' (the System given is the system)")
    if integrator is not None:
        settings["integrator"] = {**_integrator_keys(integrator, openmm, unit), **settings.get("integrator", {})}
    if unit.is_quantity(positions):
        positions = positions.value_in_unit(unit.nanometer)
    positions_nm = np.asarray([[float(c) for c in p] for p in positions], dtype=np.float64)
    with tempfile.TemporaryDirectory(prefix="mdsim_openmm_") as folder:
        xml = os.path.join(folder, "system.xml")
        with open(xml, "w") as f:
            f.write(openmm.XmlSerializer.serialize(system))
        # PDB's fixed columns hold 99,999 atoms; PDBx/mmCIF any number.
        large = topology.getNumAtoms() > 99999
        structure = os.path.join(folder, "structure.cif" if large else "structure.pdb")
        with open(structure, "w") as f:
            (app.PDBxFile if large else app.PDBFile).writeFile(topology, positions_nm * unit.nanometer, f,
                                                              keepIds=True)
        settings["system"] = {"topology": xml, "coordinates": structure}
        sim = _from_config(settings, base_dir, platform=platform, seed=seed, quiet=quiet)  # reads both files now
    sim.positions = positions_nm  # exactly as given (the files round to 1e-4 nm)
    return sim


def _integrator_keys(integrator, openmm, unit):
    """The config's integrator keys for an OpenMM integrator (TypeError for one mdsim does not run)."""
    keys = {"timestep": integrator.getStepSize().value_in_unit(unit.picosecond),
            "constraint_tolerance": integrator.getConstraintTolerance()}
    langevin = tuple(getattr(openmm, name) for name in ("LangevinMiddleIntegrator", "LangevinIntegrator")
                     if hasattr(openmm, name))
    if isinstance(integrator, langevin):
        keys["type"] = "langevin_middle"
        keys["temperature"] = integrator.getTemperature().value_in_unit(unit.kelvin)
        keys["friction"] = integrator.getFriction().value_in_unit(unit.picosecond**-1)
        if integrator.getRandomNumberSeed() > 0:
            keys["seed"] = integrator.getRandomNumberSeed()
    elif isinstance(integrator, openmm.VerletIntegrator):
        keys["type"] = "verlet"
    else:
        raise TypeError(f"from_openmm(integrator): mdsim runs LangevinMiddleIntegrator, LangevinIntegrator (as "
                        f"LangevinMiddle) and VerletIntegrator, got {type(integrator).__name__}")
    return keys


Simulation.from_openmm = staticmethod(_from_openmm)

def _reporter_list(self):
    """The reporters that write while step() and run() advance (a list: append, remove, or assign a new one):
    mdsim.TrajectoryReporter, StateReporter (a CSV file or a callable) and CheckpointReporter. A simulation from a
    YAML config starts with its output: section's; one from from_structure / from_openmm with none."""
    return _reporters.slot(self).reporters


def _set_reporter_list(self, value):
    if isinstance(value, (str, bytes)) or not hasattr(value, "__iter__"):
        raise TypeError(f"sim.reporters: expected a list of reporters, got {value!r}")
    _reporters.slot(self).reporters = list(value)


Simulation.reporters = property(_reporter_list, _set_reporter_list)

_engine_step = Simulation.step
_engine_run = Simulation.run


def _step(self, steps):
    """Advance ``steps`` time steps (no minimisation); the reporters write at their intervals. Ctrl-C stops between
    steps (with reporters: at the next restart point, every output whole) and raises KeyboardInterrupt."""
    slot = _reporters.apply(self)
    try:
        _engine_step(self, steps)
    finally:
        _reporters.record_written(slot)


def _run(self, *, steps=None, time=None):
    """Run with every reporter. Without a length: to the config's run.steps (a fresh simulation minimises first
    when the config asks), and at that end nothing more (already_complete=True). ``steps=N`` or ``time="1 ps"``
    (a string with a time unit, a number in ps or an openmm.unit Quantity; a whole number of time steps): that many
    more steps. A later run() continues the outputs after the current step; it never truncates them. Returns the
    run's summary (steps, simulated_ps, wall_s, ns_per_day, seed, outputs)."""
    slot = _reporters.apply(self)
    try:
        return _engine_run(self, steps=steps, time=time)
    finally:
        _reporters.record_written(slot)


Simulation.step = _step
Simulation.run = _run

_SYSTEM_FILES = (".pdb", ".ent", ".cif", ".mmcif", ".pdb.gz", ".ent.gz", ".cif.gz", ".mmcif.gz")
_NO_OUTPUTS = {"trajectory": None, "state": None, "checkpoint": None, "final_pdb": None, "progress": False}


def _from_structure(structure, forcefield=("amber14-all.xml", "amber14/tip3p.xml"), *, integrator=None,
                    barostat=None, minimize=None, platform=None, seed=None, quiet=False, base_dir=".",
                    **system_options):
    """A simulation without a config file, as OpenMM's ``ForceField.createSystem`` + ``Simulation`` build one.

    ``structure``: a PDB or PDBx/mmCIF file with hydrogens, given force-field XML files (``forcefield``: bundled
    names or paths); or a topology file (AMBER ``.prmtop``, GROMACS ``.top``, CHARMM ``.psf``, a serialized OpenMM
    System ``.xml``) with ``coordinates=`` (and ``parameters=`` for a psf), whose own force field holds.
    ``system_options``: the config's ``system:`` keys with its values and unit strings (``nonbonded_method="pme"``,
    ``cutoff="1 nm"``, ``constraints="hbonds"``, ``hydrogen_mass="1.5 amu"``, ...: docs/config.md).
    ``integrator``, ``barostat``, ``minimize``: the config's sections as dicts (``{"timestep": "2 fs",
    "temperature": "300 K", "friction": "1/ps"}``); None: the config's defaults (LangevinMiddle, 300 K, 1/ps,
    2 fs), no barostat, no minimisation at run(). No reporter is attached (sim.reporters is empty). platform=,
    seed=, quiet= as for Simulation()."""
    if not isinstance(structure, (str, os.PathLike)):
        raise TypeError(f"from_structure(structure): expected a path (str or os.PathLike), got {structure!r}")
    path = os.fspath(structure)
    system = dict(system_options)
    if path.lower().endswith(_SYSTEM_FILES):
        if isinstance(forcefield, (str, os.PathLike)):
            forcefield = [forcefield]
        system.update(structure=path, forcefield=[os.fspath(f) for f in forcefield])
    else:
        system["topology"] = path
    config = {"system": system, "output": dict(_NO_OUTPUTS)}
    for key, section in (("integrator", integrator), ("barostat", barostat), ("minimize", minimize)):
        if section is not None:
            if not isinstance(section, dict):
                raise TypeError(f"from_structure({key}): expected a dict of the config's {key}: keys, got {section!r}")
            config[key] = section
    return _from_config(config, base_dir, platform=platform, seed=seed, quiet=quiet)


Simulation.from_structure = staticmethod(_from_structure)

for _cls in (Simulation, Ensemble, InputError, SimulationError, DeviceArray):
    _cls.__module__ = "mdsim"
