#!/usr/bin/env python3
"""OpenMM 7.7 references for tests/io/test_amber_prmtop.cpp and tests/model/test_creation_options.cpp.

Writes amber_reference.json beside this script:
  peptide_tip4p: the virtual sites AmberPrmtopFile makes of the TIP4P extra points and the truncated-octahedron
                 box vectors (tests/data/shared/topologies/inputs/peptide_with_tip4p.prmtop);
  ala2_implicit: energies by force (NoCutoff) and forces of alanine-dipeptide-implicit.prmtop/.inpcrd (this folder;
                 from OpenMM's wrappers/python/tests/systems, MIT licence);
  ala2_cmap:     the implicit dipeptide with a CMAP term added (alanine-dipeptide-cmap.prmtop, written here): energies
                 and forces without cutoff;
  ff14ipq:       a prmtop whose LJ table breaks the combining rule (ff14ipq.parm7/.rst7, OpenMM's test folder): type
                 count, a few A/B table entries as OpenMM's CustomNonbondedForce holds them, energies by force (PME
                 0.9 nm);
  phenol_gaff:   a GAFF small molecule (phenol: types ca, oh, ha, ho; phenol_gaff.prmtop from ParmEd's test files,
                 github:ParmEd/ParmEd test/files/phenol.prmtop, LGPL 2.1) at positions built here (phenol_gaff.inpcrd: a
                 planar ring from the prmtop's bond lengths, each atom then moved by up to 0.05 Å with a fixed seed):
                 energies by force (NoCutoff) and forces;
  creation:      createSystem(constraints, rigidWater, hydrogenMass, flexibleConstraints) of alanine-dipeptide-explicit:
                 counts, the solute's constraints, the constraint distance sum, the hydrogen mass total.
Run with OpenMM 7.7: /usr/bin/python3 make_amber_reference.py
"""
import json
import os
from xml.etree import ElementTree

import openmm as mm
import openmm.app as app
import openmm.unit as u
from openmm.app.internal import amber_file_parser

HERE = os.path.dirname(os.path.abspath(__file__))
SHARED = os.path.join(HERE, '..', 'shared', 'topologies', 'inputs')


def energies(system, positions, box=None):
    for i, f in enumerate(system.getForces()):
        f.setForceGroup(i)
        if isinstance(f, mm.NonbondedForce) and f.getNonbondedMethod() == mm.NonbondedForce.PME:
            f.setReciprocalSpaceForceGroup(20)
    ctx = mm.Context(system, mm.VerletIntegrator(0.001), mm.Platform.getPlatformByName('Reference'))
    if box is not None:
        ctx.setPeriodicBoxVectors(*box)
    ctx.setPositions(positions)
    out = {}
    names = {'HarmonicBondForce': 'bond', 'HarmonicAngleForce': 'angle', 'PeriodicTorsionForce': 'torsion',
             'NonbondedForce': 'nonbonded_direct', 'CustomNonbondedForce': 'custom_nonbonded',
             'CMAPTorsionForce': 'cmap'}
    for i, f in enumerate(system.getForces()):
        name = names.get(type(f).__name__)
        if name:
            out[name] = ctx.getState(getEnergy=True, groups={i}).getPotentialEnergy().value_in_unit(u.kilojoule_per_mole)
    out['nonbonded_reciprocal'] = ctx.getState(getEnergy=True, groups={20}).getPotentialEnergy().value_in_unit(
        u.kilojoule_per_mole)
    state = ctx.getState(getEnergy=True, getForces=True)
    out['total'] = state.getPotentialEnergy().value_in_unit(u.kilojoule_per_mole)
    forces = state.getForces(asNumpy=True).value_in_unit(u.kilojoule_per_mole / u.nanometer)
    return out, [[float(x) for x in row] for row in forces]


def tip4p():
    prmtop = app.AmberPrmtopFile(os.path.join(SHARED, 'peptide_with_tip4p.prmtop'))
    system = prmtop.createSystem(nonbondedMethod=app.PME, nonbondedCutoff=0.5 * u.nanometer, constraints=None,
                                 rigidWater=False)
    sites = []
    for i in range(system.getNumParticles()):
        if system.isVirtualSite(i):
            s = system.getVirtualSite(i)
            assert isinstance(s, mm.ThreeParticleAverageSite)
            sites.append({'particle': i, 'parents': [s.getParticle(k) for k in range(3)],
                          'weights': [s.getWeight(k) for k in range(3)]})
    box = [[v.value_in_unit(u.nanometer)[k] for k in range(3)] for v in system.getDefaultPeriodicBoxVectors()]
    return {'virtual_sites': sites, 'box_nm': box}


def implicit():
    prmtop = app.AmberPrmtopFile(os.path.join(HERE, 'alanine-dipeptide-implicit.prmtop'))
    inpcrd = app.AmberInpcrdFile(os.path.join(HERE, 'alanine-dipeptide-implicit.inpcrd'))
    system = prmtop.createSystem(nonbondedMethod=app.NoCutoff, constraints=None, rigidWater=False,
                                 removeCMMotion=False)
    e, f = energies(system, inpcrd.positions)
    return {'energies_kj_per_mol': e, 'forces_kj_per_mol_nm': f, 'exceptions': system.getForces()[3].getNumExceptions()}


