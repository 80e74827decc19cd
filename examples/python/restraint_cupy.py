"""A harmonic position restraint as a CuPy RawKernel on the engine's own GPU memory.

    PYTHONPATH=build/python python3 examples/python/restraint_cupy.py [CONFIG] [STEPS]

The kernel runs on the engine's CUDA stream (sim.cupy_stream()), so it is ordered with the step without any
synchronisation or host copy; it returns its energy as a device scalar, which the engine reads only when an
energy is wanted (state(), the state log). Units: nm, kJ/mol."""
import os
import sys

import cupy

import mdsim
from cupy_restraint import CupyRestraint

here = os.path.dirname(os.path.abspath(__file__))
config = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "..", "ala2_water", "config.yaml")
steps = int(sys.argv[2]) if len(sys.argv) > 2 else 1000


sim = mdsim.Simulation(config)
sim.reporters = []  # no files: the config's outputs are not this example's subject
if sim.platform != "cuda":
    sys.exit("restraint_cupy.py needs the CUDA platform")
top = sim.topology
heavy = [i for i, (e, r) in enumerate(zip(top.elements, top.residue_names)) if e != "H" and r != "HOH"]
sim.minimize(tolerance=50.0)
restraint = CupyRestraint(sim, heavy, k=2.0e4)  # anchored at the minimised positions
sim.add_force(restraint)
sim.step(steps)
state = sim.state()
with restraint.stream:
    drift = float(cupy.linalg.norm(cupy.asarray(sim.positions)[restraint.atoms] - restraint.anchor, axis=1).max())
print(f"{sim.platform}: {steps} steps, restraint energy {state['energies_kj_per_mol']['external']:.3f} kJ/mol, "
      f"restrained atoms within {drift:.4f} nm of their anchors, T {state['temperature_k']:.1f} K")
