"""On-the-fly analysis without host copies of positions: the solute's radius of gyration every 100 steps,
computed in CuPy on the engine's own positions.

    PYTHONPATH=build/python python3 examples/python/rg_analysis_cupy.py [CONFIG] [STEPS]

Only the scalar result of each analysis comes to the host (nm)."""
import os
import sys

import cupy

import mdsim

here = os.path.dirname(os.path.abspath(__file__))
config = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "..", "ala2_water", "config.yaml")
steps = int(sys.argv[2]) if len(sys.argv) > 2 else 1000

sim = mdsim.Simulation(config)
sim.reporters = []  # no files: the config's outputs are not this example's subject
if sim.platform != "cuda":
    sys.exit("rg_analysis_cupy.py needs the CUDA platform")
top = sim.topology
solute = cupy.asarray([i for i, r in enumerate(top.residue_names) if r != "HOH"])
masses = cupy.asarray(sim.masses)[solute]
stream = sim.cupy_stream()
x = cupy.asarray(sim.positions)  # the engine's memory, (N, 3) with rows of 4 doubles: no copy

sim.minimize(tolerance=50.0)
values = []
for block in range(steps // 100):
    sim.step(100)
    with stream:  # after the steps on the same stream: no synchronisation needed to read x
        xs = x[solute]
        centre = (masses[:, None] * xs).sum(axis=0) / masses.sum()
        rg = float(cupy.sqrt((masses * ((xs - centre) ** 2).sum(axis=1)).sum() / masses.sum()))
        # float() inside the block: the copy to the host must follow the kernels on this stream (outside it,
        # CuPy would copy on the default stream, which does not wait for the engine's)
    print(f"step {(block + 1) * 100:6d}  Rg {rg:.4f} nm")
    values.append(rg)
print(f"Rg over {len(values)} samples: {min(values):.4f} to {max(values):.4f} nm")
