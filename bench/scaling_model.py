#!/usr/bin/env python3
"""Cost model of one system across GPUs (docs/SCALING.md): predicted µs/step and ns/day of DHFR x8 and x64
(OpenMM's benchmark settings, 4 fs) on 2, 4 and 8 GPUs, from mdsim's measured single-GPU work and assumed
link figures.

    python3 bench/scaling_model.py [--bandwidth-gbs 350] [--latency-us 10]

Standard library only. Every input is named below with where it comes from; docs/SCALING.md explains the
design the formulas describe.
"""
import argparse
import itertools
import math

# Measured on one H100, mixed precision, `mdsim bench` (docs/PERFORMANCE.md, issue 18 session 4), DHFR x8
# (188,464 atoms, PME grid 112^3): standalone kernel-chain times of one force evaluation and the full step.
X8_ATOMS = 188_464
X8_NONBONDED_US = 299.9      # pair kernel
X8_LIST_US = 113.6 / 2.8     # one list rebuild, every 2.8 steps at 4 fs
X8_BONDED_US = 19.9 + 17.7   # bonded terms + exceptions
X8_PME_US = 133.3            # spread, FFTs, convolution, gather
X8_GRID_POINTS = 112 ** 3    # its PME grid (pme_grid: fft_friendly)
X8_FORCES_WALL_US = 419.6    # the evaluation with its three streams overlapping
X8_STEP_US = 500.8           # full step
X64_STEP_US = 3922.6         # DHFR x64, 1,507,712 atoms, full step (measured)
DENSITY_PER_NM3 = 23_558 / 6.223 ** 3  # DHFR's atoms per nm^3
RANGE_NM = 0.9 + 0.12        # cutoff + neighbour buffer: the halo's depth
BYTES_X = 16                 # a halo atom's position and charge (float4) sent to the domain that needs it
BYTES_F = 24                 # its force returned (3 x 64-bit fixed point)
BYTES_PME_X, BYTES_PME_F = 16, 12  # per atom to a PME GPU and back (float4; float3)
BOUNDARY_INEFFICIENCY = 0.10  # extra pair-list work per domain from tiles cut at the domain's faces (assumed)
SYNC_US = 5.0                # per step: the ranks' graphs meeting once (assumed)


def pp_work_us(atoms):
    """Single-GPU particle-particle work per step (everything but PME), scaled per atom from DHFR x8."""
    integrate = X8_STEP_US - X8_FORCES_WALL_US  # constraints, integration, list upkeep outside the forces
    return (X8_NONBONDED_US + X8_LIST_US + X8_BONDED_US + integrate) * atoms / X8_ATOMS


def pme_work_us(atoms):
    """PME on one GPU, from DHFR x8 scaled as n log n in the grid points (the grid grows with the atoms)."""
    ratio = atoms / X8_ATOMS
    return X8_PME_US * ratio * math.log(X8_GRID_POINTS * ratio) / math.log(X8_GRID_POINTS)


def halo(atoms, domains, link_gbs, latency_us):
    """Best grid of `domains` over a cubic box: halo atoms imported per domain (half shell: from the
    neighbours on one side in each decomposed dimension) and the exchange time (positions in, forces out,
    one pulse per decomposed dimension, each a latency plus bytes over the link)."""
    edge = (atoms / DENSITY_PER_NM3) ** (1.0 / 3.0)
    best = None
    for nx, ny in itertools.product(range(1, domains + 1), repeat=2):
        if domains % (nx * ny):
            continue
        nz = domains // (nx * ny)
        a, b, c = edge / nx, edge / ny, edge / nz
        r = RANGE_NM
        va = (a + (r if nx > 1 else 0)) * (b + (r if ny > 1 else 0)) * (c + (r if nz > 1 else 0)) - a * b * c
        halo_atoms = va * DENSITY_PER_NM3
        pulses = sum(1 for n in (nx, ny, nz) if n > 1)
        t = 2 * pulses * latency_us + halo_atoms * (BYTES_X + BYTES_F) / (link_gbs * 1e3)
        if best is None or t < best[1]:
            best = (halo_atoms, t, (nx, ny, nz))
    return best


