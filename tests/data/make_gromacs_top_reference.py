"""OpenMM 7.7 references for io/gromacs_top (tests/io/test_gromacs_top.cpp), written to gromacs/gromacs_top_reference.json.

Inputs in gromacs/: alanine dipeptide (tests/data/shared/systems/ala2_vacuum.pdb, heavy atoms, the NME cap renamed for
each force field) through Debian's GROMACS 2022.5 `gmx pdb2gmx -water none` (-ter None for oplsaa and charmm27) with
amber99sb-ildn, oplsaa and charmm27 from /usr/share/gromacs/top; `gmx grompp -DPOSRES` accepts each. The apgr.*.top
files are OpenMM's (wrappers/python/tests/systems/, MIT licence); their reference is GROMACS's total quoted in OpenMM's
TestGromacsTopFile.py, not computed here.

For each force-field system: OpenMM's GromacsTopFile(includeDir=/usr/share/gromacs/top).createSystem(NoCutoff,
constraints=None, rigidWater=False, removeCMMotion=False), Reference platform, each force in its own group; energies by
mdsim term (the LJ custom forces of comb-rule 3 summed into nonbonded) and the total forces. For bnz.top (shared
topologies): the virtual sites and the NBFIX table OpenMM makes. For OPLS-AA's TIP4P water (tip4p_box.top/.gro,
written here): see tip4p_box().
Run: /usr/bin/python3 tests/data/make_gromacs_top_reference.py
"""
import json
import os
import xml.etree.ElementTree as ET

import openmm as mm
from openmm import app, unit

from openmm_energies import energies_by_force, term_count

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
    counts = {}
    for f in system.getForces():
        counts[type(f).__name__] = counts.get(type(f).__name__, 0) + term_count(f)
    energies, state = energies_by_force(system, gro.positions, lambda f: TERMS[type(f).__name__])
    forces = state.getForces(asNumpy=True).value_in_unit(unit.kilojoule_per_mole / unit.nanometer)
    elements = [a.element.symbol if a.element is not None else "" for a in top.topology.atoms()]
    return {"energies_kj_per_mol": energies, "counts": counts, "forces_kj_per_mol_nm": forces.tolist(),
            "elements": elements, "residues": [r.name for r in top.topology.residues()]}


TIP4P_FF = """<ForceField>
 <AtomTypes>
  <Type name="OW" class="OW" element="O" mass="15.9994"/>
  <Type name="HW" class="HW" element="H" mass="1.008"/>
  <Type name="MW" class="MW" mass="0"/>
 </AtomTypes>
 <Residues>
  <Residue name="HOH">
   <Atom name="O" type="OW"/><Atom name="H1" type="HW"/><Atom name="H2" type="HW"/><Atom name="M" type="MW"/>
   <VirtualSite type="average3" siteName="M" atomName1="O" atomName2="H1" atomName3="H2"
                weight1="0.74397587" weight2="0.128012065" weight3="0.128012065"/>
   <Bond atomName1="O" atomName2="H1"/><Bond atomName1="O" atomName2="H2"/>
  </Residue>
 </Residues>
 <HarmonicBondForce><Bond class1="OW" class2="HW" length="0.09572" k="502416.0"/></HarmonicBondForce>
 <HarmonicAngleForce><Angle class1="HW" class2="OW" class3="HW" angle="1.8242181341844732" k="628.02"/></HarmonicAngleForce>
 <NonbondedForce coulomb14scale="0.5" lj14scale="0.5">
  <Atom type="OW" charge="0.0" sigma="0.315365" epsilon="0.648520"/>
  <Atom type="HW" charge="0.52" sigma="1" epsilon="0"/>
  <Atom type="MW" charge="-1.04" sigma="1" epsilon="0"/>
 </NonbondedForce>
</ForceField>
"""


def tip4p_box():
    """OPLS-AA's TIP4P (/usr/share/gromacs/top/oplsaa.ff/tip4p.itp: [virtual_sites3] function 1, [settles] or, under
    FLEXIBLE as OpenMM and mdsim define it, bonds and an angle) for the waters of OpenMM's tip4pew.pdb box whose oxygen
    lies in its 1.2 nm corner cube. OpenMM 7.7's GromacsTopFile does not read [virtual_sites3], so the reference is
    OpenMM's ForceField with the same parameters written as XML (TIP4P_FF: weights 1 - 2a, a, a with the itp's a), no
    cutoff: energies by term, positions with the sites placed, forces. Writes tip4p_box.top and tip4p_box.gro."""
    data = os.path.join(os.path.dirname(app.__file__), "data", "tip4pew.pdb")
    pdb = app.PDBFile(data)
    atoms = list(pdb.topology.atoms())
    x = pdb.positions.value_in_unit(unit.nanometer)
    keep = [r for r in pdb.topology.residues()
            if all(x[a.index][k] < 1.2 for a in r.atoms() if a.name == "O" for k in range(3))]
    modeller = app.Modeller(pdb.topology, pdb.positions)
    modeller.delete([r for r in pdb.topology.residues() if r not in keep])
    ff = app.ForceField()
    ff.loadFile(__import__("io").StringIO(TIP4P_FF))
    system = ff.createSystem(modeller.topology, nonbondedMethod=app.NoCutoff, constraints=None, rigidWater=False,
                             removeCMMotion=False)
    # The positions with the sites placed, to write the .gro.
    context = mm.Context(system, mm.VerletIntegrator(0.001), mm.Platform.getPlatformByName("Reference"))
    context.setPositions(modeller.positions)
    context.computeVirtualSites()
    positions = context.getState(getPositions=True).getPositions(asNumpy=True).value_in_unit(unit.nanometer)
    n = system.getNumParticles() // 4
    with open(os.path.join(GMX, "tip4p_box.top"), "w") as f:
        f.write('; TIP4P waters (make_gromacs_top_reference.py)\n#include "oplsaa.ff/forcefield.itp"\n'
                '#include "oplsaa.ff/tip4p.itp"\n\n[ system ]\nTIP4P waters\n\n[ molecules ]\nSOL %d\n' % n)
    names = ["OW", "HW1", "HW2", "MW"]
    with open(os.path.join(GMX, "tip4p_box.gro"), "w") as f:
        f.write("TIP4P waters from OpenMM's tip4pew.pdb (make_gromacs_top_reference.py)\n%5d\n" % len(positions))
        for i, p in enumerate(positions):
            f.write("%5d%-5s%5s%5d%8.3f%8.3f%8.3f\n" % (i // 4 + 1, "SOL", names[i % 4], i + 1, p[0], p[1], p[2]))
        f.write("   3.00000   3.00000   3.00000\n")
    # The .gro keeps 3 decimals: the reference is evaluated at the positions as written.
    gro = app.GromacsGroFile(os.path.join(GMX, "tip4p_box.gro"))
    energies, state = energies_by_force(system, gro.positions, lambda f: TERMS[type(f).__name__])
    return {"energies_kj_per_mol": energies, "waters": n,
            "positions_nm": state.getPositions(asNumpy=True).value_in_unit(unit.nanometer).tolist(),
            "forces_kj_per_mol_nm": state.getForces(asNumpy=True).value_in_unit(
                unit.kilojoule_per_mole / unit.nanometer).tolist()}


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
    out["tip4p_box"] = tip4p_box()
    with open(os.path.join(GMX, "gromacs_top_reference.json"), "w") as f:
        json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
