#!/usr/bin/env python3
"""How much of a tile pair list's work is inside the cutoff, for cluster shapes and buffers (issue 18).

    /usr/bin/python3 bench/pairlist_density.py [PDB] [--cutoff 0.9] [--buffers 0.12,0.06,0.03]

Lays the atoms out as the CUDA neighbour list does (kernels/cuda/cuda_neighbor_list.cuh: columns on an xy
grid about as wide as a cube holding 32 atoms, atoms ordered by height in each column, each column padded
to whole blocks of 32), then for i-clusters of CI consecutive sorted atoms (CI = 32: today's blocks; 16 and
8: halves and quarters of a block) counts what a list packed as today's tile build packs it (every atom
within cutoff + buffer of the i-cluster's bounding box and of one of its atoms, CJ to a tile) would
compute: tiles x CI x CJ pair slots, against the pairs within the cutoff. Excluded pairs are not removed
(they are a few per atom). Orthorhombic periodic boxes only. Needs numpy and scipy (Debian's, for
/usr/bin/python3).
"""
import argparse
import math

import numpy as np
from scipy.spatial import cKDTree


def read_pdb(path):
    xyz, box = [], None
    with open(path) as f:
        for line in f:
            if line.startswith(("ATOM", "HETATM")):
                xyz.append([float(line[30:38]), float(line[38:46]), float(line[46:54])])
            elif line.startswith("CRYST1"):
                box = np.array([float(line[6:15]), float(line[15:24]), float(line[24:33])])
    return np.array(xyz) * 0.1, box * 0.1  # nm


def sorted_layout(x, box):
    """Sorted atom indices with -1 for padding, as the column sort lays them out."""
    n = len(x)
    side = (32.0 * box.prod() / n) ** (1.0 / 3.0)
    ncx, ncy = max(1, int(box[0] / side)), max(1, int(box[1] / side))
    w = x % box
    cx = np.minimum((w[:, 0] / (box[0] / ncx)).astype(int), ncx - 1)
    cy = np.minimum((w[:, 1] / (box[1] / ncy)).astype(int), ncy - 1)
    column = cy * ncx + cx
    order = np.lexsort((w[:, 2], column))
    slots = []
    for c in range(ncx * ncy):
        members = order[column[order] == c]
        pad = (-len(members)) % 32
        slots.extend(members.tolist() + [-1] * pad)
    return np.array(slots), w


def count(x, box, cutoff, buffer, ci, cj, slots, tree, in_cutoff_pairs):
    """Tiles and pair slots of a list with i-clusters of ci sorted atoms, j atoms packed cj to a tile."""
    rng = cutoff + buffer
    tiles = 0
    for start in range(0, len(slots), ci):
        members = slots[start:start + ci]
        members = members[members >= 0]
        if len(members) == 0:
            continue
        # j candidates: within range of one of the cluster's atoms (that implies within range of its box)
        near = set()
        for lst in tree.query_ball_point(x[members], rng):
            near.update(lst)
        tiles += math.ceil(len(near) / cj)
    slots_total = tiles * ci * cj
    return tiles, slots_total, in_cutoff_pairs / slots_total


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("pdb", nargs="?", default="tests/data/shared/systems/dhfr.pdb")
    p.add_argument("--cutoff", type=float, default=0.9, help="nm")
    p.add_argument("--buffers", default="0.12,0.06,0.03", help="nm, comma-separated")
    p.add_argument("--clusters", default="32x32,16x32,8x32,8x8,4x8", help="CIxCJ, comma-separated")
    a = p.parse_args()
    x, box = read_pdb(a.pdb)
    slots, w = sorted_layout(x, box)
    tree = cKDTree(w, boxsize=box)
    # Ordered pairs (i, j), i != j, within the cutoff: what a full i-by-j tile sweep must cover (each
    # tile computes ordered pairs: today's kernel computes i-j and j-i in one slot only for i-blocks
    # below j-blocks, and the diagonal blocks in full; both counts below are of ordered pairs).
    in_cutoff = 2 * len(tree.query_pairs(a.cutoff))
    print(f"{a.pdb}: {len(x)} atoms, box {box[0]:.3f} nm, {len(slots)} sorted slots, cutoff {a.cutoff} nm, "
          f"{in_cutoff} ordered pairs within it")
    print("| i-cluster x j-tile | buffer (nm) | tiles | pair slots | slots inside the cutoff |")
    print("|---|---|---|---|---|")
    for shape in a.clusters.split(","):
        ci, cj = (int(v) for v in shape.split("x"))
        for b in (float(v) for v in a.buffers.split(",")):
            tiles, total, frac = count(w, box, a.cutoff, b, ci, cj, slots, tree, in_cutoff)
            print(f"| {ci}x{cj} | {b:g} | {tiles} | {total} | {100 * frac:.1f}% |")


if __name__ == "__main__":
    main()
