"""The Python package on the CPU platform, run by CTest with the system's python3 and numpy:
  * views share memory with the engine: a write through `positions` changes the next energy, and a step
    moves what the view shows;
  * setters check shape and dtype (ValueError naming what was expected);
  * config errors raise ConfigError with the CLI's file:line:column message;
  * Simulation(config).run() writes what `mdsim run` writes, bit for bit (checkpoint, state log columns
    without the speed, final PDB).
Usage: test_python_api.py MDSIM_BINARY TEST_DATA_DIR (PYTHONPATH must hold build/python)."""
import os
import pathlib
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

import numpy as np

import mdsim
from checks import check, failures, raises  # tests/python/checks.py

MDSIM, DATA = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])


def config_text(out):
    return f"""system: {{pdb: {DATA}/systems/ala2_water.pdb, nonbonded_method: pme, cutoff: 0.9 nm, constraints: hbonds}}
platform: cpu
minimize: {{tolerance: 50 kJ/mol/nm, max_iterations: 25}}
integrator: {{seed: 11, timestep: 2 fs}}
run: {{steps: 20}}
output: {{directory: {out}, trajectory: {{interval: 10}}, state: {{interval: 10}}, checkpoint: {{interval: 10}}, progress: false}}
"""


work = tempfile.mkdtemp(prefix="mdsim_python_api_")
try:
    path = os.path.join(work, "py.yaml")
    with open(path, "w") as f:
        f.write(config_text("py_out"))
    sim = mdsim.Simulation(path)
    check(sim.platform == "cpu" and sim.n_atoms == 2269, "platform and atom count")
    top = sim.topology
    check(top.atom_names[:3] == ["H1", "CH3", "H2"] and top.residue_names[0] == "ACE" and
          top.residue_numbers[0] == 1 and top.chain_ids[0] == "A" and top.elements[1] == "C",
          "topology: names, residues, chains, elements")
    standard = {"H": 1.008, "C": 12.011, "N": 14.007, "O": 15.999}  # force fields differ in the last digits
    expected = [standard[e] for e in top.elements]
    check(np.allclose(sim.masses, expected, rtol=0, atol=0.01), f"masses (amu) in atom order: total {sim.masses.sum():.3f}")
    check(not os.path.exists(os.path.join(work, "py_out")), "constructing a Simulation writes nothing")

    x = sim.positions
    check(x.shape == (2269, 3) and x.dtype == np.float64 and x.flags.writeable, "positions: N x 3 float64, writable")
    e0 = sim.state()["potential_energy_kj_per_mol"]
    original = x[5].copy()
    x[5] += 0.03  # through the view
    e1 = sim.state()["potential_energy_kj_per_mol"]
    check(e1 != e0, f"a write through the view changes the next energy ({e0:.3f} -> {e1:.3f} kJ/mol)")
    x[5] = original
    check(sim.state()["potential_energy_kj_per_mol"] == e0, "writing the old values back restores the energy exactly")
    f = sim.forces
    check(f.shape == (2269, 3) and np.isfinite(f).all(), "forces: N x 3, finite")
    before = x.copy()
    sim.step(5)
    check(not np.array_equal(before, x) and sim.state()["step"] == 5, "a step moves what the view shows")
    v = sim.velocities
    v[:] = 0.0
    sim.step(1)
    st = sim.state()
    check(st["temperature_k"] < 50.0, f"zeroed velocities through the view are what the next step uses "
                                      f"(T {st['temperature_k']:.1f} K)")
    check(st["box_nm"].shape == (3, 3) and abs(st["volume_nm3"] - np.linalg.det(st["box_nm"])) < 1e-9,
          "state: box (nm) and volume (nm^3)")

    for bad, expected in [(np.zeros((3, 3)), "expected an array of shape (2269, 3) in nm, got shape (3, 3)"),
                          (np.array([["a", "b", "c"]] * 2269), "expected real numbers")]:
        try:
            sim.positions = bad
            check(False, f"setter refuses {expected}")
        except ValueError as e:
            check(expected in str(e), f"setter: ValueError '{e}'")
    sim.positions = before  # the setter takes a good array
    check(np.array_equal(sim.positions, before), "the positions setter")

    try:
        mdsim.Simulation.from_yaml("system:\n  pdb: ala2_water.pdb\n  cutof: 1 nm\n", base_dir=f"{DATA}/systems")
        check(False, "a misspelt key raises ConfigError")
    except mdsim.ConfigError as e:
        check(str(e).startswith("<yaml>:3:3: ") and "cutoff" in str(e), f"ConfigError with line:column: {e}")
    try:
        mdsim.Simulation(os.path.join(work, "missing.yaml"))
        check(False, "a missing config raises ConfigError")
    except mdsim.ConfigError as e:
        check("missing.yaml" in str(e), f"ConfigError for a missing file: {e}")
    del sim
    check(np.isfinite(x).all(), "a view keeps its Simulation alive")

    # add_force: a harmonic position restraint in numpy on ala2_vacuum (CPU platform).
    vac = mdsim.Simulation.from_yaml(
        f"system: {{pdb: {DATA}/systems/ala2_vacuum.pdb, nonbonded_method: no_cutoff, constraints: hbonds}}\n"
        "platform: cpu\nintegrator: {seed: 3, timestep: 2 fs, temperature: 300 K}\n")
    atom, k = 8, 5.0e4  # kJ/mol/nm^2
    anchor = np.array(vac.positions[atom])
    calls = []

    def restraint(positions, forces, box):
        calls.append(box)
        d = positions[atom] - anchor
        forces[atom] -= k * d
        return 0.5 * k * float(d @ d)

    index = vac.add_force(restraint)
    check(index == 1, "add_force returns the force's number")
    vac.step(1)
    check(len(calls) >= 1 and calls[0] is None, "the callback runs inside the step (no box: None)")
    worst = 0.0
    for _ in range(100):
        vac.step(10)
        worst = max(worst, float(np.linalg.norm(vac.positions[atom] - anchor)))
    check(worst < 0.05, f"the restrained atom stays within 0.05 nm over 1,000 steps (farthest {worst:.4f} nm)")
    st = vac.state()
    d = vac.positions[atom] - anchor
    expected = 0.5 * k * float(d @ d)
    e = st["energies_kj_per_mol"]
    check(abs(e["external"] - expected) < 1e-9 * max(1.0, expected) and
          abs(e["total"] - (e["bond"] + e["angle"] + e["urey_bradley"] + e["torsion"] + e["rb_torsion"] + e["improper"] +
                            e["cmap"] + e["nonbonded"] + e["external"])) < 1e-9,
          f"its energy is in state() as 'external' ({e['external']:.6f} kJ/mol) and in the total")

    def broken(positions, forces, box):
        raise ValueError("restraint exploded")
    # save_checkpoint / load_checkpoint: the CLI's format, the state restored exactly.
    ck = os.path.join(work, "vac_checkpoint.h5")
    vac.save_checkpoint(ck)
    saved_x, saved_v, saved_step = np.array(vac.positions), np.array(vac.velocities), vac.state()["step"]
    vac.step(20)
    vac.load_checkpoint(ck)
    check(np.array_equal(vac.positions, saved_x) and np.array_equal(vac.velocities, saved_v) and
          vac.state()["step"] == saved_step, "load_checkpoint restores positions, velocities and step exactly")
    import h5py
    with h5py.File(ck, "r") as f:
        check(f.attrs["format"] == "mdsim-checkpoint" and f["positions_nm"].shape == (22, 3),
              "save_checkpoint writes the CLI's checkpoint format")
    # ... but never over an input of the simulation or one of its other outputs.
    config_before = open(path, "rb").read()
    guarded = mdsim.Simulation(path)
    for target, role in ((path, "the config"), (os.path.join(work, "py_out", "trajectory.h5"), "output.trajectory.file")):
        try:
            guarded.save_checkpoint(target)
            refused = ""
        except mdsim.ConfigError as e:
            refused = str(e)
        check(role in refused and "overwrite" in refused, f"save_checkpoint onto {role} is refused: {refused}")
    check(open(path, "rb").read() == config_before, "the config is unchanged")

    # run() with a force: the state log gains the external_kj_per_mol column (in the potential too).
    logged = mdsim.Simulation.from_yaml(
        f"system: {{pdb: {DATA}/systems/ala2_vacuum.pdb, nonbonded_method: no_cutoff}}\nplatform: cpu\n"
        f"integrator: {{seed: 4}}\nrun: {{steps: 20}}\noutput: {{directory: {work}/logged, state: {{interval: 10}}, "
        "trajectory: {interval: 10}, progress: false}\n")
    logged.add_force(restraint)
    logged.run()
    lines = open(os.path.join(work, "logged", "state.csv")).read().splitlines()
    header = lines[0].split(",")
    values = [float(v) for v in lines[-1].split(",")[-1:]]
    check(header[-1] == "external_kj_per_mol" and len(lines) == 3 and values[0] > 0.0,
          f"run(): the state log's external_kj_per_mol column ({lines[-1].split(',')[-1]} kJ/mol at step 20)")
    # run() again at the config's end: nothing run, no file touched (it used to truncate the outputs).
    outputs = {name: open(os.path.join(work, "logged", name), "rb").read() for name in ("state.csv", "trajectory.h5")}
    again = logged.run()
    check(again["already_complete"] and again["first_step"] == again["last_step"] == 20 and
          all(open(os.path.join(work, "logged", n), "rb").read() == b for n, b in outputs.items()),
          f"a second run() at the end changes nothing: {again}")

    bad = mdsim.Simulation.from_yaml(
        f"system: {{pdb: {DATA}/systems/ala2_vacuum.pdb, nonbonded_method: no_cutoff}}\nplatform: cpu\n")
    bad.add_force(broken)
    try:
        bad.step(1)
        check(False, "a callback that raises stops the step")
    except ValueError as err:
        check("restraint exploded" in str(err) and err.__traceback__ is not None,
              "a callback's exception reaches the caller with its traceback")
    nan = mdsim.Simulation.from_yaml(
        f"system: {{pdb: {DATA}/systems/ala2_vacuum.pdb, nonbonded_method: no_cutoff}}\nplatform: cpu\n")
    nan.add_force(lambda positions, forces, box: float("nan"))
    try:
        nan.state()
        check(False, "a non-finite energy is refused")
    except mdsim.SimulationError as err:
        check("add_force #1 (<lambda>) returned a non-finite energy" in str(err), f"non-finite energy: {err}")

    # A staged run() whose stages change the integrator continues on a new context: refused while views taken
    # before could point at the old one's memory; without views it runs the stages.
    staged_yaml = (f"system: {{pdb: {DATA}/systems/ala2_vacuum.pdb, nonbonded_method: no_cutoff}}\nplatform: cpu\n"
                   f"integrator: {{seed: 5}}\noutput: {{directory: {work}/staged, state: {{interval: 5}}, "
                   "trajectory: {interval: 5}, progress: false}\n"
                   "stages:\n  - {name: a, steps: 5, restraints: {atoms: heavy, k: 1000}}\n"
                   "  - {name: b, steps: 5, integrator: {timestep: 1 fs}}\n")
    staged = mdsim.Simulation.from_yaml(staged_yaml)
    held = staged.positions
    try:
        staged.run()
        check(False, "a staged run() that switches contexts is refused while views are out")
    except mdsim.ConfigError as err:
        check("take them afterwards" in str(err), f"staged run() with views: {err}")
    del held, staged
    staged = mdsim.Simulation.from_yaml(staged_yaml)
    check(staged.run()["last_step"] == 10 and staged.state()["step"] == 10, "a staged run() runs every stage")
    lines = open(os.path.join(work, "staged", "state.csv")).read().splitlines()
    check(lines[0].endswith(",restraint_kj_per_mol,stage") and [l.split(",")[-1] for l in lines[1:]] == ["a", "b"],
          "a staged run()'s state log names the stages")

    # Simulation.run() is `mdsim run`, bit for bit.
    cli = os.path.join(work, "cli.yaml")
    with open(cli, "w") as f:
        f.write(config_text("cli_out"))
    subprocess.run([MDSIM, "run", cli], check=True, capture_output=True)
    summary = mdsim.Simulation(path).run()
    check(summary["last_step"] == 20, "run() goes to run.steps")
    import h5py
    with h5py.File(os.path.join(work, "cli_out/checkpoint.h5"), "r") as a, \
            h5py.File(os.path.join(work, "py_out/checkpoint.h5"), "r") as b:
        check(np.array_equal(a["positions_nm"][:], b["positions_nm"][:]) and
              np.array_equal(a["velocities_nm_per_ps"][:], b["velocities_nm_per_ps"][:]),
              "run(): the same final positions and velocities as mdsim run")
    strip = lambda p: [",".join(l.split(",")[:8]) for l in open(p).read().splitlines()]
    check(strip(os.path.join(work, "cli_out/state.csv")) == strip(os.path.join(work, "py_out/state.csv")),
          "run(): the same state log")
    with open(os.path.join(work, "cli_out/final.pdb")) as a, open(os.path.join(work, "py_out/final.pdb")) as b:
        check(a.read() == b.read(), "run(): the same final PDB")

    # Calls that are wrong say which argument and why, as Python's own errors.
    vac_yaml = (f"system: {{pdb: {DATA}/systems/ala2_vacuum.pdb, nonbonded_method: no_cutoff}}\nplatform: cpu\n"
                f"run: {{steps: 40}}\noutput: {{directory: {work}/plain, progress: false}}\n")
    plain = mdsim.Simulation.from_yaml(vac_yaml)
    for bad, kind in ((-5, ValueError), (10**30, ValueError), (1e12, TypeError), (float("nan"), TypeError),
                      ("10", TypeError), (True, TypeError)):
        try:
            plain.step(bad)
            message = "no error"
        except kind as err:
            message = str(err)
        except Exception as err:  # the wrong kind
            message = f"{type(err).__name__}: {err}"
        check(message.startswith("step(steps): steps must"), f"step({bad!r}) raises {kind.__name__}: {message}")
    plain.step(np.int64(2))
    check(plain.state()["step"] == 2, "step() takes a numpy integer")
    try:
        mdsim.Simulation(None)
        message = "no error"
    except TypeError as err:
        message = str(err)
    check(message.startswith("Simulation(config): config must be the path"), f"Simulation(None): {message}")
    check(mdsim.Simulation(pathlib.Path(path)).n_atoms == 2269, "Simulation takes an os.PathLike")

    # A force callback that calls back into the simulation gets an error, not a recursion.
    reentrant = mdsim.Simulation.from_yaml(vac_yaml)
    seen = []

    def calls_back(positions, forces, box):
        for call in (lambda: reentrant.step(1), reentrant.state):
            try:
                call()
                seen.append("no error")
            except RuntimeError as err:
                seen.append(str(err))
        return 0.0
    reentrant.add_force(calls_back)
    reentrant.step(1)
    check(len(seen) >= 2 and all("inside step(), run() or minimize()" in m for m in seen[:2]),
          f"a callback's step() and state() are refused: {seen[:2]}")

    # Ctrl-C: step() and run() stop between steps and raise KeyboardInterrupt; run()'s outputs stay whole.
    def interrupt_once_busy(sim_busy):
        # Once step()/run() works (state() then refuses as busy), and a little after: SIGINT to this process.
        while True:
            try:
                sim_busy.state()
                time.sleep(0.01)
            except RuntimeError:
                break
        time.sleep(0.3)
        os.kill(os.getpid(), signal.SIGINT)
    for what in ("step", "run"):
        long_yaml = (f"system: {{pdb: {DATA}/systems/ala2_vacuum.pdb, nonbonded_method: no_cutoff}}\nplatform: cpu\n"
                     f"run: {{steps: 100000000}}\noutput: {{directory: {work}/long_{what}, state: {{interval: 100}}, "
                     "trajectory: {interval: 100}, checkpoint: {interval: 1000}, progress: false}\n")
        sim_long = mdsim.Simulation.from_yaml(long_yaml)
        threading.Thread(target=interrupt_once_busy, args=(sim_long,)).start()
        started = time.time()
        try:
            sim_long.step(10**12) if what == "step" else sim_long.run()
            outcome = "ran to the end"
        except KeyboardInterrupt:
            outcome = "KeyboardInterrupt"
        stopped_at = sim_long.state()["step"]
        check(outcome == "KeyboardInterrupt" and time.time() - started < 60,
              f"Ctrl-C during {what}(): {outcome} at step {stopped_at}")
        if what == "run":
            with h5py.File(os.path.join(work, "long_run", "trajectory.h5"), "r") as f:
                frames = f["coordinates"].shape[0]
            lines = open(os.path.join(work, "long_run", "state.csv")).read().splitlines()
            check(stopped_at % 100 == 0 and frames == stopped_at // 100 and len(lines) - 1 == stopped_at // 100,
                  f"the interrupted run stopped at a restart point ({stopped_at}) with {frames} frames and "
                  f"{len(lines) - 1} state lines")
            # run() again continues the same outputs: the frames and lines before stay, new ones follow.
            threading.Thread(target=interrupt_once_busy, args=(sim_long,)).start()
            try:
                sim_long.run()
            except KeyboardInterrupt:
                pass
            later = sim_long.state()["step"]
            with h5py.File(os.path.join(work, "long_run", "trajectory.h5"), "r") as f:
                steps = list(f["particles/all/position/step"][:])
            more = open(os.path.join(work, "long_run", "state.csv")).read().splitlines()
            check(later > stopped_at and steps == list(range(100, later + 1, 100)) and more[:len(lines)] == lines and
                  len(more) - 1 == later // 100,
                  f"a second run() appends: steps {stopped_at} -> {later}, {len(steps)} frames, {len(more) - 1} lines")

    # load_checkpoint restores the random stream: a new Simulation (another seed) continues as the first would.
    first = mdsim.Simulation.from_yaml(vac_yaml)
    first.step(10)
    ck = os.path.join(work, "stream.h5")
    first.save_checkpoint(ck)
    first.step(20)
    second = mdsim.Simulation.from_yaml(vac_yaml)
    different_seed = second.seed != first.seed
    second.load_checkpoint(ck)
    second.step(20)
    check(different_seed and second.seed == first.seed and np.array_equal(second.positions, first.positions),
          "load_checkpoint into a new Simulation continues bit for bit (the checkpoint's seed)")

    # mdsim.Ensemble (issue 38): a config's replicas in this process. On the CPU platform they run one by one, so its
    # K x N x 3 arrays are read-only copies; exchange rounds, reporters and checkpoints come at their steps.
    ens_yaml = os.path.join(work, "ensemble.yaml")
    with open(ens_yaml, "w") as f:
        f.write(f"system: {{pdb: {DATA}/systems/ala2_vacuum.pdb, nonbonded_method: no_cutoff}}\nplatform: cpu\n"
                f"integrator: {{seed: 3}}\n"
                "replicas: {exchange: temperature, temperatures: [300 K, 330 K, 360 K], exchange_interval: 0.02 ps}\n"
                f"run: {{steps: 40}}\noutput: {{directory: {work}/ensemble, trajectory: {{interval: 20}}, "
                "state: {interval: 10}, progress: false}\n")
    ens = mdsim.Ensemble(ens_yaml, quiet=True)
    x0 = ens.positions
    check(ens.count == 3 and not ens.batched and isinstance(x0, np.ndarray) and x0.shape == (3, 22, 3) and
          not x0.flags.writeable, f"Ensemble on the CPU: {ens.count} replicas, positions {x0.shape} read-only copy")
    ens.step(25)
    st = ens.state()
    check(ens.current_step == 25 and st["step"] == 25 and st["potential_energy_kj_per_mol"].shape == (3,) and
          sorted(st["bath_temperature_k"]) == [300.0, 330.0, 360.0],
          f"Ensemble.step(25), state(): baths {list(st['bath_temperature_k'])}")
    check(not np.array_equal(ens.positions, x0) and ens.velocities.shape == (3, 22, 3) and ens.forces.shape == (3, 22, 3),
          "Ensemble positions moved; velocities and forces K x N x 3")
    check("acts on a replica batch" in raises(lambda: ens.add_force(lambda x, f, box: None), mdsim.InputError),
          "Ensemble.add_force needs a batch: refused on the CPU platform")
    check("step 41 is past it" in raises(lambda: ens.step(16), mdsim.InputError),
          "Ensemble.step past the config's run.steps is refused")
    ens.step(15)
    summary = ens.close()
    rounds = open(os.path.join(work, "ensemble", "exchange.csv")).read().splitlines()[1:]
    check(summary["last_step"] == 40 and len({r.split(",")[2] for r in rounds}) == 4,
          f"Ensemble.close(): step {summary['last_step']}, {len({r.split(',')[2] for r in rounds})} exchange rounds")
    check("closed" in str(raises(lambda: ens.step(1), mdsim.InputError)), "a closed Ensemble refuses step()")
    copies = mdsim.Ensemble.from_config({
        "system": {"pdb": f"{DATA}/systems/ala2_vacuum.pdb", "nonbonded_method": "no_cutoff"}, "platform": "cpu",
        "replicas": {"exchange": "none", "count": 2}, "run": {"steps": 10},
        "output": {"directory": os.path.join(work, "copies"), "progress": False}}, quiet=True)
    copies.step(10)
    check(copies.count == 2 and copies.close()["last_step"] == 10 and
          os.path.isdir(os.path.join(work, "copies", "replica_01")),
          "Ensemble.from_config(dict): 2 copies, 10 steps, their folders")
    check("must be a dict" in raises(lambda: mdsim.Ensemble.from_config("x.yaml"), TypeError),
          "Ensemble.from_config refuses what is not a dict")
    plain = os.path.join(work, "plain.yaml")
    with open(plain, "w") as f:
        f.write(vac_yaml)
    check("needs a config with 'replicas:'" in raises(lambda: mdsim.Ensemble(plain), mdsim.InputError),
          "Ensemble(config without replicas:) is refused")
finally:
    shutil.rmtree(work, ignore_errors=True)

print(f"test_python_api: {len(failures)} failed" if failures else "test_python_api: all passed")
sys.exit(1 if failures else 0)
