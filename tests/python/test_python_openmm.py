"""Simulation.from_openmm on the CPU platform (CTest python_openmm): alanine dipeptide in water built by OpenMM's
AmberPrmtopFile (PME 1 nm, HBonds) and by its ForceField (amber14, TIP3P; charmm36 for a tripeptide in water) runs in
mdsim with the energy of OpenMM's
Reference platform (1e-6 relative), and
OpenMM integrators map to the config's integrator keys. Exits 77 (CTest: skipped) when openmm is not importable.
Usage: test_python_openmm.py TEST_DATA_DIR (PYTHONPATH must hold build/python)."""
import os
import sys

try:
    import openmm
    import openmm.app as app
    from openmm import unit
except ImportError as err:
    print(f"test_python_openmm: skipped: openmm is not importable ({err}); CI has it (python3-simtk / OpenMM 7.7)")
    sys.exit(77)

import numpy as np

import mdsim
from checks import check, failures  # tests/python/checks.py

DATA = os.path.abspath(sys.argv[1])


def reference_energy(system, positions):
    """OpenMM's Reference-platform potential energy (kJ/mol) at the positions."""
    context = openmm.Context(system, openmm.VerletIntegrator(0.001), openmm.Platform.getPlatformByName("Reference"))
    context.setPositions(positions)
    return context.getState(getEnergy=True).getPotentialEnergy().value_in_unit(unit.kilojoule_per_mole)


inputs = os.path.join(DATA, "topologies", "inputs")
prmtop = app.AmberPrmtopFile(os.path.join(inputs, "alanine-dipeptide-explicit.prmtop"))
inpcrd = app.AmberInpcrdFile(os.path.join(inputs, "alanine-dipeptide-explicit.inpcrd"))
system = prmtop.createSystem(nonbondedMethod=app.PME, nonbondedCutoff=1.0 * unit.nanometer, constraints=app.HBonds)
if inpcrd.boxVectors is not None:
    prmtop.topology.setPeriodicBoxVectors(inpcrd.boxVectors)
expected = reference_energy(system, inpcrd.positions)

integrator = openmm.LangevinMiddleIntegrator(310 * unit.kelvin, 2.0 / unit.picosecond, 0.002 * unit.picoseconds)
integrator.setRandomNumberSeed(17)
sim = mdsim.Simulation.from_openmm(system, prmtop.topology, inpcrd.positions, integrator, platform="cpu")
got = sim.state()["potential_energy_kj_per_mol"]
check(sim.platform == "cpu" and sim.n_atoms == system.getNumParticles(), f"from_openmm: {sim.n_atoms} atoms on the CPU")
check(abs(got - expected) <= 1e-6 * abs(expected),
      f"potential energy {got:.6f} kJ/mol equals OpenMM Reference's {expected:.6f} (relative "
      f"{abs(got - expected) / abs(expected):.1e})")
given = np.array(inpcrd.positions.value_in_unit(unit.nanometer))
check(np.array_equal(sim.positions, given), "the positions are exactly those given (nm)")
check(sim.seed == 17, "the integrator's random seed is the simulation's")
top = sim.topology
residues = [top.residue_names[i] for i in np.unique(top.residue_index, return_index=True)[1]]
check(residues[:4] == ["ACE", "ALA", "NME", "HOH"] and top.atom_names[:2] == [a.name for a in prmtop.topology.atoms()][:2],
      f"atom names and residues from the topology: {residues[:4]}, {top.atom_names[:2]}")
sim.minimize(tolerance=100.0, max_iterations=50)
sim.step(20)
state = sim.state()
check(state["step"] == 20 and np.isfinite(state["total_energy_kj_per_mol"]), "it minimises and steps")

