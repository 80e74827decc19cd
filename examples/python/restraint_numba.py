"""The harmonic position restraint as a Numba CUDA kernel, launched on the engine's stream.

    PYTHONPATH=build/python python3 examples/python/restraint_numba.py [CONFIG] [STEPS]

numba.cuda.as_cuda_array sees the engine's arrays through __cuda_array_interface__ (strided: positions are
rows of 4 doubles, forces rows of 3). The energy is kept on the device and returned as a 0-d array. Units: nm,
kJ/mol."""
import os
import sys

import numpy as np
from numba import cuda

import mdsim

here = os.path.dirname(os.path.abspath(__file__))
config = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "..", "ala2_water", "config.yaml")
steps = int(sys.argv[2]) if len(sys.argv) > 2 else 1000


@cuda.jit
def restraint_kernel(atoms, x, anchor, k, f, energy):
    t = cuda.grid(1)
    if t >= atoms.shape[0]:
        return
    i = atoms[t]
    e = 0.0
    for d in range(3):
        dx = x[i, d] - anchor[t, d]
        f[i, d] -= k * dx
        e += 0.5 * k * dx * dx
    cuda.atomic.add(energy, 0, e)


@cuda.jit
def zero_kernel(energy):
    energy[0] = 0.0


sim = mdsim.Simulation(config)
sim.reporters = []  # no files: the config's outputs are not this example's subject
if sim.platform != "cuda":
    sys.exit("restraint_numba.py needs the CUDA platform")
top = sim.topology
heavy = np.array([i for i, (e, r) in enumerate(zip(top.elements, top.residue_names)) if e != "H" and r != "HOH"],
                 dtype=np.int32)
sim.minimize(tolerance=50.0)
stream = cuda.external_stream(sim.stream)
atoms = cuda.to_device(heavy, stream=stream)
anchor = cuda.to_device(cuda.as_cuda_array(sim.positions).copy_to_host()[heavy], stream=stream)
energy = cuda.device_array(1, dtype=np.float64, stream=stream)
k = 2.0e4
threads = 128


class EnergyScalar:  # converted only when the engine wants the energy
    def __float__(self):
        return float(energy.copy_to_host(stream=stream)[0])


def restraint(positions, forces, box):
    # sync=False: the kernels go on the engine's own stream, which orders them; no host wait.
    x, f = cuda.as_cuda_array(positions, sync=False), cuda.as_cuda_array(forces, sync=False)
    zero_kernel[1, 1, stream](energy)
    restraint_kernel[(len(heavy) + threads - 1) // threads, threads, stream](atoms, x, anchor, k, f, energy)
    return EnergyScalar()


sim.add_force(restraint)
sim.step(steps)
state = sim.state()
x = cuda.as_cuda_array(sim.positions).copy_to_host()
drift = np.linalg.norm(x[heavy] - anchor.copy_to_host(), axis=1).max()
print(f"{sim.platform}: {steps} steps, restraint energy {state['energies_kj_per_mol']['external']:.3f} kJ/mol, "
      f"restrained atoms within {drift:.4f} nm of their anchors, T {state['temperature_k']:.1f} K")
