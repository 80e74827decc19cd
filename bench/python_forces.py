"""ns/day of a CUDA run driven from Python, without and with add_force callbacks (issue 16):
   none            no Python force
   trivial         a CuPy callback that launches one tiny kernel (the cost of the hook itself)
   restraint       a harmonic position restraint on the non-hydrogen atoms outside water (the examples'
                   CupyRestraint: a CuPy RawKernel, energy as a device scalar)
   torch           a PyTorch potential with autograd forces: a 32-unit network on the distances between 64
                   protein heavy atoms (examples/python/torch_potential.py's, on DHFR)
Usage: python3 bench/python_forces.py CONFIG [STEPS]   (PYTHONPATH must hold build/python; CuPy needed).
Prints a markdown table: µs/step and ns/day, steps timed after a warm-up, synchronised at both ends."""
import os
import sys
import time

import cupy

import mdsim

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples", "python"))
from cupy_restraint import CupyRestraint  # noqa: E402

config, steps = sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 5000

NOOP = cupy.RawKernel(r'extern "C" __global__ void noop(double* f) { if (threadIdx.x == 0) f[0] += 0.0; }', "noop")


def timed(sim, n):
    sim.step(min(500, n))
    sim.state()  # synchronises
    t0 = time.perf_counter()
    sim.step(n)
    sim.state()
    return (time.perf_counter() - t0) / n


def run(kind):
    sim = mdsim.Simulation(config)
    sim.reporters = []  # the step's cost alone: none of the config's outputs
    stream = sim.cupy_stream()
    if kind == "trivial":
        def trivial(positions, forces, box):
            with stream:
                NOOP((1,), (32,), (cupy.uint64(forces.__cuda_array_interface__["data"][0]),))
        sim.add_force(trivial)
    elif kind == "restraint":
        top = sim.topology
        heavy = [i for i, (e, r) in enumerate(zip(top.elements, top.residue_names)) if e != "H" and r != "HOH"]
        sim.add_force(CupyRestraint(sim, heavy, k=400.0))
    elif kind == "torch":
        import torch
        top = sim.topology
        heavy = [i for i, (e, r) in enumerate(zip(top.elements, top.residue_names)) if e != "H" and r != "HOH"][:64]
        device = torch.device("cuda", 0)
        atoms = torch.tensor(heavy, device=device)
        pairs = torch.triu_indices(len(heavy), len(heavy), offset=1, device=device)
        torch.manual_seed(7)
        model = torch.nn.Sequential(torch.nn.Linear(pairs.shape[1], 32), torch.nn.Tanh(),
                                    torch.nn.Linear(32, 1)).to(device=device, dtype=torch.float64)
        tstream = sim.torch_stream()

        def potential(positions, forces, box):
            with torch.cuda.stream(tstream):
                x, f = torch.from_dlpack(positions), torch.from_dlpack(forces)
                xs = x[atoms].detach().requires_grad_(True)
                energy = 2.0 * model((xs[pairs[0]] - xs[pairs[1]]).norm(dim=1)).squeeze()
                (grad,) = torch.autograd.grad(energy, xs)
                f.index_add_(0, atoms, -grad)
                return energy.detach()
        sim.add_force(potential)
    s = timed(sim, steps)
    st = sim.state()
    dt_ps = st["time_ps"] / st["step"]
    return s * 1e6, dt_ps * 1e-3 * 86400.0 / s, sim.n_atoms


print("| Python force | atoms | timed steps | µs/step | ns/day |")
print("|---|---|---|---|---|")
for kind in ["none", "trivial", "restraint", "torch"]:
    us, nsday, n = run(kind)
    print(f"| {kind} | {n} | {steps} | {us:.1f} | {nsday:.0f} |", flush=True)
