#!/usr/bin/python3
"""OpenMM 7.7 reference for tests/validation/test_minimize_villin_water.cpp: L-BFGS energy minimisation
of villin_water from the PDB coordinates, computed the way shared/reference/README.md describes the
"minimize" section of <name>.dynamics.json (which villin_water does not have).

Settings: amber14-all.xml + amber14/tip3p.xml, PME (cutoff 1.0 nm, Ewald error tolerance 5e-4, no
switching function, long-range dispersion correction on), constraints=HBonds, rigidWater=True, no
centre-of-mass motion remover; LocalEnergyMinimizer.minimize(context, tolerance=10 kJ/mol/nm,
maxIterations=0). Platform: CPU when this OpenMM build has it, otherwise Reference (Debian 12's
python3-simtk 7.7 ships only Reference); the JSON records which.

Recorded: the potential energy at the PDB coordinates (before constraints) and after minimisation,
the largest per-atom force norm after minimisation (raw, as OpenMM reports it, and with the
components along the constraints removed, f - J^T (J J^T)^-1 J f with unit masses, which is what
mdsim's MinimizationResult reports), the RMS per-atom force (OpenMM 7.7's stopping quantity), the
largest relative constraint deviation, and the seconds the minimisation took.

Regenerate with (from the repository root; takes a while on the Reference platform):
    /usr/bin/python3 tests/data/dyn_make_villin_water_minimize.py > tests/data/dyn_villin_water_minimize.json
"""
import json
import math
import os
import sys
import time

import numpy as np
import openmm as mm
import openmm.app as app
import openmm.unit as unit
import scipy.sparse
import scipy.sparse.linalg

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), '..', '..'))
PDB = os.path.join(ROOT, 'tests', 'data', 'shared', 'systems', 'villin_water.pdb')
FORCEFIELDS = [os.path.join(ROOT, 'forcefields', 'amber14-all.xml'),
               os.path.join(ROOT, 'forcefields', 'amber14', 'tip3p.xml')]
TOLERANCE = 10.0  # kJ/mol/nm
CUTOFF = 1.0  # nm
EWALD_TOLERANCE = 5e-4


def platform():
    names = [mm.Platform.getPlatform(i).getName() for i in range(mm.Platform.getNumPlatforms())]
    name = 'CPU' if 'CPU' in names else 'Reference'
    return mm.Platform.getPlatformByName(name), name


def constraint_geometry(system, x):
    """Pairs, target distances and the sparse Jacobian J (m x 3N) of r_ij = |x_i - x_j|."""
    m = system.getNumConstraints()
    pairs = np.empty((m, 2), dtype=np.int64)
    d = np.empty(m)
    for c in range(m):
        i, j, dist = system.getConstraintParameters(c)
        pairs[c] = (i, j)
        d[c] = dist.value_in_unit(unit.nanometer)
    r = x[pairs[:, 0]] - x[pairs[:, 1]]
    length = np.linalg.norm(r, axis=1)
    u = r / length[:, None]
    rows = np.repeat(np.arange(m), 6)
    cols = np.concatenate([3 * pairs[:, 0:1] + np.arange(3), 3 * pairs[:, 1:2] + np.arange(3)], axis=1).ravel()
    vals = np.concatenate([u, -u], axis=1).ravel()
    n3 = 3 * system.getNumParticles()
    jac = scipy.sparse.csr_matrix((vals, (rows, cols)), shape=(m, n3))
    return jac, length, d


def projected_forces(system, x, f):
    """f - J^T (J J^T)^-1 J f: forces without their components along the constraints (unit masses)."""
    jac, _, _ = constraint_geometry(system, x)
    flat = f.ravel()
    lam = scipy.sparse.linalg.spsolve((jac @ jac.T).tocsc(), jac @ flat)
    return (flat - jac.T @ lam).reshape(-1, 3)


def main():
    pdb = app.PDBFile(PDB)
    forcefield = app.ForceField(*FORCEFIELDS)
    system = forcefield.createSystem(pdb.topology, nonbondedMethod=app.PME,
                                     nonbondedCutoff=CUTOFF * unit.nanometer,
                                     ewaldErrorTolerance=EWALD_TOLERANCE, constraints=app.HBonds,
                                     rigidWater=True, removeCMMotion=False)
    for force in system.getForces():
        if isinstance(force, mm.NonbondedForce):
            assert not force.getUseSwitchingFunction()
            assert force.getUseDispersionCorrection()
    plat, plat_name = platform()
    context = mm.Context(system, mm.VerletIntegrator(0.001), plat)
    context.setPositions(pdb.positions)
    initial = context.getState(getEnergy=True).getPotentialEnergy().value_in_unit(unit.kilojoule_per_mole)

    start = time.time()
    mm.LocalEnergyMinimizer.minimize(context, TOLERANCE, 0)
    seconds = time.time() - start

    state = context.getState(getEnergy=True, getForces=True, getPositions=True)
    final = state.getPotentialEnergy().value_in_unit(unit.kilojoule_per_mole)
    f = np.array(state.getForces().value_in_unit(unit.kilojoule_per_mole / unit.nanometer))
    x = np.array(state.getPositions().value_in_unit(unit.nanometer))
    n = system.getNumParticles()
    norms = np.linalg.norm(f, axis=1)
    fp = projected_forces(system, x, f)
    _, length, d = constraint_geometry(system, x)
    print(f'{plat_name}: {initial:.3f} -> {final:.3f} kJ/mol in {seconds:.1f} s; max |f| {norms.max():.3f}, '
          f'constraints removed {np.linalg.norm(fp, axis=1).max():.3f} kJ/mol/nm', file=sys.stderr)

    dof = 3 * n - system.getNumConstraints()
    out = {
        'name': 'villin_water',
        'note': 'Made by tests/data/dyn_make_villin_water_minimize.py (OpenMM LocalEnergyMinimizer from the PDB '
                'coordinates, settings below); the same computation as the "minimize" section of '
                'shared/reference/<name>.dynamics.json, which villin_water lacks. max_force_norm_raw includes '
                'the constraint components (as OpenMM reports forces); max_force_norm_constraints_removed is '
                'f - J^T (J J^T)^-1 J f with unit masses, as mdsim\'s MinimizationResult reports it.',
        'openmm_version': mm.__version__,
        'platform': plat_name + (' (double precision; this OpenMM build has no CPU platform)'
                                 if plat_name == 'Reference' else ''),
        'atoms': n,
        'constraints': system.getNumConstraints(),
        'dof': dof,
        'settings': {
            'forcefield': ['amber14-all.xml', 'amber14/tip3p.xml'],
            'nonbonded_method': 'PME',
            'cutoff_nm': CUTOFF,
            'ewald_error_tolerance': EWALD_TOLERANCE,
            'switching': False,
            'dispersion_correction': True,
            'constraints': 'HBonds',
            'rigid_water': True,
            'remove_cm_motion': False,
        },
        'minimize': {
            'tolerance_kj_per_mol_nm': TOLERANCE,
            'max_iterations': 0,
            'initial_pe': initial,
            'final_pe': final,
            'final_max_force_norm_raw': float(norms.max()),
            'final_max_force_norm_constraints_removed': float(np.linalg.norm(fp, axis=1).max()),
            'final_rms_force': float(math.sqrt((norms ** 2).sum() / n)),
            'final_max_constraint_relative_deviation': float(np.max(np.abs(length - d) / d)),
            'seconds': round(seconds, 1),
        },
    }
    json.dump(out, sys.stdout, indent=1)
    sys.stdout.write('\n')


if __name__ == '__main__':
    main()
