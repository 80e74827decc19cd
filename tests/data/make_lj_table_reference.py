#!/usr/bin/python3
"""A tiny System with a pair-specific Lennard-Jones table (two types, the 0-1 pair off the Lorentz-Berthelot rule),
for the test of System::lj_types on the CPU platform (tests/kernels/cpu/test_cpu_lj_table.cpp), from OpenMM 7.7's
Reference platform (double precision).

Five particles in a 3 nm cubic box; a NonbondedForce (CutoffPeriodic 1.2 nm, switching from 0.9 nm, no charges, no
LJ of its own: epsilon 0, dispersion correction on) with one exception (particles 0 and 1: sigma 0.25 nm, epsilon
0.3 kJ/mol) and a CustomNonbondedForce 'acoef(type1, type2)/r^12 - bcoef(type1, type2)/r^6;' (ForceField's form,
acoef = c12) with the same cutoff, switching and its long-range correction on, excluding the exception's pair. The
positions put pairs below the switching distance, inside the switching region and beyond the cutoff.

Writes (beside this script):
  lj_table_tiny.system.xml   the serialized System
  lj_table_reference.json    positions, energies (kJ/mol): custom_nonbonded (with the long-range correction),
                             long_range_correction (the difference with it switched off, as OpenMM integrates it),
                             nonbonded (the exception), forces (N x 3, kJ/mol/nm, all forces together)
Regenerate with:  /usr/bin/python3 tests/data/make_lj_table_reference.py   (deterministic)
"""
import json
import os

import openmm as mm
from openmm import unit

HERE = os.path.dirname(os.path.abspath(__file__))
SIGMA = [0.30, 0.35]     # nm, per type
EPSILON = [0.50, 0.80]   # kJ/mol, per type
OFF_RULE = (0.31, 1.50)  # sigma, epsilon of the 0-1 type pair
TYPES = [0, 1, 1, 0, 0]
POSITIONS = [[0.5, 0.5, 0.5], [0.85, 0.5, 0.5], [0.5, 1.45, 0.5], [0.5, 0.5, 1.55], [2.9, 0.45, 0.6]]


def table():
    acoef, bcoef = [0.0] * 4, [0.0] * 4
    for i in range(2):
        for j in range(2):
            if i != j:
                s, e = OFF_RULE
            else:
                s, e = SIGMA[i], EPSILON[i]
            acoef[i + 2 * j] = 4 * e * s ** 12
            bcoef[i + 2 * j] = 4 * e * s ** 6
    return acoef, bcoef


def make_system():
    system = mm.System()
    for _ in TYPES:
        system.addParticle(12.0)
    system.setDefaultPeriodicBoxVectors(mm.Vec3(3, 0, 0), mm.Vec3(0, 3, 0), mm.Vec3(0, 0, 3))
    nb = mm.NonbondedForce()
    nb.setNonbondedMethod(mm.NonbondedForce.CutoffPeriodic)
    nb.setCutoffDistance(1.2)
    nb.setUseSwitchingFunction(True)
    nb.setSwitchingDistance(0.9)
    nb.setUseDispersionCorrection(True)
    for _ in TYPES:
        nb.addParticle(0.0, 0.3, 0.0)
    nb.addException(0, 1, 0.0, 0.25, 0.3)
    nb.setForceGroup(0)
    system.addForce(nb)
    lj = mm.CustomNonbondedForce('acoef(type1, type2)/r^12 - bcoef(type1, type2)/r^6;')
    lj.addPerParticleParameter('type')
    acoef, bcoef = table()
    lj.addTabulatedFunction('acoef', mm.Discrete2DFunction(2, 2, acoef))
    lj.addTabulatedFunction('bcoef', mm.Discrete2DFunction(2, 2, bcoef))
    for t in TYPES:
        lj.addParticle([t])
    lj.addExclusion(0, 1)
    lj.setNonbondedMethod(mm.CustomNonbondedForce.CutoffPeriodic)
    lj.setCutoffDistance(1.2)
    lj.setUseSwitchingFunction(True)
    lj.setSwitchingDistance(0.9)
    lj.setUseLongRangeCorrection(True)
    lj.setForceGroup(1)
    system.addForce(lj)
    return system, lj


def energies(system, groups=None):
    context = mm.Context(system, mm.VerletIntegrator(0.001), mm.Platform.getPlatformByName('Reference'))
    context.setPositions(POSITIONS)
    state = context.getState(getEnergy=True, getForces=True, groups=groups if groups is not None else -1)
    return (state.getPotentialEnergy().value_in_unit(unit.kilojoule_per_mole),
            state.getForces(asNumpy=True).value_in_unit(unit.kilojoule_per_mole / unit.nanometer).tolist())


def main():
    system, lj = make_system()
    with open(os.path.join(HERE, 'lj_table_tiny.system.xml'), 'w') as f:
        f.write(mm.XmlSerializer.serialize(system))
    custom, _ = energies(system, {1})
    nonbonded, _ = energies(system, {0})
    _, forces = energies(system)
    lj.setUseLongRangeCorrection(False)
    without, _ = energies(system, {1})
    out = {'positions_nm': POSITIONS, 'box_nm': 3.0,
           'energies_kj_per_mol': {'custom_nonbonded': custom, 'long_range_correction': custom - without,
                                   'nonbonded': nonbonded},
           'forces_kj_per_mol_nm': forces}
    with open(os.path.join(HERE, 'lj_table_reference.json'), 'w') as f:
        json.dump(out, f, indent=1)


if __name__ == '__main__':
    main()
