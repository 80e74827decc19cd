"""A harmonic position restraint as a CuPy RawKernel, usable as an mdsim force callback (sim.add_force):
E = sum 1/2 k |x_i - anchor_i|^2 over the chosen atoms, forces -k (x_i - anchor_i). Units: nm, kJ/mol.
Used by restraint_cupy.py, tests/python/test_python_cuda.py and bench/python_forces.py."""
import cupy

_KERNEL = cupy.RawKernel(r"""
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


class CupyRestraint:
    """Restrains `atoms` (indices) of `sim` to their current positions with force constant k (kJ/mol/nm^2).
    Its kernel runs on the engine's stream; the energy is returned as a device scalar (read by the engine only
    when it wants an energy)."""

    def __init__(self, sim, atoms, k):
        self.stream = sim.cupy_stream()
        with self.stream:
            self.atoms = cupy.asarray(atoms, dtype=cupy.int32)
            self.anchor = cupy.asarray(sim.positions)[self.atoms].copy()
            self.energy = cupy.zeros(1)
        self.stream.synchronize()  # once: the anchors are then readable on any stream
        self.k = k

    def __call__(self, positions, forces, box):
        x, f = positions.__cuda_array_interface__, forces.__cuda_array_interface__
        n = len(self.atoms)
        with self.stream:
            self.energy.fill(0)
            _KERNEL(((n + 127) // 128,), (128,),
                    (cupy.int32(n), self.atoms, cupy.uint64(x["data"][0]), cupy.int64(x["strides"][0] // 8),
                     self.anchor, cupy.float64(self.k), cupy.uint64(f["data"][0]), cupy.int64(f["strides"][0] // 8),
                     self.energy))
        return self.energy[0]