def phenol_inpcrd(path):
    """Phenol's 13 atoms in the prmtop's order (C1..C6 ring, O1 on C4, H1 H2 H3 on C1 C2 C3, H4 H5 on C5 C6, H6 on
    O1), Å, written as an inpcrd (6F12.7)."""
    import math
    import random
    rng = random.Random(2026)
    ring, ch, co, oh = 1.387, 1.087, 1.362, 0.974
    xyz = [(ring * math.cos(math.radians(60 * k)), ring * math.sin(math.radians(60 * k)), 0.0) for k in range(6)]
    out = {k: xyz[k] for k in range(6)}
    direction = lambda k: (math.cos(math.radians(60 * k)), math.sin(math.radians(60 * k)))
    d4 = direction(3)
    out[6] = ((ring + co) * d4[0], (ring + co) * d4[1], 0.0)
    for atom, k in zip((7, 8, 9, 10, 11), (0, 1, 2, 4, 5)):
        d = direction(k)
        out[atom] = ((ring + ch) * d[0], (ring + ch) * d[1], 0.0)
    angle = math.radians(180 + 180 - 109.5)  # the O-H bond 109.5 degrees from O-C4, in the ring's plane
    out[12] = (out[6][0] + oh * math.cos(angle), out[6][1] + oh * math.sin(angle), 0.0)
    coords = [tuple(c + rng.uniform(-0.05, 0.05) for c in out[k]) for k in range(13)]
    values = [v for c in coords for v in c]
    lines = ["phenol (make_amber_reference.py)", "%6d" % len(coords)]
    for i in range(0, len(values), 6):
        lines.append("".join("%12.7f" % v for v in values[i:i + 6]))
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


def phenol():
    phenol_inpcrd(os.path.join(HERE, 'phenol_gaff.inpcrd'))
    prmtop = app.AmberPrmtopFile(os.path.join(HERE, 'phenol_gaff.prmtop'))
    inpcrd = app.AmberInpcrdFile(os.path.join(HERE, 'phenol_gaff.inpcrd'))
    system = prmtop.createSystem(nonbondedMethod=app.NoCutoff, constraints=None, rigidWater=False,
                                 removeCMMotion=False)
    e, f = energies(system, inpcrd.positions)
    return {'energies_kj_per_mol': e, 'forces_kj_per_mol_nm': f,
            'exceptions': [x for x in system.getForces() if isinstance(x, mm.NonbondedForce)][0].getNumExceptions(),
            'torsions': [x for x in system.getForces() if isinstance(x, mm.PeriodicTorsionForce)][0].getNumTorsions()}


def ff14ipq():
    prmtop = app.AmberPrmtopFile(os.path.join(HERE, 'ff14ipq.parm7'))
    inpcrd = app.AmberInpcrdFile(os.path.join(HERE, 'ff14ipq.rst7'))
    system = prmtop.createSystem(nonbondedMethod=app.PME, nonbondedCutoff=0.9 * u.nanometer, constraints=None,
                                 rigidWater=False, removeCMMotion=False)
    custom = [f for f in system.getForces() if isinstance(f, mm.CustomNonbondedForce)][0]
    nb = [f for f in system.getForces() if isinstance(f, mm.NonbondedForce)][0]
    # The Discrete2DFunctions' values, from the serialized force (7.7's Python has no downcast of TabulatedFunction).
    functions = ElementTree.fromstring(mm.XmlSerializer.serialize(custom)).find('Functions')
    values = {f.get('name'): (int(f.get('xsize')), [float(v.get('v')) for v in f.find('Values')]) for f in functions}
    n, acoef = values['acoef']
    bcoef = values['bcoef'][1]
    table = [{'t1': i, 't2': j, 'c12': acoef[i + n * j] ** 2, 'c6': bcoef[i + n * j]}
             for i, j in ((0, 0), (0, 1), (2, 5), (n - 1, n - 1), (3, n - 2))]
    types = [int(custom.getParticleParameters(i)[0]) for i in range(system.getNumParticles())]
    e, _ = energies(system, inpcrd.positions, inpcrd.boxVectors)
    exceptions = [nb.getExceptionParameters(k) for k in (0, 1, nb.getNumExceptions() - 1)]
    return {'num_types': n, 'table': table, 'particle_type_first': types[:10], 'energies_kj_per_mol': e,
            'num_exceptions': nb.getNumExceptions(),
            'exceptions': [[a, b, q.value_in_unit(u.elementary_charge ** 2), s.value_in_unit(u.nanometer),
                            ep.value_in_unit(u.kilojoule_per_mole)] for a, b, q, s, ep in exceptions]}


