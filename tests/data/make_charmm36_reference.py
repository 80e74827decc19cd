#!/usr/bin/python3
"""OpenMM 7.7's app.ForceField('charmm36.xml', 'charmm36/water.xml').createSystem for the template-path CHARMM test
(tests/kernels/cpu/test_cpu_ffxml_charmm36.cpp): tri-alanine with CHARMM's standard termini (the NTER and CTER
patches) in TIP3P water, from the shared case charmm_ala3_solv (inputs/ala3_solv.psf + .crd, box of
reference/charmm_ala3_solv.json) written once as a PDB (charmm36_ala3_water.pdb, and the peptide alone as
charmm36_ala3_vacuum.pdb); energies and forces are those of the positions read back from the PDBs.

A third case, 'bpti' (NoCutoff): BPTI (charmm36_bpti.pdb, OpenMM's wrappers/python/tests/systems/bpti.pdb, MIT
licence: PDBFixer output with hydrogens), whose three disulfides need the two-residue DISU patch.

The cases 'water' (PME 1.0 nm, ewaldErrorTolerance 5e-4), 'vacuum' and 'bpti' (NoCutoff): constraints=None,
rigidWater=False, the force field's own dispersion-correction setting (off). Each term in a force group of its own
on the Reference platform: bond (the HarmonicBondForce's entries on topology bonds), urey_bradley (its other entries:
AmoebaUreyBradleyForce puts them into the same HarmonicBondForce), angle, torsion (PeriodicTorsionForce), improper
(CustomTorsionForce), cmap, nonbonded_direct (NonbondedForce direct space + the LennardJones CustomNonbondedForce +
the LennardJones14 CustomBondForce), nonbonded_reciprocal, total.

Writes (beside this script): charmm36_ala3_{water,vacuum}.pdb, charmm36_ala3_reference.json (energies, counts) and
charmm36_ala3_reference.h5 (<case>/forces_kj_per_mol_nm/<term>, <case>/positions_nm).
Regenerate with:  /usr/bin/python3 tests/data/make_charmm36_reference.py   (deterministic)
"""
import json
import os

import h5py
import numpy as np
import openmm as mm
from openmm import app, unit

HERE = os.path.dirname(os.path.abspath(__file__))
TOPOLOGIES = os.path.join(HERE, 'shared', 'topologies')
INPUTS = os.path.join(TOPOLOGIES, 'inputs')
TERMS = ['bond', 'urey_bradley', 'angle', 'torsion', 'improper', 'cmap', 'nonbonded_direct',
         'nonbonded_reciprocal']


def write_pdbs():
    with open(os.path.join(TOPOLOGIES, 'reference', 'charmm_ala3_solv.json')) as f:
        box = json.load(f)['box_nm']
    psf = app.CharmmPsfFile(os.path.join(INPUTS, 'ala3_solv.psf'))
    crd = app.CharmmCrdFile(os.path.join(INPUTS, 'ala3_solv.crd'))
    top = psf.topology
    top.setPeriodicBoxVectors([mm.Vec3(*row) for row in box] * unit.nanometer)
    water = os.path.join(HERE, 'charmm36_ala3_water.pdb')
    with open(water, 'w') as f:
        app.PDBFile.writeFile(top, crd.positions, f)
    modeller = app.Modeller(top, crd.positions)
    modeller.delete([r for r in top.residues() if r.name != 'ALA'])
    modeller.topology.setPeriodicBoxVectors(None)
    vacuum = os.path.join(HERE, 'charmm36_ala3_vacuum.pdb')
    with open(vacuum, 'w') as f:
        app.PDBFile.writeFile(modeller.topology, modeller.positions, f)
    return {'water': water, 'vacuum': vacuum}


