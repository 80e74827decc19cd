"""mdsim: GPU-accelerated molecular dynamics (units: nm, ps, kJ/mol, K, amu, e).

    sim = mdsim.Simulation("config.yaml")      # the config `mdsim run` takes
    sim.minimize(); sim.step(1000); sim.state()
    x = sim.positions                          # the engine's own memory: numpy (CPU) or a CUDA device array

See docs/python.md.
"""
from ._mdsim import ConfigError, DeviceArray, Simulation, SimulationError, __version__

__all__ = ["Simulation", "ConfigError", "SimulationError", "DeviceArray", "Topology", "__version__"]


class Topology:
    """Per-atom topology in the System's atom order: atom_names, elements, residue_names, chain_ids (lists),
    residue_numbers and residue_index (numpy int64 arrays)."""

    def __init__(self, fields):
        self.atom_names = fields["atom_names"]
        self.elements = fields["elements"]
        self.residue_names = fields["residue_names"]
        self.residue_numbers = fields["residue_numbers"]
        self.residue_index = fields["residue_index"]
        self.chain_ids = fields["chain_ids"]

    @property
    def n_atoms(self):
        return len(self.atom_names)

    def __repr__(self):
        return f"<mdsim.Topology: {self.n_atoms} atoms, {len(set(self.residue_index.tolist()))} residues>"


def _topology(self):
    return Topology(self._topology())


Simulation.topology = property(_topology, doc="The structure's atoms, residues and chains (a Topology)")


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

for _cls in (Simulation, ConfigError, SimulationError, DeviceArray):
    _cls.__module__ = "mdsim"
