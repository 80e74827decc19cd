"""What changing a running simulation costs on the GPU (issue 37): the temperature, friction or time step set from
Python re-captures the CUDA step graphs once; the box set moves no graph. Times 4-step blocks (one captured graph of
the fused step) with and without a setting changed before each block, after a warm-up, synchronised at both ends.
Usage: python3 bench/python_settings.py CONFIG [BLOCKS]   (PYTHONPATH must hold build/python). Prints a markdown table."""
import sys
import time

import mdsim

config, blocks = sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 200


def timed(sim, change):
    sim.step(400)
    sim.state()
    t0 = time.perf_counter()
    for k in range(blocks):
        change(sim, k)
        sim.step(4)
    sim.state()
    return (time.perf_counter() - t0) / blocks * 1e6


def nothing(sim, k):
    pass


def temperature(sim, k):
    sim.temperature = 300.0 + (k % 2)


def timestep(sim, k):
    sim.timestep = 0.004 if k % 2 else 0.00399


def box(sim, k):
    b = sim.box
    b[2, 2] *= 1.0 + (1e-6 if k % 2 else -1e-6)
    sim.box = b


sim = mdsim.Simulation(config, quiet=True)
sim.reporters = []
print(f"| change before each 4-step block ({sim.n_atoms} atoms, {sim.platform_description}) | µs per block | µs more |")
print("|---|---|---|")
base = timed(sim, nothing)
print(f"| none | {base:.0f} | 0 |")
for name, change in (("temperature", temperature), ("timestep", timestep), ("box", box)):
    us = timed(sim, change)
    print(f"| {name} | {us:.0f} | {us - base:.0f} |", flush=True)
