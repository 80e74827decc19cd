#!/usr/bin/python3
"""Reference for tests/prepare/test_hydrogens.cpp: OpenMM 7.7's Modeller.addHydrogens (force field
amber14-all.xml + amber14/tip3p.xml, pH 7.0) on heavy-atom-only structures: the shared systems
(tests/data/shared/systems/*.pdb with every hydrogen deleted, water hydrogens too) and BPTI
(tests/data/hydrogens_bpti_heavy.pdb, from OpenMM's own test inputs; 3 disulfides), and DHFR without its
waters ('dhfr_dry', so that HIS finds its hydrogen-bond partners in the protein only), and chain C of
PDBFixer's test input 4JSV (tests/data/hydrogens_4jsv_chain_c.pdb; 11 HIS, 2 of them HIE; no OXT, so it
runs without a force field and has no energy).

Per residue other than water: the number of hydrogens Modeller's output has, the variant addHydrogens returned
(None where its rules pick no named variant: ASP/GLU/LYS/CYS by maxph), and the protonation form read
from the hydrogens present (HIS: HID/HIE/HIP; ASP/ASH, GLU/GLH, LYS/LYN, CYS/CYX). Also the potential
energy of Modeller's output, and the number of waters and of their hydrogens under the same force field, as add_hydrogens optimises (CutoffNonPeriodic 1 nm,
flexible water, no constraints, Reference platform), and the time addHydrogens took.

Hydrogen counts and variants do not depend on Modeller's random starting positions; the energy does a
little (Modeller minimises at most 50 iterations from random positions).

Regenerate with:  /usr/bin/python3 tests/data/make_hydrogen_reference.py > tests/data/hydrogens_modeller.json
"""
import json
import os
import sys
import time

import openmm as mm
from openmm import app, unit

HERE = os.path.dirname(os.path.abspath(__file__))
STRUCTURES = {
    'ala2_vacuum': os.path.join(HERE, 'shared', 'systems', 'ala2_vacuum.pdb'),
    'ala2_water': os.path.join(HERE, 'shared', 'systems', 'ala2_water.pdb'),
    'villin_water': os.path.join(HERE, 'shared', 'systems', 'villin_water.pdb'),
    'dhfr': os.path.join(HERE, 'shared', 'systems', 'dhfr.pdb'),
    'bpti': os.path.join(HERE, 'hydrogens_bpti_heavy.pdb'),
    'dhfr_dry': os.path.join(HERE, 'shared', 'systems', 'dhfr.pdb'),  # waters deleted too: HIS by protein partners
    # Chain C of PDBFixer's test input 4JSV: 11 HIS, two of them HIE by Modeller's rule; no OXT on its last
    # residue, so amber14 has no template for it before OXT is added: Modeller runs without a force field.
    '4jsv_c': os.path.join(HERE, 'hydrogens_4jsv_chain_c.pdb'),
}
NO_FORCEFIELD = {'4jsv_c'}
H = app.element.hydrogen


def form(residue):
    """The protonation form read from the hydrogens a residue has."""
    def hs(parent):
        return sum(1 for a in residue.atoms() if a.name == parent for b in bonded[a] if b.element == H)
    name = residue.name
    if name == 'HIS':
        d, e = hs('ND1'), hs('NE2')
        return 'HIP' if d and e else 'HID' if d else 'HIE' if e else 'HIN'
    if name == 'ASP':
        return 'ASH' if hs('OD1') + hs('OD2') else 'ASP'
    if name == 'GLU':
        return 'GLH' if hs('OE1') + hs('OE2') else 'GLU'
    if name == 'LYS':
        return 'LYS' if hs('NZ') >= 3 else 'LYN'
    if name == 'CYS':
        return 'CYS' if hs('SG') else 'CYX'
    return None


forcefield = app.ForceField('amber14-all.xml', 'amber14/tip3p.xml')
out = {}
for key, path in STRUCTURES.items():
    pdb = app.PDBFile(path)
    modeller = app.Modeller(pdb.topology, pdb.positions)
    modeller.delete([a for a in modeller.topology.atoms() if a.element == H])
    if key.endswith('_dry'):
        modeller.delete([r for r in modeller.topology.residues() if r.name == 'HOH'])
    start = time.time()
    variants = modeller.addHydrogens(None if key in NO_FORCEFIELD else forcefield, pH=7.0)
    seconds = time.time() - start
    bonded = {a: [] for a in modeller.topology.atoms()}
    for a, b in modeller.topology.bonds():
        bonded[a].append(b)
        bonded[b].append(a)
    energy = None
    if key not in NO_FORCEFIELD:
        system = forcefield.createSystem(modeller.topology, nonbondedMethod=app.CutoffNonPeriodic,
                                         nonbondedCutoff=1.0 * unit.nanometer, constraints=None, rigidWater=False)
        context = mm.Context(system, mm.VerletIntegrator(0.001), mm.Platform.getPlatformByName('Reference'))
        context.setPositions(modeller.positions)
        energy = context.getState(getEnergy=True).getPotentialEnergy().value_in_unit(unit.kilojoule_per_mole)
    residues, water_count, water_h = [], 0, 0
    for r in modeller.topology.residues():
        h = sum(1 for a in r.atoms() if a.element == H)
        if r.name == 'HOH':  # waters summarised: every one should have 2
            water_count += 1
            water_h += h
            continue
        residues.append({
            'index': r.index, 'name': r.name, 'chain': r.chain.id, 'id': r.id, 'icode': r.insertionCode.strip(),
            'h': h, 'variant': variants[r.index], 'form': form(r),
        })
    out[key] = {
        'source': os.path.relpath(path, os.path.dirname(HERE)),
        'atoms': modeller.topology.getNumAtoms(),
        'hydrogens': sum(1 for a in modeller.topology.atoms() if a.element == H),
        'energy_kj_per_mol': energy,
        'seconds': round(seconds, 2),
        'residues': residues,
        'waters': water_count,
        'water_hydrogens': water_h,
    }
    print(f'{key}: {out[key]["atoms"]} atoms, {out[key]["hydrogens"]} H, E = {energy} kJ/mol, '
          f'{seconds:.1f} s', file=sys.stderr)
json.dump({'generator': 'OpenMM %s Modeller.addHydrogens(amber14-all.xml + amber14/tip3p.xml, pH 7.0)'
           % mm.__version__, 'structures': out}, sys.stdout, indent=0, separators=(',', ':'))
print()
