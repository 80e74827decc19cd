#!/usr/bin/python3
"""Compare an mdsim state.csv with what OpenMM 7.7's StateDataReporter reports for the same system.

    check_state_log.py SYSTEM.pdb STATE.csv

The system mass is the sum of OpenMM's element masses of the PDB's atoms (what
StateDataReporter uses without hydrogen mass repartitioning), the volume comes from the PDB's box
(OpenMM's periodic box vectors); the check computes volume and density exactly as
openmm/app/statedatareporter.py does (volume = a_x*b_y*c_z, density = (mass/volume) in g/mL) and
compares every line of STATE.csv with it, plus total = potential + kinetic. Run by
tests/io/test_state_log.cpp through /usr/bin/python3; a missing OpenMM is an error.
"""
import csv
import sys

from openmm import unit
from openmm.app import PDBFile

HEADER = ["step", "time_ps", "potential_kj_per_mol", "kinetic_kj_per_mol", "total_kj_per_mol", "temperature_k",
          "volume_nm3", "density_g_per_cm3", "speed_ns_per_day"]


def fail(msg):
    print("FAIL: " + msg, flush=True)
    sys.exit(1)


def main():
    pdb = PDBFile(sys.argv[1])
    mass = 0 * unit.dalton
    for atom in pdb.topology.atoms():
        mass += atom.element.mass
    box = pdb.topology.getPeriodicBoxVectors()
    volume = box[0][0] * box[1][1] * box[2][2]
    openmm_volume = volume.value_in_unit(unit.nanometer ** 3)
    openmm_density = (mass / volume).value_in_unit(unit.gram / unit.item / unit.milliliter)

    with open(sys.argv[2], newline="") as f:
        rows = list(csv.reader(f))
    if rows[0] != HEADER:
        fail("header %s" % rows[0])
    if len(rows) < 2:
        fail("no data lines")
    for row in rows[1:]:
        if len(row) != len(HEADER):
            fail("line with %d fields: %s" % (len(row), row))
        v = dict(zip(HEADER, row))
        pot, kin, tot = float(v["potential_kj_per_mol"]), float(v["kinetic_kj_per_mol"]), float(v["total_kj_per_mol"])
        if abs(tot - (pot + kin)) > 1e-9 * max(1.0, abs(tot)):
            fail("total %r != potential + kinetic" % tot)
        # amu = 1.66053906660e-24 g (mdsim) versus 1/N_A g (OpenMM's dalton/item): 3.4e-10 apart.
        if abs(float(v["volume_nm3"]) - openmm_volume) > 1e-9 * openmm_volume:
            fail("volume %s, OpenMM %r" % (v["volume_nm3"], openmm_volume))
        if abs(float(v["density_g_per_cm3"]) - openmm_density) > 1e-9 * openmm_density:
            fail("density %s, OpenMM %r" % (v["density_g_per_cm3"], openmm_density))
    print("state log: %d lines agree with OpenMM (volume %.6f nm^3, density %.9f g/mL)"
          % (len(rows) - 1, openmm_volume, openmm_density), flush=True)


if __name__ == "__main__":
    main()
