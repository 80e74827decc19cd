#!/usr/bin/python3
"""Serialized OpenMM Systems (XmlSerializer) and their reference energies and forces, for the System XML reader's
tests (tests/io/test_system_xml*.cpp, tests/app/test_system_xml_command.cpp), from OpenMM 7.7's Reference platform
(double precision). Each System is what app.ForceField('amber14-all.xml', 'amber14/tip3p.xml').createSystem builds
for a shared PDB (tests/data/shared/systems):

  ala2_vacuum   ala2_vacuum.pdb, NoCutoff, no constraints (as createSystem's defaults but constraints=None);
                also its State (positions = the PDB's, velocities at 300 K from seed 1, no box) as a State XML
  water_pme     ala2_water.pdb, PME 1.0 nm, ewaldErrorTolerance 5e-4, HBonds, rigid water, dispersion correction
  water_cutoff  ala2_water.pdb, CutoffPeriodic 0.9 nm, switching from 0.8 nm, HBonds, rigid water, dispersion
                correction, plus a MonteCarloBarostat (1 bar, 300 K, every 25 steps)

Every System keeps createSystem's CMMotionRemover and its forces in group 0. The energies are computed on a copy
with one group per term (bond 0, angle 1, torsion 2, NonbondedForce 3 with its reciprocal space in 4) at the PDB's
positions, not constrained; the dispersion correction alone is the difference with it switched off.

Writes (into the folder of this script):
  system_xml_ala2_vacuum.system.xml, system_xml_ala2_vacuum.state.xml     plain text
  system_xml_water_pme.system.xml.gz, system_xml_water_cutoff.system.xml.gz  gzip (mtime 0: reproducible)
  system_xml_reference.json    per system: its files, counts, energies by term (kJ/mol)
  system_xml_reference.h5      /<system>/forces_kj_per_mol_nm (N x 3, float64) for every system

Regenerate with:  /usr/bin/python3 tests/data/make_system_xml_reference.py   (deterministic)
"""
import gzip
import json
import os

import h5py
import numpy as np
import openmm as mm
from openmm import app, unit

HERE = os.path.dirname(os.path.abspath(__file__))
SYSTEMS = os.path.join(HERE, 'shared', 'systems')
PLATFORM = mm.Platform.getPlatformByName('Reference')
FORCEFIELD = app.ForceField('amber14-all.xml', 'amber14/tip3p.xml')
GROUPS = {'HarmonicBondForce': 0, 'HarmonicAngleForce': 1, 'PeriodicTorsionForce': 2, 'NonbondedForce': 3}
TERMS = {'bond': 0, 'angle': 1, 'torsion': 2, 'nonbonded_direct': 3, 'nonbonded_reciprocal': 4}


def make_system(name):
    if name == 'ala2_vacuum':
        pdb = app.PDBFile(os.path.join(SYSTEMS, 'ala2_vacuum.pdb'))
        system = FORCEFIELD.createSystem(pdb.topology, nonbondedMethod=app.NoCutoff, constraints=None)
    elif name == 'water_pme':
        pdb = app.PDBFile(os.path.join(SYSTEMS, 'ala2_water.pdb'))
        system = FORCEFIELD.createSystem(pdb.topology, nonbondedMethod=app.PME, nonbondedCutoff=1.0 * unit.nanometer,
                                         ewaldErrorTolerance=5e-4, constraints=app.HBonds, rigidWater=True)
    else:
        pdb = app.PDBFile(os.path.join(SYSTEMS, 'ala2_water.pdb'))
        system = FORCEFIELD.createSystem(pdb.topology, nonbondedMethod=app.CutoffPeriodic,
                                         nonbondedCutoff=0.9 * unit.nanometer, switchDistance=0.8 * unit.nanometer,
                                         constraints=app.HBonds, rigidWater=True)
        system.addForce(mm.MonteCarloBarostat(1.0 * unit.bar, 300.0 * unit.kelvin, 25))
    return pdb, system


