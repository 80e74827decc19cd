"""OpenMM 7.7 references for io/gromacs_top (tests/io/test_gromacs_top.cpp), written to gromacs/gromacs_top_reference.json.

Inputs in gromacs/: alanine dipeptide (tests/data/shared/systems/ala2_vacuum.pdb, heavy atoms, the NME cap renamed for
each force field) through Debian's GROMACS 2022.5 `gmx pdb2gmx -water none` (-ter None for oplsaa and charmm27) with
amber99sb-ildn, oplsaa and charmm27 from /usr/share/gromacs/top; `gmx grompp -DPOSRES` accepts each. The apgr.*.top
files are OpenMM's (wrappers/python/tests/systems/, MIT licence); their reference is GROMACS's total quoted in OpenMM's
TestGromacsTopFile.py, not computed here.

For each force-field system: OpenMM's GromacsTopFile(includeDir=/usr/share/gromacs/top).createSystem(NoCutoff,
constraints=None, rigidWater=False, removeCMMotion=False), Reference platform, each force in its own group; energies by
mdsim term (the LJ custom forces of comb-rule 3 summed into nonbonded) and the total forces. For bnz.top (shared
topologies): the virtual sites and the NBFIX table OpenMM makes.
Run: /usr/bin/python3 tests/data/make_gromacs_top_reference.py
"""
import json
import os
import xml.etree.ElementTree as ET

import openmm as mm
from openmm import app, unit

HERE = os.path.dirname(os.path.abspath(__file__))
GMX = os.path.join(HERE, "gromacs")
SHARED = os.path.join(HERE, "shared", "topologies", "inputs")
TERMS = {"HarmonicBondForce": "bond", "HarmonicAngleForce": "angle", "PeriodicTorsionForce": "torsion",
         "RBTorsionForce": "rb_torsion", "CustomTorsionForce": "improper", "CMAPTorsionForce": "cmap",
         "NonbondedForce": "nonbonded", "CustomNonbondedForce": "nonbonded", "CustomBondForce": "nonbonded"}


def evaluate(top_path, gro_path):
    top = app.GromacsTopFile(top_path, includeDir="/usr/share/gromacs/top")
    gro = app.GromacsGroFile(gro_path)
    system = top.createSystem(nonbondedMethod=app.NoCutoff, constraints=None, rigidWater=False, removeCMMotion=False)
    for i, f in enumerate(system.getForces()):
        f.setForceGroup(i)
    context = mm.Context(system, mm.VerletIntegrator(0.001), mm.Platform.getPlatformByName("Reference"))
    context.setPositions(gro.positions)
    energies, counts = {}, {}
    for i, f in enumerate(system.getForces()):
        term = TERMS[type(f).__name__]
        e = context.getState(getEnergy=True, groups={i}).getPotentialEnergy().value_in_unit(unit.kilojoule_per_mole)
        energies[term] = energies.get(term, 0.0) + e
        counts[type(f).__name__] = counts.get(type(f).__name__, 0) + (
            f.getNumBonds() if hasattr(f, "getNumBonds") else f.getNumAngles() if hasattr(f, "getNumAngles")
            else f.getNumTorsions() if hasattr(f, "getNumTorsions") else f.getNumParticles())
    state = context.getState(getEnergy=True, getForces=True)
    energies["total"] = state.getPotentialEnergy().value_in_unit(unit.kilojoule_per_mole)
    forces = state.getForces(asNumpy=True).value_in_unit(unit.kilojoule_per_mole / unit.nanometer)
    elements = [a.element.symbol if a.element is not None else "" for a in top.topology.atoms()]
    return {"energies_kj_per_mol": energies, "counts": counts, "forces_kj_per_mol_nm": forces.tolist(),
            "elements": elements, "residues": [r.name for r in top.topology.residues()]}


def bnz_sites_and_table():
    top = app.GromacsTopFile(os.path.join(SHARED, "bnz.top"))
    system = top.createSystem(nonbondedMethod=app.NoCutoff)
    sites = []
    for i in range(system.getNumParticles()):
        if system.isVirtualSite(i):
            vs = system.getVirtualSite(i)
            sites.append({"particle": i, "parents": [vs.getParticle(k) for k in range(vs.getNumParticles())],
                          "weights": [vs.getWeight(k) for k in range(vs.getNumParticles())]})
    custom = [f for f in system.getForces() if isinstance(f, mm.CustomNonbondedForce)][0]
    functions = {}  # name -> (size, values), read from the serialized force (the SWIG API gives the base class only)
    for f in ET.fromstring(mm.XmlSerializer.serialize(custom)).iter("Function"):
        functions[f.get("name")] = (int(f.get("xsize")), [float(v.get("v")) for v in f.iter("Value")])
    n, acoef = functions["acoef"]
    bcoef = functions["bcoef"][1]
    types = [int(custom.getParticleParameters(i)[0]) for i in range(custom.getNumParticles())]
    # acoef = sqrt(c12), bcoef = c6, [i + n j].
    return {"virtual_sites": sites, "num_types": n, "particle_type": types,
            "c12_kj_per_mol_nm12": [a * a for a in acoef], "c6_kj_per_mol_nm6": list(bcoef),
            "masses_amu": [system.getParticleMass(i).value_in_unit(unit.dalton) for i in range(system.getNumParticles())]}


def main():
    out = {"openmm_version": mm.__version__, "settings": "NoCutoff, no constraints, rigid water off", "systems": {}}
    for ff in ("amber99sb-ildn", "oplsaa", "charmm27"):
        out["systems"][ff] = evaluate(os.path.join(GMX, ff + ".top"), os.path.join(GMX, ff + ".gro"))
    out["bnz"] = bnz_sites_and_table()
    with open(os.path.join(GMX, "gromacs_top_reference.json"), "w") as f:
        json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
