"""A harmonic position restraint as a CuPy RawKernel on the engine's own GPU memory.

    PYTHONPATH=build/python python3 examples/python/restraint_cupy.py [CONFIG] [STEPS]

The kernel runs on the engine's CUDA stream (sim.cupy_stream()), so it is ordered with the step without any
synchronisation or host copy; it returns its energy as a device scalar, which the engine reads only when an
energy is wanted (state(), the state log). Units: nm, kJ/mol."""
import os
import sys

import cupy

import mdsim

here = os.path.dirname(os.path.abspath(__file__))
config = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "..", "ala2_water", "config.yaml")
steps = int(sys.argv[2]) if len(sys.argv) > 2 else 1000

KERNEL = cupy.RawKernel(r"""
extern "C" __global__ void restraint(int n, const int* atoms, const double* x, long long x_stride,
                                     const double* anchor, double k, double* f, long long f_stride, double* energy) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= n) return;
  int i = atoms[t];
  double e = 0.0;
  for (int d = 0; d < 3; ++d) {
    double dx = x[i * x_stride + d] - anchor[3 * t + d];
    f[i * f_stride + d] -= k * dx;
    e += 0.5 * k * dx * dx;
  }
  atomicAdd(energy, e);
}
""", "restraint")

sim = mdsim.Simulation(config)
if sim.platform != "cuda":
    sys.exit("restraint_cupy.py needs the CUDA platform")
top = sim.topology
heavy = [i for i, (e, r) in enumerate(zip(top.elements, top.residue_names)) if e != "H" and r != "HOH"]
atoms = cupy.asarray(heavy, dtype=cupy.int32)
sim.minimize(tolerance=50.0)
anchor = cupy.asarray(sim.positions)[atoms].copy()  # rows of the engine's (N, 3) positions, copied once
energy = cupy.zeros(1)
stream = sim.cupy_stream()
k = 2.0e4


def restraint(positions, forces, box):
    x, f = positions.__cuda_array_interface__, forces.__cuda_array_interface__
    with stream:
        energy.fill(0)
        KERNEL(((len(heavy) + 127) // 128,), (128,),
               (cupy.int32(len(heavy)), atoms, cupy.uint64(x["data"][0]), cupy.int64(x["strides"][0] // 8), anchor,
                cupy.float64(k), cupy.uint64(f["data"][0]), cupy.int64(f["strides"][0] // 8), energy))
    return energy[0]


sim.add_force(restraint)
sim.step(steps)
state = sim.state()
with stream:
    drift = float(cupy.linalg.norm(cupy.asarray(sim.positions)[atoms] - anchor, axis=1).max())
print(f"{sim.platform}: {steps} steps, restraint energy {state['energies_kj_per_mol']['external']:.3f} kJ/mol, "
      f"restrained atoms within {drift:.4f} nm of their anchors, T {state['temperature_k']:.1f} K")
