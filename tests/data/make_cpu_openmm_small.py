#!/usr/bin/python3
"""Reference energies and forces for tests/kernels/cpu/test_cpu_forces_openmm_small.cpp, from OpenMM 7.7's Reference
platform (double precision), for small synthetic systems: a handful of bonded terms, and 64 random
charged LJ particles with exceptions under every nonbonded method (NoCutoff, CutoffNonPeriodic,
CutoffPeriodic with and without switching, PME in an orthorhombic and a triclinic box).

Regenerate with:  /usr/bin/python3 tests/data/make_cpu_openmm_small.py > tests/data/cpu_openmm_small.json
(fixed random seed: the output is deterministic).
"""
import json
import math
import random

import openmm as mm

rng = random.Random(20240611)
PLATFORM = mm.Platform.getPlatformByName('Reference')


def evaluate(system, positions, groups):
    ctx = mm.Context(system, mm.VerletIntegrator(1e-3), PLATFORM)
    ctx.setPositions(positions)
    out = {}
    for name, g in groups.items():
        st = ctx.getState(getEnergy=True, getForces=True, groups={g})
        out[name] = {
            'energy': st.getPotentialEnergy()._value,
            'forces': [[f[0], f[1], f[2]] for f in st.getForces()._value],
        }
    return out, ctx


def bonded_case():
    n = 12
    pos = []
    p = [0.0, 0.0, 0.0]
    for i in range(n):  # a random walk with ~0.15 nm steps
        pos.append(list(p))
        d = [rng.gauss(0, 1) for _ in range(3)]
        s = 0.15 / math.sqrt(sum(x * x for x in d))
        p = [p[k] + d[k] * s for k in range(3)]
    system = mm.System()
    for i in range(n):
        system.addParticle(12.0)
    bonds, angles, torsions = [], [], []
    hb = mm.HarmonicBondForce(); hb.setForceGroup(0)
    ha = mm.HarmonicAngleForce(); ha.setForceGroup(1)
    pt = mm.PeriodicTorsionForce(); pt.setForceGroup(2)
    for i in range(n - 1):
        b = [i, i + 1, rng.uniform(0.1, 0.16), rng.uniform(1e5, 4e5)]
        bonds.append(b); hb.addBond(*b)
    for i in range(n - 2):
        a = [i, i + 1, i + 2, rng.uniform(1.7, 2.2), rng.uniform(200, 600)]
        angles.append(a); ha.addAngle(*a)
    for i in range(n - 3):
        for per in (1, 2, 3):
            t = [i, i + 1, i + 2, i + 3, per, rng.uniform(-math.pi, math.pi), rng.uniform(0.5, 10.0)]
            torsions.append(t); pt.addTorsion(*t)
    # an "improper" ordering too
    t = [3, 0, 1, 2, 2, math.pi, 4.6]
    torsions.append(t); pt.addTorsion(*t)
    for f in (hb, ha, pt):
        system.addForce(f)
    res, _ = evaluate(system, pos, {'bond': 0, 'angle': 1, 'torsion': 2})
    return {'positions': pos, 'bonds': bonds, 'angles': angles, 'torsions': torsions, 'results': res}


def random_particles(n, lo, hi, min_dist):
    pos = []
    while len(pos) < n:
        x = [rng.uniform(lo[k], hi[k]) for k in range(3)]
        if all(math.dist(x, y) >= min_dist for y in pos):
            pos.append(x)
    return pos


def nonbonded_particles():
    n = 64
    classes = [(0.315, 0.636), (0.25, 0.2), (0.34, 0.36), (0.1, 0.0)]
    charges, sigmas, epsilons = [], [], []
    for i in range(n):
        if i < 48:
            s, e = classes[i % 4]
        else:  # a few with their own parameters
            s, e = rng.uniform(0.2, 0.35), rng.uniform(0.05, 1.0)
        charges.append(round(rng.uniform(-0.8, 0.8), 4))
        sigmas.append(s)
        epsilons.append(e)
    return charges, sigmas, epsilons


def exceptions_for(pos, charges, sigmas, epsilons, box=None):
    # Exceptions between near neighbours (as bonded neighbours would be): excluded and scaled pairs.
    pairs = []
    n = len(pos)
    for i in range(n):
        for j in range(i + 1, n):
            d = [pos[j][k] - pos[i][k] for k in range(3)]
            if math.sqrt(sum(x * x for x in d)) < 0.45:
                pairs.append((i, j))
    rng.shuffle(pairs)
    out = []
    for idx, (i, j) in enumerate(pairs[:24]):
        if idx % 2 == 0:
            out.append([i, j, 0.0, 1.0, 0.0])
        else:
            out.append([i, j, charges[i] * charges[j] / 1.2, 0.5 * (sigmas[i] + sigmas[j]),
                        0.5 * math.sqrt(epsilons[i] * epsilons[j])])
    return out


