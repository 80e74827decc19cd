"""The Python package's runs that continue, on the CPU platform (CTest python_continue):
  * a second run() never truncates: at the config's end it changes nothing; run(steps=...) / run(time=...) run more
    steps, appending to the trajectory and state log, and the pieces equal one uninterrupted run bit for bit;
  * load_checkpoint() into a new Simulation without a fixed seed continues bit for bit (positions and velocities),
    with step() and with run(steps=...);
  * Simulation.from_config(dict), and platform= / seed= on every constructor.
Usage: test_python_continue.py TEST_DATA_DIR (PYTHONPATH must hold build/python)."""
import os
import pathlib
import shutil
import sys
import tempfile

import h5py
import numpy as np

import mdsim
from checks import check, failures, raises  # tests/python/checks.py

DATA = os.path.abspath(sys.argv[1])


def config(out, steps=20, system="ala2_vacuum.pdb", method="no_cutoff", seed=None):
    """A config dict (the YAML's keys); no integrator.seed unless given."""
    integrator = {"timestep": "2 fs", "temperature": "300 K"}
    if seed is not None:
        integrator["seed"] = seed
    return {"system": {"pdb": pathlib.Path(DATA) / "systems" / system, "nonbonded_method": method,
                       "constraints": "hbonds"},
            "platform": "cpu", "integrator": integrator, "run": {"steps": steps},
            "output": {"directory": out, "trajectory": {"interval": 10, "velocities": True},
                       "state": {"interval": 10}, "checkpoint": {"interval": 10}, "progress": False}}


def outputs(folder):
    """The trajectory's frame steps, positions and velocities, and the state log's lines."""
    with h5py.File(os.path.join(folder, "trajectory.h5"), "r") as f:
        steps = [int(s) for s in f["particles/all/position/step"][:]]
        x = f["particles/all/position/value"][:]
        v = f["particles/all/velocity/value"][:]
    lines = open(os.path.join(folder, "state.csv")).read().splitlines()
    return steps, x, v, lines


def without_speed(lines):
    """State-log lines without the wall-clock speed column."""
    header = lines[0].split(",")
    keep = [i for i, name in enumerate(header) if "per_day" not in name and "speed" not in name]
    return [",".join(line.split(",")[i] for i in keep) for line in lines]


def test_second_run(work):
    """Issue 37's data loss: a second run() ran nothing and truncated the trajectory and the state log."""
    out = os.path.join(work, "twice")
    sim = mdsim.Simulation.from_config(config(out), seed=7)
    first = sim.run()
    steps, _, _, lines = outputs(out)
    check(first["last_step"] == 20 and steps == [10, 20] and len(lines) == 3, f"run(): 20 steps, {steps}, {len(lines) - 1} lines")
    before = {n: open(os.path.join(out, n), "rb").read() for n in ("trajectory.h5", "state.csv", "checkpoint.h5")}
    again = sim.run()
    check(again["already_complete"] and again["simulated_ps"] == 0.0 and
          all(open(os.path.join(out, n), "rb").read() == b for n, b in before.items()),
          "a second run() at the config's end: already_complete, every file unchanged (it used to truncate them)")
    more = sim.run(steps=20)
    steps, _, _, more_lines = outputs(out)
    check(more["first_step"] == 20 and more["last_step"] == 40 and abs(more["simulated_ps"] - 0.04) < 1e-12 and
          steps == [10, 20, 30, 40] and more_lines[:3] == lines and len(more_lines) == 5,
          f"run(steps=20) continues past run.steps and appends: frames {steps}, {len(more_lines) - 1} lines")
    sim.step(5)  # no reporters; the next run() continues after step 45
    last = sim.run(time="10 fs")
    steps, x, v, lines = outputs(out)
    check(last["first_step"] == 45 and last["last_step"] == 50 and steps == [10, 20, 30, 40, 50] and len(lines) == 6,
          f"run(time='10 fs') after step(5): steps 45 -> 50, frames {steps}")

    # The pieces (20 + 20 + 5 + 5 steps) equal one uninterrupted run of 50.
    whole_out = os.path.join(work, "whole")
    whole = mdsim.Simulation.from_config(config(whole_out, steps=50), seed=7)
    whole.run()
    w_steps, wx, wv, w_lines = outputs(whole_out)
    check(w_steps == steps and np.array_equal(wx, x) and np.array_equal(wv, v),
          "the continued run's frames equal an uninterrupted run's, bit for bit")
    check(without_speed(w_lines) == without_speed(lines), "... and so do its state lines")
    with h5py.File(os.path.join(out, "checkpoint.h5"), "r") as a, h5py.File(os.path.join(whole_out, "checkpoint.h5"), "r") as b:
        check(np.array_equal(a["positions_nm"][:], b["positions_nm"][:]) and
              np.array_equal(a["velocities_nm_per_ps"][:], b["velocities_nm_per_ps"][:]),
              "... and its final checkpoint")

    for call, kind, expected in (
            (lambda: sim.run(time="3 fs"), ValueError, "run(time): 3 fs is not a whole number of time steps of 0.002 ps"),
            (lambda: sim.run(time="1 nm"), ValueError, "run(time): "),
            (lambda: sim.run(time=[1]), TypeError, "run(time): expected a number in ps, a string with a unit"),
            (lambda: sim.run(steps=-1), ValueError, "run(steps): steps must be from 0"),
            (lambda: sim.run(steps=1.5), TypeError, "run(steps): steps must be a whole number"),
            (lambda: sim.run(steps=1, time="2 fs"), TypeError, "run(): give steps= or time=, not both")):
        message = raises(call, kind)
        check(message.startswith(expected), f"{kind.__name__}: {message}")
    check(sim.state()["step"] == 50 and outputs(out)[0] == steps, "refused lengths run nothing and write nothing")
    staged_cfg = config(os.path.join(work, "staged"), seed=3)
    del staged_cfg["run"]
    staged = mdsim.Simulation.from_config({**staged_cfg, "stages": [{"name": "a", "steps": 10}]})
    message = raises(lambda: staged.run(steps=5), mdsim.ConfigError)
    check("run() takes no length" in message, f"run(steps=) of a staged config is refused: {message}")
    staged.step(4)  # without reporters: a staged config's outputs are run()'s
    check(staged.state()["step"] == 4 and not os.path.exists(os.path.join(work, "staged", "trajectory.h5")),
          "step() of a staged config advances without writing")


