#!/usr/bin/python3
"""Reference energies and forces of position restraints for tests/kernels/cpu/test_cpu_restraints.cpp, from OpenMM 7.7's
Reference platform (double precision): CustomExternalForce("0.5*k*periodicdistance(x,y,z,x0,y0,z0)^2")
in ala2_water's box and in a triclinic box of about its size, and the plain-difference expression
"0.5*k*((x-x0)^2+(y-y0)^2+(z-z0)^2)" without a box (ala2_vacuum), the restraint force alone.

Restrained: every 13th atom of ala2_water (the protein and water alike), every atom of ala2_vacuum.
Reference points: the PDB positions. Current positions: the reference plus a deterministic
displacement of up to 0.05 nm, and for three entries in four also a box vector or more than half of
one (the atom crossed the periodic boundary, or lies nearer to another image of its reference), so
the minimum image decides the energy. One entry sits exactly on its reference (zero force).
Only the restrained atoms' positions are written; the others keep their PDB positions.

Regenerate with:  /usr/bin/python3 tests/data/make_restraint_reference.py > tests/data/restraint_reference.json
(no randomness: the output is deterministic).
"""
import json
import math
import os

import openmm as mm
from openmm import app

HERE = os.path.dirname(os.path.abspath(__file__))
SYSTEMS = os.path.join(HERE, 'shared', 'systems')
PLATFORM = mm.Platform.getPlatformByName('Reference')


def displacement(i, scale):
    return [scale * math.sin(1.7 * i), scale * math.cos(2.3 * i), scale * math.sin(0.9 * i + 1.0)]


def add(*vectors):
    return [sum(v[d] for v in vectors) for d in range(3)]


def times(s, v):
    return [s * x for x in v]


def current_positions(atoms, reference, box):
    out = []
    for entry, (i, x0) in enumerate(zip(atoms, reference)):
        d = displacement(i, 0.05)
        if entry == 1:
            out.append(list(x0))  # on its reference: zero force
        elif box is None or entry % 4 == 0:
            out.append(add(x0, d))
        elif entry % 4 == 1:  # crossed a face: one image away
            out.append(add(x0, d, box[entry % 3]))
        elif entry % 4 == 2:  # more than half a box away along c: the image on the other side is nearer
            out.append(add(x0, d, times(0.55, box[2])))
        else:  # several images away, and more than half of a along a
            out.append(add(x0, d, times(-1.0, box[1]), box[2], times(0.6, box[0])))
    return out


def restraint_case(name, pdb_name, box, k, stride, periodic):
    pdb = app.PDBFile(os.path.join(SYSTEMS, pdb_name + '.pdb'))
    n = pdb.topology.getNumAtoms()
    pdb_positions = [[v.x, v.y, v.z] for v in pdb.positions.value_in_unit(mm.unit.nanometer)]
    atoms = list(range(0, n, stride))
    reference = [pdb_positions[i] for i in atoms]
    positions = current_positions(atoms, reference, box)

    system = mm.System()
    for _ in range(n):
        system.addParticle(1.0)
    if box is not None:
        system.setDefaultPeriodicBoxVectors(*[mm.Vec3(*v) for v in box])
    expression = ('0.5*k*periodicdistance(x,y,z,x0,y0,z0)^2' if periodic
                  else '0.5*k*((x-x0)^2+(y-y0)^2+(z-z0)^2)')
    force = mm.CustomExternalForce(expression)
    force.addGlobalParameter('k', k)
    for name_ in ('x0', 'y0', 'z0'):
        force.addPerParticleParameter(name_)
    for i, x0 in zip(atoms, reference):
        force.addParticle(i, x0)
    system.addForce(force)
    assert force.usesPeriodicBoundaryConditions() == periodic

    all_positions = [list(p) for p in pdb_positions]
    for i, x in zip(atoms, positions):
        all_positions[i] = x
    context = mm.Context(system, mm.VerletIntegrator(1e-3), PLATFORM)
    if box is not None:
        context.setPeriodicBoxVectors(*[mm.Vec3(*v) for v in box])
    context.setPositions([mm.Vec3(*p) for p in all_positions])
    state = context.getState(getEnergy=True, getForces=True)
    forces = [[f[0], f[1], f[2]] for f in state.getForces()._value]
    restrained = set(atoms)
    assert all(f == [0.0, 0.0, 0.0] for i, f in enumerate(forces) if i not in restrained)
    return {
        'name': name,
        'system': pdb_name,
        'expression': expression,
        'box': box,
        'k': k,
        'atoms': atoms,
        'reference': reference,
        'positions': positions,
        'energy': state.getPotentialEnergy()._value,
        'forces': [forces[i] for i in atoms],
    }


def main():
    pdb = app.PDBFile(os.path.join(SYSTEMS, 'ala2_water.pdb'))
    vectors = pdb.topology.getPeriodicBoxVectors().value_in_unit(mm.unit.nanometer)
    box = [[v.x, v.y, v.z] for v in vectors]
    # Reduced triclinic form (|bx| <= ax/2, |cx| <= ax/2, |cy| <= by/2), every height above twice the
    # 1.0 nm cutoff of the shared settings.
    triclinic = [[3.2, 0.0, 0.0], [1.0, 3.0, 0.0], [-0.8, 1.2, 2.9]]
    cases = [
        restraint_case('orthorhombic', 'ala2_water', box, 1000.0, 13, True),
        restraint_case('triclinic', 'ala2_water', triclinic, 2500.5, 13, True),
        restraint_case('vacuum', 'ala2_vacuum', None, 750.25, 1, False),
    ]
    print(json.dumps({'openmm': mm.__version__, 'platform': 'Reference', 'cases': cases}, indent=0))


if __name__ == '__main__':
    main()
