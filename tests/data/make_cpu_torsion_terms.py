#!/usr/bin/python3
"""Reference energies and forces for tests/kernels/cpu/test_cpu_forces_torsion_terms.cpp (and the CUDA platform's
test_cuda_forces_torsion_terms.cpp, which builds the same systems), from OpenMM 7.7's Reference platform (double
precision): alanine dipeptide (tests/data/shared/systems/ala2_vacuum.pdb) with made-up but realistic
  - Ryckaert-Bellemans torsions (RBTorsionForce) on every proper dihedral,
  - CHARMM-style harmonic impropers as a CustomTorsionForce with the periodic wrap,
        k*dtheta^2; dtheta = min(diff, 2*pi-diff); diff = abs(theta-theta0)
    on the four planar centres (theta0 = 0) and on some proper dihedrals with theta0 anywhere in [-pi, pi)
    (so that both ways round occur),
  - CMAPTorsionForce with three maps (24 x 24 twice, 10 x 10; smooth periodic surfaces around 8 kJ/mol plus noise) on
    phi/psi, on the two peptide bonds' omegas (angles near +-pi, across the grid's wrap) and on two side
    dihedrals,
each in its own force group, evaluated at six configurations: the PDB's (planar) geometry perturbed by
Gaussian noise of 0.03 nm per coordinate, redrawn while any improper lies within 0.02 rad of its kink
(|theta - theta0| = pi, where the force jumps).

Regenerate with:  /usr/bin/python3 tests/data/make_cpu_torsion_terms.py > tests/data/cpu_torsion_terms_openmm.json
(fixed random seed: the output is deterministic).
"""
import json
import math
import os
import random

import openmm as mm
import openmm.app as app

rng = random.Random(20250117)
PLATFORM = mm.Platform.getPlatformByName('Reference')
HERE = os.path.dirname(os.path.abspath(__file__))
IMPROPER = 'k*dtheta^2; dtheta = min(diff, 2*pi-diff); diff = abs(theta-theta0); pi = %r' % math.pi
GROUPS = {'rb_torsion': 0, 'improper': 1, 'cmap': 2}


def proper_dihedrals(topology):
    neighbours = {a.index: set() for a in topology.atoms()}
    for b in topology.bonds():
        neighbours[b[0].index].add(b[1].index)
        neighbours[b[1].index].add(b[0].index)
    out = []
    for j in sorted(neighbours):
        for k in sorted(neighbours[j]):
            if k < j:
                continue
            for i in sorted(neighbours[j] - {k}):
                for l in sorted(neighbours[k] - {j, i}):
                    out.append([i, j, k, l])
    return out


def rb_coefficients():
    opls = [9.2789, 12.156, -13.120, -3.0597, 26.240, -31.495]  # an alkane C-C-C-C (kJ/mol)
    if rng.random() < 0.5:
        return [c * rng.uniform(0.5, 1.5) for c in opls]
    return [rng.uniform(-6.0, 6.0) for _ in range(6)]


def cmap_surface(size, a, b, c, centre, noise):
    grid = []
    for j in range(size):        # psi
        for i in range(size):    # phi: energy[i + size*j] at phi = i 2pi/size, psi = j 2pi/size
            phi, psi = i * 2 * math.pi / size, j * 2 * math.pi / size
            e = 8.0 + a * math.cos(phi - 0.3) + b * math.sin(2 * psi + 0.5) + c * math.cos(phi + psi - 1.1)
            e += 6.0 * math.exp(2.0 * (math.cos(phi - centre[0]) + math.cos(psi - centre[1]) - 2.0))
            e += rng.uniform(-noise, noise)
            grid.append(e)
    return grid


def dihedral(x, q):
    def sub(u, v):
        return [u[0] - v[0], u[1] - v[1], u[2] - v[2]]

    def cross(u, v):
        return [u[1] * v[2] - u[2] * v[1], u[2] * v[0] - u[0] * v[2], u[0] * v[1] - u[1] * v[0]]

    def dot(u, v):
        return u[0] * v[0] + u[1] * v[1] + u[2] * v[2]
    b1, b2, b3 = sub(x[q[1]], x[q[0]]), sub(x[q[2]], x[q[1]]), sub(x[q[3]], x[q[2]])
    m, n = cross(b1, b2), cross(b2, b3)
    return math.atan2(math.sqrt(dot(b2, b2)) * dot(b1, n), dot(m, n))