def test_exact_restart(work):
    """load_checkpoint into a new Simulation (no fixed seed) continues bit for bit: N steps, a checkpoint, M more."""
    water = config(os.path.join(work, "restart"), system="ala2_water.pdb", method="pme")
    for how in ("step", "run"):
        first = mdsim.Simulation.from_config(water)
        first.step(10)
        ck = os.path.join(work, f"restart_{how}.h5")
        first.save_checkpoint(ck)
        advance = (lambda s: s.step(10)) if how == "step" else (lambda s: s.run(steps=10))
        advance(first)
        second = mdsim.Simulation.from_config(water)
        other_seed = second.seed != first.seed
        second.load_checkpoint(ck)
        advance(second)
        check(other_seed and second.seed == first.seed and second.state()["step"] == first.state()["step"] == 20 and
              np.array_equal(second.positions, first.positions) and
              np.array_equal(second.velocities, first.velocities),
              f"load_checkpoint + {how}(10) in a new Simulation: positions and velocities bit-identical (seed "
              f"{first.seed} restored over {'another' if other_seed else 'the same'})")
    # The checkpoint's seed wins over the constructor's seed=.
    third = mdsim.Simulation.from_config(water, seed=99)
    third.load_checkpoint(ck)
    check(third.seed == first.seed, "load_checkpoint restores the checkpoint's seed over seed=")


def test_constructors(work):
    """from_config(dict) and platform= / seed= on every constructor."""
    cfg = config(os.path.join(work, "ctor"))
    cfg["platform"] = "auto"
    sim = mdsim.Simulation.from_config(cfg, platform="cpu", seed=1234)
    check(sim.platform == "cpu" and sim.seed == 1234 and sim.n_atoms == 22,
          "from_config(dict, platform='cpu', seed=1234)")
    check(not os.path.exists(os.path.join(work, "ctor")), "from_config writes nothing")
    twin = mdsim.Simulation.from_config(cfg, platform="cpu", seed=1234)
    check(np.array_equal(twin.velocities, sim.velocities), "the same seed= draws the same velocities")
    relative = mdsim.Simulation.from_config({"system": {"pdb": "ala2_vacuum.pdb", "nonbonded_method": "no_cutoff"},
                                             "integrator": {"seed": 5}},
                                            base_dir=os.path.join(DATA, "systems"), platform="cpu")
    check(relative.seed == 5 and relative.platform == "cpu", "from_config: paths relative to base_dir; the config's seed")
    yaml_text = "system: {pdb: ala2_vacuum.pdb, nonbonded_method: no_cutoff}\nintegrator: {seed: 5}\n"
    from_yaml = mdsim.Simulation.from_yaml(yaml_text, base_dir=os.path.join(DATA, "systems"), platform="cpu", seed=6)
    check(from_yaml.seed == 6 and from_yaml.platform == "cpu", "from_yaml(..., platform='cpu', seed=6) overrides the config")
    path = os.path.join(work, "c.yaml")
    with open(path, "w") as f:
        f.write(yaml_text.replace("ala2_vacuum.pdb", os.path.join(DATA, "systems", "ala2_vacuum.pdb")))
    from_file = mdsim.Simulation(path, platform="cpu", seed=8)
    check(from_file.seed == 8 and from_file.platform == "cpu", "Simulation(path, platform='cpu', seed=8)")
    check(mdsim.Simulation(path, platform="cpu").seed == 5, "without seed= the config's integrator.seed holds")

    for call, kind, expected in (
            (lambda: mdsim.Simulation(path, platform="gpu"), ValueError, "platform: expected"),
            (lambda: mdsim.Simulation(path, platform=1), TypeError, "platform: expected"),
            (lambda: mdsim.Simulation(path, seed=0), ValueError, "seed: expected a whole number from 1"),
            (lambda: mdsim.Simulation(path, seed=-3), ValueError, "seed: expected a whole number from 1"),
            (lambda: mdsim.Simulation(path, seed="7"), TypeError, "seed: expected a whole number"),
            (lambda: mdsim.Simulation.from_config("system: {}"), TypeError, "from_config(config): config must be a dict"),
            (lambda: mdsim.Simulation.from_config({"system": {"pdb": object()}}), TypeError, "from_config: ")):
        message = raises(call, kind)
        check(message.startswith(expected), f"{kind.__name__}: {message}")
    bad = dict(cfg, integrator={"temprature": 300})
    message = raises(lambda: mdsim.Simulation.from_config(bad), mdsim.ConfigError)
    check(message.startswith("<config>:") and "temperature" in message, f"from_config's ConfigError names the key: {message}")


work = tempfile.mkdtemp(prefix="mdsim_python_continue_")
try:
    test_second_run(work)
    test_exact_restart(work)
    test_constructors(work)
finally:
    shutil.rmtree(work, ignore_errors=True)

print(f"test_python_continue: {len(failures)} failed" if failures else "test_python_continue: all passed")
sys.exit(1 if failures else 0)