def with_cmap():
    """The implicit dipeptide with a CMAP term on its phi/psi (a smooth, asymmetric 24 x 24 map), written as
    alanine-dipeptide-cmap.prmtop; OpenMM's energies of it."""
    import math
    with open(os.path.join(HERE, 'alanine-dipeptide-implicit.prmtop')) as f:
        text = f.read()
    prmtop = app.AmberPrmtopFile(os.path.join(HERE, 'alanine-dipeptide-implicit.prmtop'))
    atoms = {(a.residue.name, a.name): a.index + 1 for a in prmtop.topology.atoms()}
    index = [atoms[('ACE', 'C')], atoms[('ALA', 'N')], atoms[('ALA', 'CA')], atoms[('ALA', 'C')], atoms[('NME', 'N')], 1]
    n = 24
    # Row = phi, column = psi, both from -180 degrees in 15-degree steps (kcal/mol).
    grid = [1.5 * math.cos(math.radians(-180 + 15 * i) - 0.3) + 0.8 * math.sin(2 * math.radians(-180 + 15 * j))
            + 0.4 * math.cos(math.radians(-180 + 15 * i) + math.radians(-180 + 15 * j)) + 0.01 * i
            for i in range(n) for j in range(n)]
    lines = ['%FLAG CMAP_COUNT', '%FORMAT(2I8)', '%8d%8d' % (1, 1), '%FLAG CMAP_RESOLUTION', '%FORMAT(20I4)', '%4d' % n,
             '%FLAG CMAP_PARAMETER_01', '%FORMAT(8(F9.5))']
    lines += [''.join('%9.5f' % v for v in grid[k:k + 8]) for k in range(0, len(grid), 8)]
    lines += ['%FLAG CMAP_INDEX', '%FORMAT(6I8)', ''.join('%8d' % v for v in index)]
    path = os.path.join(HERE, 'alanine-dipeptide-cmap.prmtop')
    with open(path, 'w') as f:
        f.write(text + '\n'.join(lines) + '\n')
    inpcrd = app.AmberInpcrdFile(os.path.join(HERE, 'alanine-dipeptide-implicit.inpcrd'))
    system = app.AmberPrmtopFile(path).createSystem(nonbondedMethod=app.NoCutoff, constraints=None,
                                                    rigidWater=False, removeCMMotion=False)
    e, f = energies(system, inpcrd.positions)
    return {'energies_kj_per_mol': e, 'forces_kj_per_mol_nm': f}


def creation():
    prmtop = app.AmberPrmtopFile(os.path.join(SHARED, 'alanine-dipeptide-explicit.prmtop'))
    cases = {'none_flexible': (None, False, None, False), 'none_rigid': (None, True, None, False),
             'hbonds_rigid': (app.HBonds, True, None, False), 'hbonds_flexible_water': (app.HBonds, False, None, False),
             'allbonds_rigid': (app.AllBonds, True, None, False), 'hangles_rigid': (app.HAngles, True, None, False),
             'hangles_flexible_water': (app.HAngles, False, None, False),
             'hbonds_hmass': (app.HBonds, True, 4.0, False), 'hbonds_hmass_flexible_water': (app.HBonds, False, 3.0, False),
             'hbonds_flexible_constraints': (app.HBonds, True, None, True)}
    out = {}
    for name, (constraints, rigid, hmass, flexible) in cases.items():
        if flexible:  # 7.7's createSystem has no flexibleConstraints; its reader has
            shake = {app.HBonds: 'h-bonds', app.AllBonds: 'all-bonds', app.HAngles: 'h-angles'}[constraints]
            system = amber_file_parser.readAmberSystem(prmtop.topology, prmtop_loader=prmtop._prmtop, shake=shake,
                                                       nonbondedCutoff=1.0 * u.nanometer, nonbondedMethod='PME',
                                                       flexibleConstraints=True, rigidWater=rigid)
        else:
            system = prmtop.createSystem(nonbondedMethod=app.PME, constraints=constraints, rigidWater=rigid,
                                         hydrogenMass=None if hmass is None else hmass * u.amu)
        cons = [system.getConstraintParameters(k) for k in range(system.getNumConstraints())]
        cons = [(i, j, d.value_in_unit(u.nanometer)) for i, j, d in cons]
        masses = [system.getParticleMass(i).value_in_unit(u.amu) for i in range(system.getNumParticles())]
        forces = {type(f).__name__: f for f in system.getForces()}
        hydrogens = [a.index for a in prmtop.topology.atoms() if a.element == app.element.hydrogen]
        out[name] = {'constraints': len(cons), 'distance_sum_nm': sum(c[2] for c in cons),
                     'solute_constraints': [list(c) for c in cons if c[0] < 22 and c[1] < 22],
                     'bonds': forces['HarmonicBondForce'].getNumBonds(),
                     'angles': forces['HarmonicAngleForce'].getNumAngles(),
                     'hydrogen_mass_amu': sum(masses[i] for i in hydrogens), 'solute_masses_amu': masses[:22],
                     'total_mass_amu': sum(masses)}
    return out


def main():
    ref = {'openmm_version': mm.__version__, 'peptide_tip4p': tip4p(), 'ala2_implicit': implicit(),
           'ff14ipq': ff14ipq(), 'ala2_cmap': with_cmap(), 'creation': creation(), 'phenol_gaff': phenol()}
    with open(os.path.join(HERE, 'amber_reference.json'), 'w') as f:
        json.dump(ref, f, indent=1)


if __name__ == '__main__':
    main()