def nonbonded_case(method, box, cutoff, switch, dispersion, tol, pos, params):
    charges, sigmas, epsilons = params
    exceptions = exceptions_for(pos, charges, sigmas, epsilons)

    def build(disp):
        system = mm.System()
        for _ in pos:
            system.addParticle(1.0)
        if box is not None:
            system.setDefaultPeriodicBoxVectors(*[mm.Vec3(*v) for v in box])
        nb = mm.NonbondedForce()
        nb.setNonbondedMethod(method)
        if cutoff is not None:
            nb.setCutoffDistance(cutoff)
        if switch is not None:
            nb.setUseSwitchingFunction(True)
            nb.setSwitchingDistance(switch)
        nb.setUseDispersionCorrection(disp)
        if tol is not None:
            nb.setEwaldErrorTolerance(tol)
        for q, s, e in zip(charges, sigmas, epsilons):
            nb.addParticle(q, s, e)
        for ex in exceptions:
            nb.addException(*ex)
        nb.setForceGroup(0)
        nb.setReciprocalSpaceForceGroup(1)
        system.addForce(nb)
        return system, nb

    system, nb = build(dispersion)
    res, ctx = evaluate(system, pos, {'direct': 0, 'reciprocal': 1})
    case = {'method': ['NoCutoff', 'CutoffNonPeriodic', 'CutoffPeriodic', 'Ewald', 'PME'][method],
            'box': box, 'cutoff': cutoff, 'switch': switch, 'dispersion_correction': dispersion,
            'ewald_tolerance': tol, 'positions': pos, 'charges': charges, 'sigmas': sigmas,
            'epsilons': epsilons, 'exceptions': exceptions, 'results': res}
    if method == mm.NonbondedForce.PME:
        alpha, nx, ny, nz = nb.getPMEParametersInContext(ctx)
        case['pme'] = {'alpha': alpha, 'grid': [nx, ny, nz]}
    if dispersion:
        system0, _ = build(False)
        res0, _ = evaluate(system0, pos, {'direct': 0})
        case['dispersion_energy'] = res['direct']['energy'] - res0['direct']['energy']
    return case


def main():
    out = {'note': 'generated by tests/data/make_cpu_openmm_small.py with OpenMM ' + mm.__version__ +
                   ' Reference platform; units nm, kJ/mol, kJ/mol/nm',
           'bonded': bonded_case()}
    params = nonbonded_particles()
    NB = mm.NonbondedForce
    ortho = [[2.5, 0.0, 0.0], [0.0, 2.4, 0.0], [0.0, 0.0, 2.3]]
    tric = [[2.4, 0.0, 0.0], [0.6, 2.3, 0.0], [-0.5, 0.8, 2.2]]
    # open-boundary positions, and periodic ones with some particles outside the central box
    pos_open = random_particles(64, [0, 0, 0], [2.5, 2.4, 2.3], 0.24)
    pos_per = [[x[0] + (2.5 if i % 7 == 0 else 0.0), x[1] - (2.4 if i % 5 == 0 else 0.0), x[2]]
               for i, x in enumerate(pos_open)]
    cases = {}
    cases['nocutoff'] = nonbonded_case(NB.NoCutoff, None, None, None, False, None, pos_open, params)
    cases['cutoff_nonperiodic'] = nonbonded_case(NB.CutoffNonPeriodic, None, 0.9, None, False, None, pos_open, params)
    cases['cutoff_periodic'] = nonbonded_case(NB.CutoffPeriodic, ortho, 0.9, None, True, None, pos_per, params)
    cases['cutoff_periodic_switch'] = nonbonded_case(NB.CutoffPeriodic, ortho, 0.9, 0.75, True, None, pos_per, params)
    cases['pme'] = nonbonded_case(NB.PME, ortho, 1.0, None, True, 5e-4, pos_per, params)
    pos_tric = random_particles(64, [0, 0, 0], [2.4, 2.3, 2.2], 0.24)
    cases['pme_triclinic_switch'] = nonbonded_case(NB.PME, tric, 0.9, 0.7, True, 5e-4, pos_tric, params)
    out['nonbonded'] = cases
    print(json.dumps(out, indent=None, separators=(',', ':')))


main()
