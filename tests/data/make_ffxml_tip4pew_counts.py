#!/usr/bin/python3
"""What OpenMM 7.7's app.ForceField('amber14-all.xml', 'amber14/tip4pew.xml').createSystem builds for the shared case
ffxml_amber14_tip4pew_ala2 (inputs/ffxml_amber14_tip4pew_ala2.pdb: alanine dipeptide in TIP4P-Ew water with its 749
M extra points) under the constraint settings the template-path test (tests/kernels/cpu/test_cpu_ffxml_tip4pew.cpp)
checks besides the shared reference's flexible one: per setting the numbers of constraints, virtual sites, bonds,
angles, exceptions and, to pin the site definition, the first site's particle, parents and weights and the exceptions
of the first water (particle indices 0-based).

Writes (into the folder of this script): ffxml_tip4pew_counts.json.
Regenerate with:  /usr/bin/python3 tests/data/make_ffxml_tip4pew_counts.py   (deterministic)
"""
import json
import os

import openmm as mm
from openmm import app, unit

HERE = os.path.dirname(os.path.abspath(__file__))
PDB = os.path.join(HERE, 'shared', 'topologies', 'inputs', 'ffxml_amber14_tip4pew_ala2.pdb')

SETTINGS = {
    'flexible': dict(constraints=None, rigidWater=False),
    'rigid_water': dict(constraints=None, rigidWater=True),
    'hbonds_rigid_water': dict(constraints=app.HBonds, rigidWater=True),
}


def summary(system):
    out = {'particles': system.getNumParticles(), 'constraints': system.getNumConstraints()}
    sites = [i for i in range(system.getNumParticles()) if system.isVirtualSite(i)]
    out['virtual_sites'] = len(sites)
    out['massless'] = sum(1 for i in range(system.getNumParticles()) if system.getParticleMass(i) == 0 * unit.amu)
    first = system.getVirtualSite(sites[0])
    out['first_site'] = {'particle': sites[0], 'parents': [first.getParticle(k) for k in range(3)],
                         'weights': [first.getWeight(k) for k in range(3)]}
    for f in system.getForces():
        if isinstance(f, mm.HarmonicBondForce):
            out['bonds'] = f.getNumBonds()
        elif isinstance(f, mm.HarmonicAngleForce):
            out['angles'] = f.getNumAngles()
        elif isinstance(f, mm.NonbondedForce):
            out['exceptions'] = f.getNumExceptions()
            water = set(range(sites[0] - 3, sites[0] + 1))
            rows = []
            for k in range(f.getNumExceptions()):
                i, j, q, s, e = f.getExceptionParameters(k)
                if i in water and j in water:
                    rows.append([i, j, q.value_in_unit(unit.elementary_charge ** 2),
                                 e.value_in_unit(unit.kilojoule_per_mole)])
            out['first_water_exceptions'] = rows
    return out


def main():
    pdb = app.PDBFile(PDB)
    ff = app.ForceField('amber14-all.xml', 'amber14/tip4pew.xml')
    result = {'openmm_version': mm.__version__, 'pdb': os.path.relpath(PDB, HERE),
              'forcefield': ['amber14-all.xml', 'amber14/tip4pew.xml'], 'nonbonded_method': 'PME',
              'cutoff_nm': 1.0}
    for name, kw in SETTINGS.items():
        system = ff.createSystem(pdb.topology, nonbondedMethod=app.PME, nonbondedCutoff=1.0 * unit.nanometer, **kw)
        result[name] = summary(system)
    with open(os.path.join(HERE, 'ffxml_tip4pew_counts.json'), 'w') as f:
        json.dump(result, f, indent=1, sort_keys=True)
        f.write('\n')


if __name__ == '__main__':
    main()
