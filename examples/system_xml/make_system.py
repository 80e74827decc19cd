#!/usr/bin/python3
"""Writes ala2_water.system.xml.gz: the System OpenMM 7.7 builds for ../ala2_water/ala2_water.pdb with amber14 + TIP3P
(PME, 1.0 nm cutoff, HBonds, rigid water; createSystem's CMMotionRemover), serialized with XmlSerializer, as any
OpenMM script can save its System for mdsim:

    with open('system.xml', 'w') as f:
        f.write(openmm.XmlSerializer.serialize(system))

Regenerate with:  /usr/bin/python3 examples/system_xml/make_system.py   (deterministic; gzip mtime 0)
"""
import gzip
import os

import openmm
from openmm import app, unit

HERE = os.path.dirname(os.path.abspath(__file__))

pdb = app.PDBFile(os.path.join(HERE, '..', 'ala2_water', 'ala2_water.pdb'))
forcefield = app.ForceField('amber14-all.xml', 'amber14/tip3p.xml')
system = forcefield.createSystem(pdb.topology, nonbondedMethod=app.PME, nonbondedCutoff=1.0 * unit.nanometer,
                                 constraints=app.HBonds, rigidWater=True)
with open(os.path.join(HERE, 'ala2_water.system.xml.gz'), 'wb') as raw, \
        gzip.GzipFile(filename='', mode='wb', fileobj=raw, mtime=0) as f:
    f.write(openmm.XmlSerializer.serialize(system).encode())
