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

from ._mdsim import ConfigError, DeviceArray, Simulation, SimulationError, __version__
from .topology import Topology

__all__ = ["Simulation", "ConfigError", "SimulationError", "DeviceArray", "Topology", "__version__"]


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


def _from_config(config, base_dir=".", *, platform=None, seed=None):
    """A simulation from a config given as a dict: the same keys, values and unit strings as the YAML config
    (``{"system": {"pdb": "x.pdb"}, "integrator": {"timestep": "2 fs"}, ...}``). Relative paths resolve against
    base_dir. platform ("cpu" | "cuda" | "auto") and seed (int >= 1) override the config's, as for Simulation()."""
    if not isinstance(config, dict):
        raise TypeError(f"from_config(config): config must be a dict of the YAML config's keys, got "
                        f"{type(config).__name__}; Simulation(path) takes a file, from_yaml(text) text")
    # JSON is YAML: the dict goes through the YAML reader, its checks and messages (which name the key).
    text = json.dumps(config, indent=1, default=_json_value, allow_nan=False)
    return Simulation.from_yaml(text, os.fspath(base_dir), platform=platform, seed=seed, _source="<config>")


Simulation.from_config = staticmethod(_from_config)


def _from_openmm(system, topology, positions, integrator=None, *, platform=None, seed=None, config=None,
                 base_dir="."):
    """A simulation of an OpenMM System: ``system`` (openmm.System), ``topology`` (openmm.app.Topology) and
    ``positions`` (a Quantity, or an N x 3 array in nm) as OpenMM's Simulation takes them.

    The System is serialised (openmm.XmlSerializer) and read as a config's ``system: {topology: system.xml,
    coordinates: structure.pdb}`` (docs/config.md, "A serialized OpenMM System"), so its forces, constraints,
    nonbonded settings and barostat hold; the positions are then set exactly as given (nm, not rounded by the PDB;
    not constrained, as Context.setPositions). ``integrator``: a LangevinMiddleIntegrator or LangevinIntegrator
    (both run as mdsim's langevin_middle) or a VerletIntegrator: its temperature (K), friction (1/ps), step size
    (ps), constraint tolerance and random seed (when not 0) become the config's ``integrator:``; None: the config's
    defaults. ``config``: further top-level keys as a dict (``run``, ``output``, ``minimize``, ``platform``, ...;
    ``output.directory`` relative to base_dir). platform= and seed= as for Simulation()."""
    import tempfile
    import numpy as np
    import openmm
    import openmm.app as app
    from openmm import unit
    settings = dict(config or {})
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
        sim = _from_config(settings, base_dir, platform=platform, seed=seed)  # reads both files now
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

for _cls in (Simulation, ConfigError, SimulationError, DeviceArray):
    _cls.__module__ = "mdsim"