def step_us(atoms, gpus, link_gbs, latency_us, single_step_us):
    """The fastest of: PME on a GPU of its own (gpus - 1 PP domains, GROMACS's separate PME rank) and PME
    sharing GPU 0 with a PP domain. Returns (µs/step, description)."""
    options = []
    pp, pme = pp_work_us(atoms), pme_work_us(atoms)
    # PME coordinates in and forces out, from every PP GPU to one: bounded by that GPU's links.
    pme_comm = latency_us * 2 + atoms * (BYTES_PME_X + BYTES_PME_F) / (link_gbs * 1e3)
    if gpus >= 2:
        d = gpus - 1
        h = halo(atoms, d, link_gbs, latency_us) if d > 1 else (0.0, 0.0, (1, 1, 1))
        t_pp = pp / d * (1 + (BOUNDARY_INEFFICIENCY if d > 1 else 0)) + h[1]
        t_pme = pme + pme_comm
        options.append((max(t_pp, t_pme) + SYNC_US, f"{d} PP + 1 PME GPU, domains {h[2][0]}x{h[2][1]}x{h[2][2]}"))
    # PME sharing GPU 0 with a PP domain: on one GPU PME overlaps the pair work on its own streams, and
    # the part of it the single-GPU step exposes (measured: the step less the PP work, over PME's work)
    # is what it adds to GPU 0's share, or PME alone where that is longer.
    exposed = max(0.0, min(1.0, (single_step_us - pp) / pme))
    h = halo(atoms, gpus, link_gbs, latency_us)
    share = pp / gpus * (1 + BOUNDARY_INEFFICIENCY) + h[1]
    t = max(share + exposed * pme, pme) + pme_comm * (gpus - 1) / gpus
    options.append((t + SYNC_US, f"{gpus} PP, PME on GPU 0, domains {h[2][0]}x{h[2][1]}x{h[2][2]}"))
    # PME over m GPUs of its own: the grid in m slabs, each GPU spreading and gathering its slab's atoms
    # (10% more for the stencils reaching into the next slab) and doing 1/m of the FFT work, with an
    # all-to-all transpose of the complex grid (float2) before and after the convolution.
    grid_bytes = X8_GRID_POINTS * (atoms / X8_ATOMS) * 0.5 * 8
    for m in range(2, gpus - 1):
        d = gpus - m
        h = halo(atoms, d, link_gbs, latency_us)
        transpose = latency_us + grid_bytes / m * (m - 1) / m / (link_gbs * 1e3)
        t_pme = pme / m * 1.1 + 2 * transpose + pme_comm / m
        t_pp = pp / d * (1 + BOUNDARY_INEFFICIENCY) + h[1]
        options.append((max(t_pp, t_pme) + SYNC_US,
                        f"{d} PP + {m} PME GPUs, domains {h[2][0]}x{h[2][1]}x{h[2][2]}"))
    return min(options)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--bandwidth-gbs", type=float, default=350.0,
                   help="usable GPU-to-GPU bandwidth per direction, GB/s (assumed: NVLink 4 is 450 nominal)")
    p.add_argument("--latency-us", type=float, default=10.0, help="per message, µs (assumed, NCCL send/recv)")
    a = p.parse_args()
    print(f"link {a.bandwidth_gbs:g} GB/s per direction, {a.latency_us:g} µs per message (assumed); "
          f"single-GPU figures measured on one H100")
    print("| system | atoms | GPUs | µs/step | ns/day (4 fs) | speed-up | parallel efficiency | layout |")
    print("|---|---|---|---|---|---|---|---|")
    for name, atoms, single in (("DHFR x8", X8_ATOMS, X8_STEP_US), ("DHFR x64", 1_507_712, X64_STEP_US)):
        print(f"| {name} | {atoms:,} | 1 | {single:.0f} | {345600 / single:.0f} | 1.00 | 1.00 | measured |")
        for gpus in (2, 4, 8):
            t, layout = step_us(atoms, gpus, a.bandwidth_gbs, a.latency_us, single)
            print(f"| {name} | {atoms:,} | {gpus} | {t:.0f} | {345600 / t:.0f} | {single / t:.2f} | "
                  f"{single / t / gpus:.2f} | {layout} |")


if __name__ == "__main__":
    main()
