#!/usr/bin/env python3
"""Systems for the issue-36 speed checks (`mdsim bench`), written with OpenMM 7.7 into a folder (default .ab/):

  dhfr_tip3p.system.xml.gz   DHFR, amber14 + TIP3P, PME 1.0 nm, HBonds, rigid water (configs/dhfr_amber14.yaml's
                             physics) as a serialized System
  dhfr_nbfix.system.xml.gz   the same System with its Lennard-Jones moved into a tabulated CustomNonbondedForce
                             (acoef/bcoef per atom-type pair, as ParmEd and CharmmPsfFile write NBFIX): the same
                             energies, evaluated through mdsim's pair-specific LJ table
  dhfr_tip4pew.pdb           DHFR with its waters converted to TIP4P-Ew (Modeller.addExtraParticles)
  dhfr_tip4pew.system.xml.gz amber14 + TIP4P-Ew on it, same settings
  charmm_ala3.system.xml.gz  the CHARMM36 tri-alanine box of tests/data/shared/topologies (CharmmPsfFile: CMAP,
  charmm_ala3.pdb            Urey-Bradley, impropers, NBFIX), PME 1.0 nm, HBonds, rigid water, and its coordinates

Usage: /usr/bin/python3 bench/make_topology_bench.py [folder]
"""
import gzip
import os
import sys

import openmm
from openmm import app, unit

out = sys.argv[1] if len(sys.argv) > 1 else ".ab"
os.makedirs(out, exist_ok=True)
here = os.path.dirname(os.path.abspath(__file__))
pdb = app.PDBFile(os.path.join(here, "..", "tests", "data", "shared", "systems", "dhfr.pdb"))
settings = dict(nonbondedMethod=app.PME, nonbondedCutoff=1.0 * unit.nanometer, constraints=app.HBonds,
                rigidWater=True, ewaldErrorTolerance=5e-4)


def save(system, name):
    with gzip.open(os.path.join(out, name), "wt") as f:
        f.write(openmm.XmlSerializer.serialize(system))


def tabulated_lj(system):
    """The NonbondedForce's LJ as a CustomNonbondedForce over atom types (one type per distinct sigma/epsilon)."""
    nb = [f for f in system.getForces() if isinstance(f, openmm.NonbondedForce)][0]
    types, type_of = {}, []
    for i in range(nb.getNumParticles()):
        q, s, e = nb.getParticleParameters(i)
        key = (s.value_in_unit(unit.nanometer), e.value_in_unit(unit.kilojoule_per_mole))
        type_of.append(types.setdefault(key, len(types)))
        nb.setParticleParameters(i, q, s, 0.0)
    keys = sorted(types, key=types.get)
    n = len(keys)
    acoef, bcoef = [0.0] * (n * n), [0.0] * (n * n)
    for a, (sa, ea) in enumerate(keys):
        for b, (sb, eb) in enumerate(keys):
            s, e = 0.5 * (sa + sb), (ea * eb) ** 0.5
            acoef[a + n * b] = (4 * e * s ** 12) ** 0.5
            bcoef[a + n * b] = 4 * e * s ** 6
    cf = openmm.CustomNonbondedForce("(a/r6)^2-b/r6; r6=r^6; a=acoef(type1, type2); b=bcoef(type1, type2)")
    cf.addTabulatedFunction("acoef", openmm.Discrete2DFunction(n, n, acoef))
    cf.addTabulatedFunction("bcoef", openmm.Discrete2DFunction(n, n, bcoef))
    cf.addPerParticleParameter("type")
    for t in type_of:
        cf.addParticle([t])
    for k in range(nb.getNumExceptions()):
        i, j, _, _, _ = nb.getExceptionParameters(k)
        cf.addExclusion(i, j)
    cf.setNonbondedMethod(openmm.CustomNonbondedForce.CutoffPeriodic)
    cf.setCutoffDistance(nb.getCutoffDistance())
    cf.setUseLongRangeCorrection(nb.getUseDispersionCorrection())
    system.addForce(cf)
    return n


ff = app.ForceField("amber14-all.xml", "amber14/tip3p.xml")
system = ff.createSystem(pdb.topology, **settings)
save(system, "dhfr_tip3p.system.xml.gz")
types = tabulated_lj(system)
save(system, "dhfr_nbfix.system.xml.gz")

ff4 = app.ForceField("amber14-all.xml", "amber14/tip4pew.xml")
modeller = app.Modeller(pdb.topology, pdb.positions)
modeller.addExtraParticles(ff4)
with open(os.path.join(out, "dhfr_tip4pew.pdb"), "w") as f:
    app.PDBFile.writeFile(modeller.topology, modeller.positions, f)
save(ff4.createSystem(modeller.topology, **settings), "dhfr_tip4pew.system.xml.gz")
top = os.path.join(here, "..", "tests", "data", "shared", "topologies", "inputs")
psf = app.CharmmPsfFile(os.path.join(top, "ala3_solv.psf"))
crd = app.CharmmCrdFile(os.path.join(top, "ala3_solv.crd"))
params = app.CharmmParameterSet(os.path.join(top, "par_all36_prot.prm"), os.path.join(top, "toppar_water_ions.str"))
psf.setBox(3.2711950 * unit.nanometer, 3.2995960 * unit.nanometer, 3.3007150 * unit.nanometer)
charmm = psf.createSystem(params, nonbondedMethod=app.PME, nonbondedCutoff=1.0 * unit.nanometer,
                          constraints=app.HBonds, rigidWater=True, ewaldErrorTolerance=5e-4)
save(charmm, "charmm_ala3.system.xml.gz")
with open(os.path.join(out, "charmm_ala3.pdb"), "w") as f:
    app.PDBFile.writeFile(psf.topology, crd.positions, f)
print(f"wrote {out}: DHFR TIP3P ({system.getNumParticles()} particles), NBFIX ({types} LJ types), "
      f"TIP4P-Ew ({modeller.topology.getNumAtoms()} particles)")
