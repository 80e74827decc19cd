#!/usr/bin/env python3
"""tests/data/system_xml_oplsaa_rb.system.xml: the RBTorsionForce of the OPLS-AA dipeptide (tests/data/gromacs/oplsaa.top,
OpenMM 7.7's GromacsTopFile with Debian's /usr/share/gromacs/top) alone in a serialized System, and its energy at
tests/data/gromacs/oplsaa.gro's positions (OpenMM's Reference platform) in the comment after the XML declaration."""
import os

import openmm as mm
from openmm import app, unit

here = os.path.dirname(os.path.abspath(__file__))
top = app.GromacsTopFile(os.path.join(here, "gromacs", "oplsaa.top"), includeDir="/usr/share/gromacs/top")
gro = app.GromacsGroFile(os.path.join(here, "gromacs", "oplsaa.gro"))
full = top.createSystem(nonbondedMethod=app.NoCutoff, constraints=None, rigidWater=False, removeCMMotion=False)
system = mm.System()
for i in range(full.getNumParticles()):
    system.addParticle(full.getParticleMass(i))
rb = [f for f in full.getForces() if isinstance(f, mm.RBTorsionForce)][0]
system.addForce(mm.XmlSerializer.clone(rb))
context = mm.Context(system, mm.VerletIntegrator(0.001), mm.Platform.getPlatformByName("Reference"))
context.setPositions(gro.positions)
energy = context.getState(getEnergy=True).getPotentialEnergy().value_in_unit(unit.kilojoule_per_mole)
with open(os.path.join(here, "system_xml_oplsaa_rb.system.xml"), "w") as f:
    declaration, rest = mm.XmlSerializer.serialize(system).split("\n", 1)
    f.write(f"{declaration}\n<!-- RB torsion energy at oplsaa.gro (OpenMM 7.7 Reference): {energy!r} kJ/mol -->\n{rest}")
print(rb.getNumTorsions(), "torsions,", energy, "kJ/mol")
