"""A harmonic position restraint written in numpy, on the CPU platform (mdsim's double-precision reference).

    PYTHONPATH=build/python python3 examples/python/restraint_numpy_cpu.py [CONFIG] [STEPS]

The callback gets the engine's own arrays (numpy views, no copies): it adds -k (x - x0) to the forces of
the restrained atoms and returns the energy 1/2 k |x - x0|^2 (kJ/mol). Units: nm, kJ/mol."""
import os
import sys

import numpy as np

import mdsim

here = os.path.dirname(os.path.abspath(__file__))
config = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "..", "ala2_water", "config.yaml")
steps = int(sys.argv[2]) if len(sys.argv) > 2 else 500

with open(config) as f:
    text = f.read().replace("\nintegrator:", "\nplatform: cpu\nintegrator:", 1)
sim = mdsim.Simulation.from_yaml(text, base_dir=os.path.dirname(os.path.abspath(config)))
sim.reporters = []  # no files: the config's outputs are not this example's subject
top = sim.topology
atoms = np.array([i for i, (e, r) in enumerate(zip(top.elements, top.residue_names)) if e != "H" and r != "HOH"])
sim.minimize(tolerance=50.0)
anchor = np.array(sim.positions[atoms])  # the minimised positions of the solute's heavy atoms
k = 2.0e4  # kJ/mol/nm^2: thermal spread sqrt(kT/k) ~ 0.01 nm


def restraint(positions, forces, box):
    d = positions[atoms] - anchor
    forces[atoms] -= k * d
    return 0.5 * k * float((d * d).sum())


sim.add_force(restraint)
sim.step(steps)
state = sim.state()
drift = np.linalg.norm(sim.positions[atoms] - anchor, axis=1).max()
print(f"{sim.platform}: {steps} steps, restraint energy {state['energies_kj_per_mol']['external']:.3f} kJ/mol, "
      f"restrained atoms within {drift:.4f} nm of their anchors, T {state['temperature_k']:.1f} K")
