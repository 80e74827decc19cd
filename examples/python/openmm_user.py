"""What an OpenMM script does, in mdsim (docs/python.md, "mdsim for OpenMM users"): build from a PDB and amber14,
minimise, attach reporters, run, change the temperature, checkpoint, and read the state. No config file.

    PYTHONPATH=build/python python3 examples/python/openmm_user.py [PDB] [STEPS] [PLATFORM]

Outputs go to ./openmm_user_out/ (trajectory.h5, state.csv, checkpoint.h5). Units: nm, ps, kJ/mol, K."""
import os
import sys

import mdsim

here = os.path.dirname(os.path.abspath(__file__))
pdb = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "..", "ala2_water", "ala2_water.pdb")
steps = int(sys.argv[2]) if len(sys.argv) > 2 else 1000
platform = sys.argv[3] if len(sys.argv) > 3 else "auto"
out = os.path.abspath("openmm_user_out")
os.makedirs(out, exist_ok=True)

# ForceField(...).createSystem(...) + LangevinMiddleIntegrator + Simulation, in one call.
sim = mdsim.Simulation.from_structure(pdb, ["amber14-all.xml", "amber14/tip3p.xml"], nonbonded_method="pme",
                                      cutoff="0.9 nm", constraints="hbonds",
                                      integrator={"temperature": "300 K", "friction": "1/ps", "timestep": "2 fs"},
                                      platform=platform, quiet=True)
result = sim.minimize(tolerance=50.0)  # simulation.minimizeEnergy()
print(f"minimized: {result['initial_energy_kj_per_mol']:.1f} -> {result['final_energy_kj_per_mol']:.1f} kJ/mol")

# simulation.reporters.append(...): append=True continues the files of an earlier run of this script.
again = os.path.exists(os.path.join(out, "checkpoint.h5"))
if again:
    sim.load_checkpoint(os.path.join(out, "checkpoint.h5"))  # simulation.loadCheckpoint(...)
sim.reporters += [mdsim.TrajectoryReporter(os.path.join(out, "trajectory.h5"), 100, append=again),
                  mdsim.StateReporter(os.path.join(out, "state.csv"), 100, append=again),
                  mdsim.StateReporter(lambda s: print(f"step {s['step']:7d}  T {s['temperature_k']:6.1f} K  "
                                                      f"E_pot {s['potential_energy_kj_per_mol']:10.1f} kJ/mol"),
                                      max(steps // 2, 1)),
                  mdsim.CheckpointReporter(os.path.join(out, "checkpoint.h5"), 500)]

sim.step(steps)  # simulation.step(n)
sim.temperature = "310 K"  # integrator.setTemperature(310*kelvin)
sim.run(steps=steps)
sim.close()  # the outputs whole: checkpoint at this step, trajectory marked complete

state = sim.state()  # context.getState(getEnergy=True, ...)
terms = ", ".join(f"{k} {v:.1f}" for k, v in state["energies_kj_per_mol"].items() if isinstance(v, float) and v)
print(f"{sim.platform}: step {state['step']}, {state['time_ps']:.1f} ps, T {state['temperature_k']:.1f} K "
      f"(bath {sim.temperature:.0f} K), potential {state['potential_energy_kj_per_mol']:.1f} kJ/mol ({terms})")
