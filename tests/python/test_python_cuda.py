"""The Python package on the CUDA platform (issue 16; CTest label `cuda`): the views are the engine's own
device memory, seen without a copy by CuPy (and Numba and PyTorch where installed) through
__cuda_array_interface__, and the forces agree with the CPU platform's.
Exit code 77 (CTest: skipped) without a CUDA device or without CuPy.
Usage: test_python_cuda.py TEST_DATA_DIR (PYTHONPATH must hold build/python)."""
import importlib.util
import os
import sys

import numpy as np

import mdsim

DATA = os.path.abspath(sys.argv[1])
failures = []


def check(condition, what):
    print(("ok    " if condition else "FAIL  ") + what)
    if not condition:
        failures.append(what)


def config(platform, precision="mixed"):
    return (f"system: {{pdb: {DATA}/systems/ala2_water.pdb, nonbonded_method: pme, cutoff: 0.9 nm}}\n"
            f"platform: {{name: {platform}, precision: {precision}}}\n")


if importlib.util.find_spec("cupy") is None:
    print("SKIPPED: CuPy is not installed")
    sys.exit(77)
try:
    sim = mdsim.Simulation.from_yaml(config("cuda", "double"))
except mdsim.ConfigError as e:
    print(f"SKIPPED: {e}")
    sys.exit(77)
import cupy

check(sim.platform == "cuda", "platform cuda")
x_view = sim.positions
cai = x_view.__cuda_array_interface__
check(cai["shape"] == (2269, 3) and cai["typestr"] == "<f8" and cai["version"] == 3 and cai["strides"] == (32, 8),
      f"__cuda_array_interface__: {cai['shape']}, {cai['typestr']}, strides {cai['strides']}")
x = cupy.asarray(x_view)
check(x.data.ptr == cai["data"][0], "cupy.asarray(sim.positions) is the engine's memory (same pointer, no copy)")
e0 = sim.state()["potential_energy_kj_per_mol"]
x[7] += 0.02
e1 = sim.state()["potential_energy_kj_per_mol"]
check(e1 != e0, f"a CuPy write changes the next energy ({e0:.4f} -> {e1:.4f} kJ/mol)")
x[7] -= 0.02
check(abs(sim.state()["potential_energy_kj_per_mol"] - e0) < 1e-9 * abs(e0), "writing back restores the energy")

# Forces: the CUDA platform (double precision) against the CPU platform at the same positions.
cpu = mdsim.Simulation.from_yaml(config("cpu"))
f_gpu = cupy.asnumpy(cupy.asarray(sim.forces))
f_cpu = np.array(cpu.forces)
rel = np.sqrt(((f_gpu - f_cpu) ** 2).sum() / (f_cpu ** 2).sum())
check(rel < 1e-9, f"forces (double precision) against the CPU platform: relative RMS difference {rel:.2e}")

v = cupy.asarray(sim.velocities)
check(v.shape == (2269, 3) and v.strides == (24, 8), "velocities: (N, 3), rows of 3 doubles")
before = x.copy()
sim.step(10)
check(not bool(cupy.array_equal(before, x)), "steps move what the CuPy array shows (same memory)")

if importlib.util.find_spec("numba") is not None:
    from numba import cuda as nbcuda
    nb = nbcuda.as_cuda_array(sim.positions)
    check(nb.__cuda_array_interface__["data"][0] == cai["data"][0], "numba.cuda.as_cuda_array: the same memory")
if importlib.util.find_spec("torch") is not None:
    import torch
    t = torch.as_tensor(sim.positions, device="cuda")
    check(t.data_ptr() == cai["data"][0] and t.shape == (2269, 3), "torch.as_tensor: the same memory")

print(f"test_python_cuda: {len(failures)} failed" if failures else "test_python_cuda: all passed")
sys.exit(1 if failures else 0)
