"""What the OpenMM 7.7 reference scripts share (make_gromacs_top_reference.py, make_tip5p_reference.py,
charmm/make_charmm_reference.py): energies by force on the Reference platform, and a force's term count."""
import openmm as mm
from openmm import unit


def energies_by_force(system, positions, name_of):
    """Each force of `system` in a force group of its own (the System is changed so), evaluated on the Reference
    platform at `positions` with the virtual sites placed: the energies (kJ/mol) summed by name_of(force), 'total',
    and the State with energy, forces and positions."""
    for i, f in enumerate(system.getForces()):
        f.setForceGroup(i)
    context = mm.Context(system, mm.VerletIntegrator(0.001), mm.Platform.getPlatformByName("Reference"))
    context.setPositions(positions)
    context.computeVirtualSites()
    energies = {}
    for i, f in enumerate(system.getForces()):
        e = context.getState(getEnergy=True, groups={i}).getPotentialEnergy().value_in_unit(unit.kilojoule_per_mole)
        energies[name_of(f)] = energies.get(name_of(f), 0.0) + e
    state = context.getState(getEnergy=True, getForces=True, getPositions=True)
    energies["total"] = state.getPotentialEnergy().value_in_unit(unit.kilojoule_per_mole)
    return energies, state


def term_count(force):
    """How many bonds, angles, torsions or particles the force holds."""
    for count in ("getNumBonds", "getNumAngles", "getNumTorsions"):
        if hasattr(force, count):
            return getattr(force, count)()
    return force.getNumParticles()
