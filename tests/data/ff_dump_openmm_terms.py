#!/usr/bin/python3
"""Dump the System OpenMM 7.7 builds for a PDB file as text, for tests/model/test_forcefield.cpp
and tests/model/test_forcefield_generators.cpp.

Made with Debian 12's OpenMM 7.7 (python3-simtk):
    /usr/bin/python3 tests/data/ff_dump_openmm_terms.py ../shared/systems/ala2_vacuum.pdb \
        tests/data/ff_ala2_vacuum_openmm_terms.txt amber14-all.xml amber14/tip3p.xml

Settings: NoCutoff (PME when the PDB has a box), no constraints, flexible water, no CM motion remover.
Line formats (one term per line, in OpenMM's order; numbers with 10 significant digits):
    topbonds N                       number of topology bonds
    P index mass charge sigma eps    per particle (amu, e, nm, kJ/mol)
    B i j length k                   HarmonicBondForce
    A i j k angle k                  HarmonicAngleForce
    T i j k l periodicity phase k    PeriodicTorsionForce (propers, then impropers)
    E i j chargeProd sigma eps       NonbondedForce exceptions
    R residueIndex templateName      matched residue template
"""
import sys

import openmm as mm
import openmm.app as app

pdb_path, out_path = sys.argv[1], sys.argv[2]
pdb = app.PDBFile(pdb_path)
ff = app.ForceField(*sys.argv[3:])
top = pdb.topology
method = app.PME if top.getPeriodicBoxVectors() is not None else app.NoCutoff
system = ff.createSystem(top, nonbondedMethod=method, constraints=None, rigidWater=False, removeCMMotion=False)
data = app.ForceField._SystemData(top)
templates = ff._matchAllResiduesToTemplates(data, top, dict(), False)


def v(q):
    return q._value if hasattr(q, '_value') else q


with open(out_path, 'w') as f:
    f.write("topbonds %d\n" % top.getNumBonds())
    nb = [x for x in system.getForces() if isinstance(x, mm.NonbondedForce)][0]
    for i in range(system.getNumParticles()):
        q, s, e = nb.getParticleParameters(i)
        f.write("P %d %.10g %.10g %.10g %.10g\n" % (i, v(system.getParticleMass(i)), v(q), v(s), v(e)))
    for force in system.getForces():
        if isinstance(force, mm.HarmonicBondForce):
            for k in range(force.getNumBonds()):
                i, j, r, kk = force.getBondParameters(k)
                f.write("B %d %d %.10g %.10g\n" % (i, j, v(r), v(kk)))
    for force in system.getForces():
        if isinstance(force, mm.HarmonicAngleForce):
            for k in range(force.getNumAngles()):
                i, j, l, a, kk = force.getAngleParameters(k)
                f.write("A %d %d %d %.10g %.10g\n" % (i, j, l, v(a), v(kk)))
    for force in system.getForces():
        if isinstance(force, mm.PeriodicTorsionForce):
            for k in range(force.getNumTorsions()):
                i, j, l, m, n, p, kk = force.getTorsionParameters(k)
                f.write("T %d %d %d %d %d %.10g %.10g\n" % (i, j, l, m, n, v(p), v(kk)))
    for k in range(nb.getNumExceptions()):
        i, j, q, s, e = nb.getExceptionParameters(k)
        f.write("E %d %d %.10g %.10g %.10g\n" % (i, j, v(q), v(s), v(e)))
    for r in top.residues():
        f.write("R %d %s\n" % (r.index, templates[r.index].name))
