"""A PyTorch potential whose forces come from autograd: a small neural network on the distances between the
solute's heavy atoms (a stand-in for a learned correction), positions handed to PyTorch through DLPack.

    PYTHONPATH=build/python python3 examples/python/torch_potential.py [CONFIG] [STEPS]

Inside the callback PyTorch works on the engine's stream (sim.torch_stream()), reads the engine's positions
without a copy (torch.from_dlpack), and adds -dE/dx into the engine's force array in place. Units: nm, kJ/mol."""
import os
import sys

import torch

import mdsim

here = os.path.dirname(os.path.abspath(__file__))
config = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "..", "ala2_water", "config.yaml")
steps = int(sys.argv[2]) if len(sys.argv) > 2 else 1000

sim = mdsim.Simulation(config)
sim.reporters = []  # no files: the config's outputs are not this example's subject
if sim.platform != "cuda":
    sys.exit("torch_potential.py needs the CUDA platform")
top = sim.topology
heavy = [i for i, (e, r) in enumerate(zip(top.elements, top.residue_names)) if e != "H" and r != "HOH"]
device = torch.device("cuda", 0)
atoms = torch.tensor(heavy, device=device)
pairs = torch.triu_indices(len(heavy), len(heavy), offset=1, device=device)

torch.manual_seed(7)
model = torch.nn.Sequential(torch.nn.Linear(pairs.shape[1], 32), torch.nn.Tanh(), torch.nn.Linear(32, 1))
model = model.to(device=device, dtype=torch.float64)
scale = 2.0  # kJ/mol: the network's output range, small beside the force field's
stream = sim.torch_stream()


def potential(positions, forces, box):
    with torch.cuda.stream(stream):
        x = torch.from_dlpack(positions)  # (N, 3) view of the engine's positions
        f = torch.from_dlpack(forces)     # (N, 3) view of the array the engine sums external forces in
        xs = x[atoms].detach().requires_grad_(True)
        d = (xs[pairs[0]] - xs[pairs[1]]).norm(dim=1)
        energy = scale * model(d).squeeze()
        (grad,) = torch.autograd.grad(energy, xs)
        f.index_add_(0, atoms, -grad)
        return energy.detach()  # a 0-d tensor: read only when the engine wants the energy


sim.add_force(potential)
sim.minimize(tolerance=50.0)
sim.step(steps)
state = sim.state()
print(f"{sim.platform}: {steps} steps with a {sum(p.numel() for p in model.parameters())}-parameter network on "
      f"{len(heavy)} atoms: its energy {state['energies_kj_per_mol']['external']:.4f} kJ/mol, "
      f"T {state['temperature_k']:.1f} K")