# run(time=) takes an openmm.unit Quantity; the config= keys reach the run (output folder, intervals).
import tempfile
with tempfile.TemporaryDirectory(prefix="mdsim_python_openmm_") as work:
    timed = mdsim.Simulation.from_openmm(system, prmtop.topology, inpcrd.positions, integrator, platform="cpu",
                                         config={"output": {"directory": work, "state": {"interval": 5},
                                                            "progress": False}})
    summary = timed.run(time=20 * unit.femtoseconds)
    lines = open(os.path.join(work, "state.csv")).read().splitlines()
    check(summary["last_step"] == 10 and len(lines) == 3, f"run(time=20 fs as a Quantity): 10 steps, {len(lines) - 1} "
          "state lines in config['output']['directory']")

# A System from OpenMM's ForceField (amber14 + TIP3P, PME 0.9 nm, HBonds) on a PDB.
pdb = app.PDBFile(os.path.join(DATA, "systems", "ala2_water.pdb"))
ff_system = app.ForceField("amber14-all.xml", "amber14/tip3p.xml").createSystem(
    pdb.topology, nonbondedMethod=app.PME, nonbondedCutoff=0.9 * unit.nanometer, constraints=app.HBonds)
ff_expected = reference_energy(ff_system, pdb.positions)
ff_got = mdsim.Simulation.from_openmm(ff_system, pdb.topology, pdb.positions, platform="cpu").state()[
    "potential_energy_kj_per_mol"]
check(abs(ff_got - ff_expected) <= 1e-6 * abs(ff_expected),
      f"ForceField(amber14) System: {ff_got:.6f} kJ/mol equals OpenMM Reference's {ff_expected:.6f} (relative "
      f"{abs(ff_got - ff_expected) / abs(ff_expected):.1e})")

# A System from ForceField(charmm36.xml): CMAP, Urey-Bradley, harmonic impropers, switched LJ (tripeptide in water).
c36_pdb = app.PDBFile(os.path.join(DATA, "..", "charmm36_ala3_water.pdb"))
c36_system = app.ForceField("charmm36.xml", "charmm36/water.xml").createSystem(
    c36_pdb.topology, nonbondedMethod=app.PME, nonbondedCutoff=1.0 * unit.nanometer, switchDistance=0.8 * unit.nanometer,
    constraints=app.HBonds)
c36_expected = reference_energy(c36_system, c36_pdb.positions)
c36_got = mdsim.Simulation.from_openmm(c36_system, c36_pdb.topology, c36_pdb.positions, platform="cpu",
                                       quiet=True).state()["potential_energy_kj_per_mol"]
check(abs(c36_got - c36_expected) <= 1e-6 * abs(c36_expected),
      f"ForceField(charmm36) System: {c36_got:.6f} kJ/mol equals OpenMM Reference's {c36_expected:.6f} (relative "
      f"{abs(c36_got - c36_expected) / abs(c36_expected):.1e})")

# Integrators: settings mapped; the seed= argument over the integrator's; another kind refused.
verlet = mdsim.Simulation.from_openmm(system, prmtop.topology, inpcrd.positions,
                                      openmm.VerletIntegrator(0.001 * unit.picoseconds), platform="cpu", seed=5,
                                      config={"run": {"steps": 10}})
verlet.step(2)
check(verlet.seed == 5 and abs(verlet.state()["time_ps"] - 0.002) < 1e-12, "VerletIntegrator: timestep 1 fs, seed=5")
langevin = openmm.LangevinIntegrator(300 * unit.kelvin, 1.0 / unit.picosecond, 0.002 * unit.picoseconds)
langevin.setRandomNumberSeed(3)
check(mdsim.Simulation.from_openmm(system, prmtop.topology, inpcrd.positions, langevin, platform="cpu", seed=4).seed == 4,
      "LangevinIntegrator: seed= over the integrator's")
try:
    mdsim.Simulation.from_openmm(system, prmtop.topology, inpcrd.positions, openmm.BrownianIntegrator(
        300 * unit.kelvin, 1.0 / unit.picosecond, 0.002 * unit.picoseconds), platform="cpu")
    message = "no error"
except TypeError as err:
    message = str(err)
check(message.startswith("from_openmm(integrator): mdsim runs"), f"BrownianIntegrator refused: {message}")

print(f"test_python_openmm: {len(failures)} failed" if failures else "test_python_openmm: all passed")
sys.exit(1 if failures else 0)
