# Type stub of the mdsim extension (python/mdsim_module.cpp) with the methods python/mdsim/__init__.py adds to
# Simulation, for editors and type checkers. Units: nm, ps, kJ/mol, K, amu, e.
import os
from typing import Any, Callable, Iterable, Mapping, Optional, Sequence, Union

import numpy as np
import numpy.typing as npt

from .reporters import CheckpointReporter, StateReporter, TrajectoryReporter
from .topology import Topology

__version__: str

PathLike = Union[str, os.PathLike]
# A value with units: a number in mdsim's unit, a string with a unit ("2 fs", "310 K", "1/ps") or an openmm.unit Quantity.
Quantity = Union[float, int, str, Any]
Reporter = Union[TrajectoryReporter, StateReporter, CheckpointReporter]
ForceCallback = Callable[[Any, Any, Optional[np.ndarray]], Any]

class InputError(ValueError):
    """A config or input file that mdsim cannot take, with file:line:column."""

ConfigError = InputError

class SimulationError(RuntimeError):
    """A failure while the simulation runs (an unstable step, a device error)."""

class DeviceArray:
    """A CUDA device array of the engine's own memory (N x 3 float64; K x N x 3 for an Ensemble's batch) for CuPy,
    Numba, PyTorch (CUDA array interface v3, DLPack)."""
    @property
    def __cuda_array_interface__(self) -> dict: ...
    def __dlpack__(self, *, stream: Optional[int] = None, **kwargs: Any) -> Any: ...
    def __dlpack_device__(self) -> tuple: ...
    @property
    def shape(self) -> tuple: ...
    @property
    def device(self) -> int: ...

StateArray = Union[npt.NDArray[np.float64], DeviceArray]

class Simulation:
    """One simulation: Simulation(path), from_structure, from_config, from_yaml or from_openmm; then minimize(),
    step(n), run(steps=/time=), state(), the positions / velocities / forces arrays, reporters and checkpoints."""
    def __init__(self, config: PathLike, *, platform: Optional[str] = None, seed: Optional[int] = None,
                 quiet: bool = False) -> None: ...
    @staticmethod
    def from_yaml(text: str, base_dir: PathLike = ".", *, platform: Optional[str] = None, seed: Optional[int] = None,
                  quiet: bool = False) -> "Simulation": ...
    @staticmethod
    def from_config(config: Mapping[str, Any], base_dir: PathLike = ".", *, platform: Optional[str] = None,
                    seed: Optional[int] = None, quiet: bool = False) -> "Simulation": ...
    @staticmethod
    def from_structure(structure: PathLike, forcefield: Union[PathLike, Sequence[PathLike]] = ...,
                       *, integrator: Optional[Mapping[str, Any]] = None, barostat: Optional[Mapping[str, Any]] = None,
                       minimize: Optional[Mapping[str, Any]] = None, platform: Optional[str] = None,
                       seed: Optional[int] = None, quiet: bool = False, base_dir: PathLike = ".",
                       **system_options: Any) -> "Simulation": ...
    @staticmethod
    def from_openmm(system: Any, topology: Any, positions: Any, integrator: Any = None, *,
                    platform: Optional[str] = None, seed: Optional[int] = None, quiet: bool = False,
                    config: Optional[Mapping[str, Any]] = None, base_dir: PathLike = ".") -> "Simulation": ...

    # What the simulation is.
    @property
    def platform(self) -> str: ...
    @property
    def platform_description(self) -> str: ...
    @property
    def n_atoms(self) -> int: ...
    @property
    def masses(self) -> npt.NDArray[np.float64]: ...  # amu
    @property
    def charges(self) -> npt.NDArray[np.float64]: ...  # e
    @property
    def topology(self) -> Topology: ...
    @property
    def seed(self) -> int: ...
    @property
    def stream(self) -> int: ...  # cudaStream_t; 0 on the CPU platform
    def cupy_stream(self) -> Any: ...
    def torch_stream(self) -> Any: ...

    # Running.
    def minimize(self, tolerance: float = 10.0, max_iterations: int = 0) -> dict: ...  # kJ/mol/nm
    def step(self, steps: int) -> None: ...
    def run(self, *, steps: Optional[int] = None, time: Optional[Quantity] = None) -> dict: ...
    def close(self) -> None: ...
    def state(self) -> dict: ...
    @property
    def reporters(self) -> list: ...
    @reporters.setter
    def reporters(self, value: Iterable[Reporter]) -> None: ...

    # State and settings.
    @property
    def positions(self) -> StateArray: ...  # nm
    @positions.setter
    def positions(self, value: npt.ArrayLike) -> None: ...
    @property
    def velocities(self) -> StateArray: ...  # nm/ps
    @velocities.setter
    def velocities(self, value: npt.ArrayLike) -> None: ...
    @property
    def forces(self) -> StateArray: ...  # kJ/mol/nm
    def forces_by_term(self) -> dict: ...
    @property
    def temperature(self) -> float: ...  # K
    @temperature.setter
    def temperature(self, value: Quantity) -> None: ...
    @property
    def friction(self) -> float: ...  # 1/ps
    @friction.setter
    def friction(self, value: Quantity) -> None: ...
    @property
    def timestep(self) -> float: ...  # ps
    @timestep.setter
    def timestep(self, value: Quantity) -> None: ...
    @property
    def box(self) -> Optional[npt.NDArray[np.float64]]: ...  # nm, rows a, b, c
    @box.setter
    def box(self, value: npt.ArrayLike) -> None: ...

    # Python forces and checkpoints.
    def add_force(self, callback: ForceCallback) -> int: ...
    def remove_force(self, handle: int) -> None: ...
    def save_checkpoint(self, path: str) -> None: ...
    def load_checkpoint(self, path: str) -> None: ...

class Ensemble:
    """The replicas of a config with `replicas:` in this process, stepped together (on CUDA one batch whose arrays
    are K x N x 3 views of its memory; otherwise read-only numpy copies)."""
    def __init__(self, config: PathLike, *, platform: Optional[str] = None, seed: Optional[int] = None,
                 quiet: bool = False) -> None: ...
    @staticmethod
    def from_yaml(text: str, base_dir: PathLike = ".", *, platform: Optional[str] = None, seed: Optional[int] = None,
                  quiet: bool = False) -> "Ensemble": ...
    @staticmethod
    def from_config(config: Mapping[str, Any], base_dir: PathLike = ".", *, platform: Optional[str] = None,
                    seed: Optional[int] = None, quiet: bool = False) -> "Ensemble": ...
    @property
    def count(self) -> int: ...
    @property
    def batched(self) -> bool: ...
    @property
    def current_step(self) -> int: ...
    def step(self, steps: int) -> None: ...
    def state(self) -> dict: ...  # per replica: potential_energy_kj_per_mol, temperature_k, bath_temperature_k
    @property
    def positions(self) -> StateArray: ...  # nm, K x N x 3
    @property
    def velocities(self) -> StateArray: ...  # nm/ps
    @property
    def forces(self) -> StateArray: ...  # kJ/mol/nm
    def add_force(self, callback: ForceCallback) -> int: ...  # returns K energies or None
    def remove_force(self, handle: int) -> None: ...
    def close(self) -> dict: ...