def build_terms(topology):
    propers = proper_dihedrals(topology)
    rb = [q + rb_coefficients() for q in propers]
    # CHARMM order: the planar centre first (ACE C, ALA N, ALA C, NME N with their three neighbours).
    centres = [[4, 1, 6, 5], [6, 4, 8, 7], [14, 8, 16, 15], [16, 14, 18, 17]]
    impropers = [q + [0.0, rng.uniform(100.0, 1000.0)] for q in centres]
    for q in rng.sample(propers, 10):
        impropers.append(q + [rng.uniform(-math.pi, math.pi), rng.uniform(5.0, 50.0)])
    maps = [{'size': 24, 'energy': cmap_surface(24, 3.0, -2.5, 1.5, (-1.2, 2.4), 1.0)},
            {'size': 24, 'energy': cmap_surface(24, -1.5, 2.0, 2.5, (3.0, -3.0), 0.5)},
            {'size': 10, 'energy': cmap_surface(10, 2.0, 1.0, -1.0, (0.5, 1.5), 0.3)}]
    cmaps = [[0, 4, 6, 8, 14, 6, 8, 14, 16],     # phi, psi
             [1, 1, 4, 6, 8, 8, 14, 16, 18],     # the two omegas (near +-pi)
             [2, 7, 6, 8, 10, 6, 8, 10, 11],     # H-N-CA-CB, N-CA-CB-HB1
             [0, 0, 1, 4, 6, 15, 14, 16, 17]]    # two more, sharing map 0
    return rb, impropers, maps, cmaps


def build_system(n, rb, impropers, maps, cmaps):
    system = mm.System()
    for _ in range(n):
        system.addParticle(12.0)
    f_rb = mm.RBTorsionForce()
    for t in rb:
        f_rb.addTorsion(*t)
    f_imp = mm.CustomTorsionForce(IMPROPER)
    f_imp.addPerTorsionParameter('theta0')
    f_imp.addPerTorsionParameter('k')
    for t in impropers:
        f_imp.addTorsion(t[0], t[1], t[2], t[3], [t[4], t[5]])
    f_cmap = mm.CMAPTorsionForce()
    for m in maps:
        f_cmap.addMap(m['size'], m['energy'])
    for t in cmaps:
        f_cmap.addTorsion(*t)
    for f, name in ((f_rb, 'rb_torsion'), (f_imp, 'improper'), (f_cmap, 'cmap')):
        f.setForceGroup(GROUPS[name])
        system.addForce(f)
    return system


def configurations(x0, impropers, count):
    out = []
    while len(out) < count:
        x = [[c + rng.gauss(0.0, 0.03) for c in p] for p in x0]
        kink = min(abs(abs(dihedral(x, t[:4]) - t[4]) - math.pi) for t in impropers)
        if kink > 0.02:
            out.append(x)
    return out


def main():
    pdb = app.PDBFile(os.path.join(HERE, 'shared', 'systems', 'ala2_vacuum.pdb'))
    x0 = [[v.x, v.y, v.z] for v in pdb.getPositions(asNumpy=False).value_in_unit(mm.unit.nanometer)]
    rb, impropers, maps, cmaps = build_terms(pdb.topology)
    system = build_system(len(x0), rb, impropers, maps, cmaps)
    ctx = mm.Context(system, mm.VerletIntegrator(1e-3), PLATFORM)
    confs = []
    for x in configurations(x0, impropers, 6):
        ctx.setPositions(x)
        results = {}
        for name, g in GROUPS.items():
            st = ctx.getState(getEnergy=True, getForces=True, groups={g})
            results[name] = {'energy': st.getPotentialEnergy().value_in_unit(mm.unit.kilojoule_per_mole),
                             'forces': [[f[0], f[1], f[2]] for f in
                                        st.getForces().value_in_unit(mm.unit.kilojoule_per_mole / mm.unit.nanometer)]}
        confs.append({'positions': x, 'results': results})
    out = {'note': 'generated by tests/data/make_cpu_torsion_terms.py with OpenMM ' + mm.__version__ +
                   ' Reference platform; units nm, rad, kJ/mol, kJ/mol/nm; improper energy: ' + IMPROPER,
           'atoms': len(x0), 'rb_torsions': rb, 'impropers': impropers, 'cmap_maps': maps,
           'cmap_torsions': cmaps, 'configurations': confs}
    print(json.dumps(out, indent=None, separators=(',', ':')))


main()