def split_forces(system, topology):
    """One force group per term; Urey-Bradley entries moved out of the HarmonicBondForce into a force of their own."""
    bonded = set()
    for a, b in topology.bonds():
        bonded.add((min(a.index, b.index), max(a.index, b.index)))
    ub = mm.HarmonicBondForce()
    counts = {}
    for force in list(system.getForces()):
        if isinstance(force, mm.HarmonicBondForce):
            force.setForceGroup(0)
            rows = [force.getBondParameters(k) for k in range(force.getNumBonds())]
            n_bond = 0
            for k, (i, j, r0, kb) in enumerate(rows):
                if (min(i, j), max(i, j)) in bonded:
                    n_bond += 1
                else:
                    ub.addBond(i, j, r0, kb)
                    force.setBondParameters(k, i, j, r0, 0.0)
            counts['bond'] = n_bond
        elif isinstance(force, mm.HarmonicAngleForce):
            force.setForceGroup(2)
            counts['angle'] = force.getNumAngles()
        elif isinstance(force, mm.PeriodicTorsionForce):
            force.setForceGroup(3)
            counts['torsion'] = force.getNumTorsions()
        elif isinstance(force, mm.CustomTorsionForce):
            force.setForceGroup(4)
            counts['improper'] = force.getNumTorsions()
        elif isinstance(force, mm.CMAPTorsionForce):
            force.setForceGroup(5)
            counts['cmap'] = force.getNumTorsions()
        elif isinstance(force, mm.NonbondedForce):
            force.setForceGroup(6)
            force.setReciprocalSpaceForceGroup(7)
            counts['exceptions'] = force.getNumExceptions()
        elif isinstance(force, (mm.CustomNonbondedForce, mm.CustomBondForce)):
            force.setForceGroup(6)
            if isinstance(force, mm.CustomBondForce):
                counts['lj14'] = force.getNumBonds()
        else:
            force.setForceGroup(9)
    ub.setForceGroup(1)
    system.addForce(ub)
    counts['urey_bradley'] = ub.getNumBonds()
    return counts


def evaluate(path, method, h5):
    pdb = app.PDBFile(path)
    ff = app.ForceField('charmm36.xml', 'charmm36/water.xml')
    kw = dict(nonbondedMethod=method, constraints=None, rigidWater=False)
    if method is app.PME:
        kw.update(nonbondedCutoff=1.0 * unit.nanometer, ewaldErrorTolerance=5e-4)
    system = ff.createSystem(pdb.topology, **kw)
    counts = split_forces(system, pdb.topology)
    counts['particles'] = system.getNumParticles()
    context = mm.Context(system, mm.VerletIntegrator(0.001), mm.Platform.getPlatformByName('Reference'))
    context.setPositions(pdb.positions)
    energies = {}
    groups = {name: 1 << k for k, name in enumerate(TERMS)}
    groups['total'] = sum(groups.values())
    for name, mask in groups.items():
        state = context.getState(getEnergy=True, getForces=True, groups=mask)
        energies[name] = state.getPotentialEnergy().value_in_unit(unit.kilojoule_per_mole)
        h5[name] = state.getForces(asNumpy=True).value_in_unit(unit.kilojoule_per_mole / unit.nanometer)
    h5.parent['positions_nm'] = np.array(pdb.positions.value_in_unit(unit.nanometer))
    return {'energies_kj_per_mol': energies, 'counts': counts}


def main():
    pdbs = write_pdbs()
    result = {'openmm_version': mm.__version__, 'forcefield': ['charmm36.xml', 'charmm36/water.xml'],
              'water': {'pdb': 'charmm36_ala3_water.pdb', 'nonbonded_method': 'PME', 'cutoff_nm': 1.0,
                        'ewald_error_tolerance': 5e-4},
              'vacuum': {'pdb': 'charmm36_ala3_vacuum.pdb', 'nonbonded_method': 'NoCutoff'},
              'bpti': {'pdb': 'charmm36_bpti.pdb', 'nonbonded_method': 'NoCutoff'}}
    pdbs['bpti'] = os.path.join(HERE, 'charmm36_bpti.pdb')
    with h5py.File(os.path.join(HERE, 'charmm36_ala3_reference.h5'), 'w') as h5:
        for case, method in (('water', app.PME), ('vacuum', app.NoCutoff), ('bpti', app.NoCutoff)):
            group = h5.create_group(case).create_group('forces_kj_per_mol_nm')
            result[case].update(evaluate(pdbs[case], method, group))
    with open(os.path.join(HERE, 'charmm36_ala3_reference.json'), 'w') as f:
        json.dump(result, f, indent=1, sort_keys=True)
        f.write('\n')


if __name__ == '__main__':
    main()
