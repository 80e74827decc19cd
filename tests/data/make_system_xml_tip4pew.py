#!/usr/bin/python3
"""The serialized OpenMM System (XmlSerializer) of the shared case ffxml_amber14_tip4pew_ala2
(tests/data/shared/topologies/README.md, reference/ffxml_amber14_tip4pew_ala2.json), for the virtual-site tests
(tests/io/test_system_xml_virtual_sites.cpp, tests/kernels/cuda/test_cuda_virtual_sites.cpp): OpenMM 7.7's
app.ForceField('amber14-all.xml', 'amber14/tip4pew.xml').createSystem for inputs/ffxml_amber14_tip4pew_ala2.pdb (the
prepared PDB: alanine dipeptide in water after Modeller.addExtraParticles, so it already holds the 749 TIP4P-Ew
extra points) with the reference's settings: PME 1.0 nm, ewaldErrorTolerance 5e-4, no constraints, rigid water off,
dispersion correction on (createSystem's default). Every force keeps group 0; the CMMotionRemover stays.

As a check, the script recomputes the energy by term on the Reference platform at the reference's positions
(reference/<name>.h5 positions_nm, sites placed) and compares it with the reference json; it fails on a mismatch.

Writes (into the folder of this script): system_xml_tip4pew_ala2.system.xml.gz (gzip, mtime 0: reproducible).
Regenerate with:  /usr/bin/python3 tests/data/make_system_xml_tip4pew.py   (deterministic)
"""
import copy
import gzip
import json
import os

import h5py
import numpy as np
import openmm as mm
from openmm import app, unit

HERE = os.path.dirname(os.path.abspath(__file__))
TOPOLOGIES = os.path.join(HERE, 'shared', 'topologies')
NAME = 'ffxml_amber14_tip4pew_ala2'


def build_system():
    pdb = app.PDBFile(os.path.join(TOPOLOGIES, 'inputs', NAME + '.pdb'))
    ff = app.ForceField('amber14-all.xml', 'amber14/tip4pew.xml')
    system = ff.createSystem(pdb.topology, nonbondedMethod=app.PME, nonbondedCutoff=1.0 * unit.nanometer,
                             ewaldErrorTolerance=5e-4, constraints=None, rigidWater=False)
    for f in system.getForces():
        if isinstance(f, mm.NonbondedForce):
            assert f.getUseDispersionCorrection()
    return pdb, system


def check_energies(system):
    """Energy by term at the reference positions against the reference json (1e-9 relative)."""
    with open(os.path.join(TOPOLOGIES, 'reference', NAME + '.json')) as f:
        reference = json.load(f)
    with h5py.File(os.path.join(TOPOLOGIES, 'reference', NAME + '.h5'), 'r') as f:
        positions = np.array(f['positions_nm'])
    s = copy.deepcopy(system)
    groups = {'HarmonicBondForce': 0, 'HarmonicAngleForce': 1, 'NonbondedForce': 2, 'PeriodicTorsionForce': 3}
    for f in s.getForces():
        f.setForceGroup(groups.get(type(f).__name__, 5))
        if isinstance(f, mm.NonbondedForce):
            f.setReciprocalSpaceForceGroup(4)
    context = mm.Context(s, mm.VerletIntegrator(0.001), mm.Platform.getPlatformByName('Reference'))
    context.setPositions(positions)
    context.computeVirtualSites()
    placed = context.getState(getPositions=True).getPositions(asNumpy=True).value_in_unit(unit.nanometer)
    assert np.max(np.abs(placed - positions)) < 1e-12, 'the reference positions are not placed sites'
    terms = {'bond': 0, 'angle': 1, 'nonbonded_direct': 2, 'torsion': 3, 'nonbonded_reciprocal': 4}
    for term, group in terms.items():
        e = context.getState(getEnergy=True, groups={group}).getPotentialEnergy().value_in_unit(unit.kilojoule_per_mole)
        want = reference['energies_kj_per_mol'][term]
        assert abs(e - want) <= 1e-9 * abs(want), (term, e, want)
        print(f'{term:22s} {e:.10f} (reference {want:.10f})')


def main():
    pdb, system = build_system()
    print('particles', system.getNumParticles(), 'virtual sites',
          sum(system.isVirtualSite(i) for i in range(system.getNumParticles())))
    check_energies(system)
    path = os.path.join(HERE, 'system_xml_tip4pew_ala2.system.xml.gz')
    with open(path, 'wb') as raw, gzip.GzipFile(fileobj=raw, mode='wb', mtime=0, filename='') as f:
        f.write(mm.XmlSerializer.serialize(system).encode())
    print('wrote', path, os.path.getsize(path), 'bytes')


if __name__ == '__main__':
    main()