def energies_and_forces(system, positions):
    copy = mm.XmlSerializer.deserialize(mm.XmlSerializer.serialize(system))
    nonbonded = None
    for force in copy.getForces():
        if type(force).__name__ in GROUPS:
            force.setForceGroup(GROUPS[type(force).__name__])
        if isinstance(force, mm.NonbondedForce):
            force.setReciprocalSpaceForceGroup(4)
            nonbonded = force
    context = mm.Context(copy, mm.VerletIntegrator(1e-3), PLATFORM)
    context.setPositions(positions)
    energies = {}
    for term, group in TERMS.items():
        state = context.getState(getEnergy=True, groups={group})
        energies[term] = state.getPotentialEnergy().value_in_unit(unit.kilojoule_per_mole)
    total = context.getState(getEnergy=True, getForces=True)
    energies['total'] = total.getPotentialEnergy().value_in_unit(unit.kilojoule_per_mole)
    forces = np.array(total.getForces(asNumpy=True).value_in_unit(unit.kilojoule_per_mole / unit.nanometer))
    energies['dispersion_correction'] = 0.0
    if nonbonded.getUseDispersionCorrection():
        nonbonded.setUseDispersionCorrection(False)
        context.reinitialize(preserveState=True)
        without = context.getState(getEnergy=True, groups={3}).getPotentialEnergy()
        energies['dispersion_correction'] = energies['nonbonded_direct'] - without.value_in_unit(
            unit.kilojoule_per_mole)
    return energies, forces


def counts(system):
    out = {'particles': system.getNumParticles(), 'constraints': system.getNumConstraints()}
    for force in system.getForces():
        if isinstance(force, mm.HarmonicBondForce):
            out['bonds'] = force.getNumBonds()
        elif isinstance(force, mm.HarmonicAngleForce):
            out['angles'] = force.getNumAngles()
        elif isinstance(force, mm.PeriodicTorsionForce):
            out['torsions'] = force.getNumTorsions()
        elif isinstance(force, mm.NonbondedForce):
            out['exceptions'] = force.getNumExceptions()
    return out


def write_text(path, text, compress):
    data = text.encode()
    if compress:
        with open(path, 'wb') as raw, gzip.GzipFile(filename='', mode='wb', fileobj=raw, mtime=0) as f:
            f.write(data)
    else:
        with open(path, 'wb') as f:
            f.write(data)


def vacuum_state(system, positions):
    context = mm.Context(system, mm.VerletIntegrator(1e-3), PLATFORM)
    context.setPositions(positions)
    context.setVelocitiesToTemperature(300.0 * unit.kelvin, 1)
    return mm.XmlSerializer.serialize(context.getState(getPositions=True, getVelocities=True))


def main():
    reference = {'openmm': mm.__version__, 'platform': 'Reference', 'systems': {}}
    with h5py.File(os.path.join(HERE, 'system_xml_reference.h5'), 'w') as h5:
        for name in ('ala2_vacuum', 'water_pme', 'water_cutoff'):
            pdb, system = make_system(name)
            compress = name != 'ala2_vacuum'
            file = 'system_xml_{}.system.xml{}'.format(name, '.gz' if compress else '')
            write_text(os.path.join(HERE, file), mm.XmlSerializer.serialize(system), compress)
            energies, forces = energies_and_forces(system, pdb.positions)
            entry = {'file': file, 'counts': counts(system), 'energies_kj_per_mol': energies}
            if name == 'ala2_vacuum':
                state = 'system_xml_ala2_vacuum.state.xml'
                write_text(os.path.join(HERE, state), vacuum_state(system, pdb.positions), False)
                entry['state_file'] = state
            reference['systems'][name] = entry
            h5.create_dataset(name + '/forces_kj_per_mol_nm', data=forces)
    with open(os.path.join(HERE, 'system_xml_reference.json'), 'w') as f:
        json.dump(reference, f, indent=1)
        f.write('\n')


if __name__ == '__main__':
    main()
