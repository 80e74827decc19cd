#!/usr/bin/python3
"""OpenMM 7.7 reference for TIP5P on the template path (tests/kernels/cpu/test_cpu_ffxml_tip5p.cpp).

tip5p_box.pdb: the waters of OpenMM's app/data/tip5p.pdb (its equilibrated TIP5P box, Expat licence; the M1/M2 extra
points as written) whose oxygen lies in the box's 1.2 nm corner cube, with its 3 nm CRYST1, written by PDBFile as
Modeller's output is (element columns filled, EP for the extra points). OpenMM's ForceField('tip5p.xml').createSystem(PME, cutoff
1.0 nm, ewald tolerance 5e-4, dispersion correction, constraints None, rigidWater False), Reference platform, one
force group per force: energies by term, positions with the sites placed, forces (getState's convention: a site's
row holds the force on the site itself), counts. Written to tip5p_box.json.
Run: /usr/bin/python3 tests/data/make_tip5p_reference.py
"""
import json
import os

import openmm as mm
from openmm import app, unit

from openmm_energies import energies_by_force

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(os.path.dirname(app.__file__), "data")
CORNER_A = 12.0  # the corner cube's edge, Å


def write_box():
    lines = open(os.path.join(DATA, "tip5p.pdb")).read().splitlines()
    out = [l for l in lines if l.startswith("CRYST1")]
    atoms = [l for l in lines if l.startswith(("ATOM", "HETATM"))]
    for w in range(0, len(atoms), 5):
        if all(float(atoms[w][30 + 8 * k:38 + 8 * k]) < CORNER_A for k in range(3)):
            out += atoms[w:w + 5]
    out.append("END")
    with open(os.path.join(HERE, "tip5p_box.pdb"), "w") as f:
        f.write("\n".join(out) + "\n")
    # Written again by PDBFile, as Modeller's output is: element columns filled (EP for the extra points).
    pdb = app.PDBFile(os.path.join(HERE, "tip5p_box.pdb"))
    with open(os.path.join(HERE, "tip5p_box.pdb"), "w") as f:
        app.PDBFile.writeFile(pdb.topology, pdb.positions, f)


def main():
    write_box()
    pdb = app.PDBFile(os.path.join(HERE, "tip5p_box.pdb"))
    ff = app.ForceField("tip5p.xml")
    system = ff.createSystem(pdb.topology, nonbondedMethod=app.PME, nonbondedCutoff=1.0 * unit.nanometer,
                             ewaldErrorTolerance=5e-4, constraints=None, rigidWater=False, removeCMMotion=False)
    terms = {"HarmonicBondForce": "bond", "HarmonicAngleForce": "angle", "NonbondedForce": "nonbonded"}
    energies, state = energies_by_force(system, pdb.positions, lambda f: terms[type(f).__name__])
    nb = next(f for f in system.getForces() if isinstance(f, mm.NonbondedForce))
    out = {"openmm_version": mm.__version__, "waters": system.getNumParticles() // 5,
           "settings": "PME 1.0 nm, ewald tolerance 5e-4, dispersion correction, no constraints, flexible water",
           "energies_kj_per_mol": energies,
           "counts": {"particles": system.getNumParticles(), "exceptions": nb.getNumExceptions(),
                      "virtual_sites": sum(system.isVirtualSite(i) for i in range(system.getNumParticles()))},
           "positions_nm": state.getPositions(asNumpy=True).value_in_unit(unit.nanometer).tolist(),
           "forces_kj_per_mol_nm": state.getForces(asNumpy=True).value_in_unit(
               unit.kilojoule_per_mole / unit.nanometer).tolist()}
    with open(os.path.join(HERE, "tip5p_box.json"), "w") as f:
        json.dump(out, f, indent=1)
    print(energies, out["counts"])


if __name__ == "__main__":
    main()
