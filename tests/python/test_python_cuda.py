"""The Python package on the CUDA platform (CTest label `cuda`): the views are the engine's own
device memory, seen without a copy by CuPy (and Numba and PyTorch where installed) through
__cuda_array_interface__, and the forces agree with the CPU platform's.
Exit code 77 (CTest: skipped) without a CUDA device or without CuPy.
Usage: test_python_cuda.py TEST_DATA_DIR (PYTHONPATH must hold build/python)."""
import importlib.util
import os
import sys

import numpy as np

import mdsim
from checks import bath_means, check, failures, raises  # tests/python/checks.py

DATA = os.path.abspath(sys.argv[1])


def config(platform, precision="mixed"):
    return (f"system: {{pdb: {DATA}/systems/ala2_water.pdb, nonbonded_method: pme, cutoff: 0.9 nm}}\n"
            f"platform: {{name: {platform}, precision: {precision}}}\nintegrator: {{seed: 5}}\n")


if importlib.util.find_spec("cupy") is None:
    print("SKIPPED: CuPy is not installed")
    sys.exit(77)
try:
    sim = mdsim.Simulation.from_yaml(config("cuda", "double"))
except mdsim.ConfigError as e:
    print(f"SKIPPED: {e}")
    sys.exit(77)
import cupy

check(sim.platform == "cuda", "platform cuda")
x_view = sim.positions
cai = x_view.__cuda_array_interface__
check(cai["shape"] == (2269, 3) and cai["typestr"] == "<f8" and cai["version"] == 3 and cai["strides"] == (32, 8),
      f"__cuda_array_interface__: {cai['shape']}, {cai['typestr']}, strides {cai['strides']}")
x = cupy.asarray(x_view)
check(x.data.ptr == cai["data"][0], "cupy.asarray(sim.positions) is the engine's memory (same pointer, no copy)")
e0 = sim.state()["potential_energy_kj_per_mol"]
x[7] += 0.02
e1 = sim.state()["potential_energy_kj_per_mol"]
check(e1 != e0, f"a CuPy write changes the next energy ({e0:.4f} -> {e1:.4f} kJ/mol)")
x[7] -= 0.02
check(abs(sim.state()["potential_energy_kj_per_mol"] - e0) < 1e-9 * abs(e0), "writing back restores the energy")

# Forces: the CUDA platform (double precision) against the CPU platform at the same positions.
cpu = mdsim.Simulation.from_yaml(config("cpu"))
f_gpu = cupy.asnumpy(cupy.asarray(sim.forces))
f_cpu = np.array(cpu.forces)
rel = np.sqrt(((f_gpu - f_cpu) ** 2).sum() / (f_cpu ** 2).sum())
check(rel < 1e-9, f"forces (double precision) against the CPU platform: relative RMS difference {rel:.2e}")

v = cupy.asarray(sim.velocities)
check(v.shape == (2269, 3) and v.strides == (24, 8), "velocities: (N, 3), rows of 3 doubles")
before = x.copy()
sim.step(10)
check(not bool(cupy.array_equal(before, x)), "steps move what the CuPy array shows (same memory)")

# DLPack: the capsules point at the engine's memory too.
if importlib.util.find_spec("torch") is not None:
    import torch
    t = torch.from_dlpack(sim.positions)
    check(t.data_ptr() == cai["data"][0] and tuple(t.shape) == (2269, 3) and tuple(t.stride()) == (4, 1),
          "torch.from_dlpack(sim.positions): the same memory, strides (4, 1)")
c = cupy.from_dlpack(sim.velocities)
check(c.data.ptr == sim.velocities.__cuda_array_interface__["data"][0], "cupy.from_dlpack(sim.velocities): the same memory")
check(sim.positions.__dlpack_device__() == (2, 0), "__dlpack_device__: (kDLCUDA, 0)")

if importlib.util.find_spec("numba") is not None:
    from numba import cuda as nbcuda
    nb = nbcuda.as_cuda_array(sim.positions)
    check(nb.__cuda_array_interface__["data"][0] == cai["data"][0], "numba.cuda.as_cuda_array: the same memory")
if importlib.util.find_spec("torch") is not None:
    import torch
    t = torch.as_tensor(sim.positions, device="cuda")
    check(t.data_ptr() == cai["data"][0] and t.shape == (2269, 3), "torch.as_tensor: the same memory")

# add_force with a CuPy RawKernel (the examples' CupyRestraint): a harmonic position restraint on the
# engine's stream, against the same restraint computed on the host.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples", "python"))
from cupy_restraint import CupyRestraint  # noqa: E402  (examples/python/cupy_restraint.py)


restrained = mdsim.Simulation.from_yaml(config("cuda", "double"))
free = mdsim.Simulation.from_yaml(config("cuda", "double"))
atoms = list(range(0, 22))  # the dipeptide
k = 2.0e4  # kJ/mol/nm^2: thermal spread sqrt(kT/k) ~ 0.01 nm per coordinate
force = CupyRestraint(restrained, atoms, k)
restrained.add_force(force)
anchor = cupy.asnumpy(force.anchor)
moved = np.array(cupy.asnumpy(cupy.asarray(restrained.positions)))
moved[atoms] += 0.01 * np.sin(np.arange(3 * len(atoms))).reshape(-1, 3)  # away from the anchors
restrained.positions = moved
free.positions = moved
f_with = cupy.asnumpy(cupy.asarray(restrained.forces))
f_without = cupy.asnumpy(cupy.asarray(free.forces))
host = np.zeros_like(f_with)
host[atoms] = -k * (moved[atoms] - anchor)
added = f_with - f_without
rel = np.sqrt(((added - host) ** 2).sum() / (host ** 2).sum())
check(rel < 1e-6, f"CuPy restraint forces against the host's: relative RMS difference {rel:.2e}")
e_host = 0.5 * k * float(((moved[atoms] - anchor) ** 2).sum())
e = restrained.state()["energies_kj_per_mol"]["external"]
check(abs(e - e_host) < 1e-9 * e_host, f"its energy in state(): {e:.9f} vs host {e_host:.9f} kJ/mol")
restrained.step(10)
copies = mdsim._mdsim._host_device_copies()
restrained.step(200)
check(mdsim._mdsim._host_device_copies() == copies, "200 steps with the CuPy force make no host<->device copy")
drift = float(np.abs(cupy.asnumpy(cupy.asarray(restrained.positions))[atoms] - anchor).max())
check(drift < 0.06, f"the restrained atoms stay near their anchors over 200 steps (largest |dx| {drift:.4f} nm)")

# A callback's arrays are gone after its call: using one kept raises instead of reading freed memory.
kept = []
probe = mdsim.Simulation.from_yaml(config("cuda"))
probe.add_force(lambda positions, forces, box: kept.append(positions))
probe.step(1)
try:
    kept[0].__cuda_array_interface__
    check(False, "a callback's array used after the call raises")
except ValueError as err:
    check("gone now that the call returned" in str(err), f"a callback's array used after the call: {err}")

# A callback that writes a non-finite force: the engine's next stability check ends the run, naming it.
blown = mdsim.Simulation.from_yaml(config("cuda"))
blown_stream = blown.cupy_stream()


def nan_force(positions, forces, box):
    with blown_stream:
        cupy.asarray(forces)[3, 0] = cupy.nan


blown.add_force(nan_force)
try:
    blown.step(5)
    blown.state()
    check(False, "a non-finite force from a callback ends the run")
except mdsim.SimulationError as err:
    check("the simulation became unstable" in str(err) and "add_force #1 (nan_force)" in str(err),
          f"a non-finite force from a callback: {err}")

# Issue 37 on the GPU: sim.temperature set mid-run moves the measured temperature (Langevin, 50 ps each); the
# reporters of step() and run() write on the CUDA platform too, and a checkpoint continues bit for bit.
import tempfile  # noqa: E402

bath = mdsim.Simulation.from_structure(os.path.join(DATA, "systems", "ala2_water.pdb"), nonbonded_method="pme",
                                       cutoff="0.9 nm", integrator={"timestep": "2 fs", "temperature": "300 K"},
                                       platform="cuda", seed=23, quiet=True)
before, after = bath_means(bath, "350 K", "50 ps", 100)
# 2,269 atoms: a sample scatters by ~3%, the mean over 40 ps by well under 1%.
check(abs(before - 300.0) < 6.0 and abs(after - 350.0) < 7.0,
      f"CUDA: sim.temperature = 350 K mid-run: mean over the last 40 ps {before:.1f} K -> {after:.1f} K")
with tempfile.TemporaryDirectory(prefix="mdsim_cuda_reporters_") as work:
    traj, chk = os.path.join(work, "t.h5"), os.path.join(work, "c.h5")
    bath.reporters[:] = [mdsim.TrajectoryReporter(traj, 50, velocities=True), mdsim.CheckpointReporter(chk, 200)]
    bath.step(200)
    import shutil  # noqa: E402
    shutil.copy(chk, os.path.join(work, "half.h5"))
    bath.step(100)
    bath.run(steps=100)
    end_x = cupy.asnumpy(cupy.asarray(bath.positions))
    again = mdsim.Simulation.from_structure(os.path.join(DATA, "systems", "ala2_water.pdb"), nonbonded_method="pme",
                                            cutoff="0.9 nm", integrator={"timestep": "2 fs", "temperature": "350 K"},
                                            platform="cuda", quiet=True)
    again.load_checkpoint(os.path.join(work, "half.h5"))
    again.step(200)
    check(np.array_equal(cupy.asnumpy(cupy.asarray(again.positions)), end_x),
          "CUDA: a checkpoint written by step()'s reporters continues bit for bit in a new Simulation")
    import h5py  # noqa: E402
    with h5py.File(traj, "r") as f:
        steps = [int(x) for x in f["particles/all/position/step"][:]]
    first = 50000 + 50
    check(steps == list(range(first, first + 400, 50)), f"CUDA: trajectory frames of step() and run(): {steps[:3]}..")

# Issue 38: an Ensemble's replica batch as K x N x 3 arrays of the engine's memory. A replica's forces in the batch
# equal the same positions' forces in a Simulation alone, bit for bit; a write through the view moves its replica.
with tempfile.TemporaryDirectory(prefix="mdsim_cuda_ensemble_") as work:
    yaml_path = os.path.join(work, "copies.yaml")
    with open(yaml_path, "w") as f:
        f.write(config("cuda") + "replicas: {exchange: none, count: 3}\nrun: {steps: 100}\n"
                f"output: {{directory: {work}/out, trajectory: null, state: {{interval: 50}}, progress: false}}\n")
    ens = mdsim.Ensemble(yaml_path, quiet=True)
    xv = ens.positions
    cai = xv.__cuda_array_interface__
    check(ens.batched and cai["shape"] == (3, 2269, 3) and cai["strides"] == (2269 * 32, 32, 8),
          f"Ensemble: a batch; positions {cai['shape']}, strides {cai['strides']}")
    xs = cupy.asarray(xv)
    check(xs.data.ptr == cai["data"][0] and cupy.from_dlpack(ens.positions).data.ptr == cai["data"][0],
          "cupy.asarray / from_dlpack(ensemble.positions) are the batch's memory")
    ens.step(60)
    xs = cupy.asarray(ens.positions)  # imported again: CuPy waits for the engine's stream (the interface's)
    check(not cupy.array_equal(xs[0], xs[1]), "the copies move apart (their own seeds)")
    xs[1] = xs[0]  # replica 1 at replica 0's positions, through the view
    cupy.cuda.Stream.null.synchronize()
    u = ens.state()["potential_energy_kj_per_mol"]
    # The same positions, the same energy: to the fixed-point sums' grouping (~1e-13 relative, docs/replicas.md).
    check(abs(u[1] - u[0]) <= 1e-11 * abs(u[0]) and u[2] != u[0],
          f"a write through the view moves replica 1: energies {u[0]:.9f} {u[1]:.9f} {u[2]:.9f}")
    alone = mdsim.Simulation.from_yaml(config("cuda"), quiet=True)
    alone.positions = cupy.asnumpy(xs[2])
    f_batch = cupy.asnumpy(cupy.asarray(ens.forces)[2])
    f_alone = cupy.asnumpy(cupy.asarray(alone.forces))
    # Not bit for bit here: the batch's list was sorted steps ago and the new Simulation's now, so a pair may be
    # imaged about another block's centre (float rounding); layout errors would differ by whole forces.
    worst = float(np.max(np.abs(f_batch - f_alone)) / np.max(np.abs(f_alone)))
    check(worst < 1e-5, f"replica 2's forces in the batch are a Simulation's at its positions: largest difference "
                        f"{worst:.1e} of the largest force")
    # A force on the whole batch: atom 0 of replica r on a spring k_r = 100 (r + 1) kJ/mol/nm^2 to the origin, in CuPy
    # on the engine's stream; the callback returns the K energies.
    k_spring = cupy.asarray([100.0, 200.0, 300.0])

    def springs(positions, forces, box):
        with cupy.cuda.ExternalStream(positions.__cuda_array_interface__["stream"]):
            x0 = cupy.asarray(positions)[:, 0, :]
            f = cupy.asarray(forces)
            f[:, 0, :] -= k_spring[:, None] * x0
            return 0.5 * k_spring * (x0 * x0).sum(axis=1)

    before = ens.state()["potential_energy_kj_per_mol"]
    handle = ens.add_force(springs)
    st = ens.state()
    x0 = cupy.asnumpy(cupy.asarray(ens.positions)[:, 0, :])
    expected = 0.5 * np.array([100.0, 200.0, 300.0]) * (x0 * x0).sum(axis=1)
    check(np.allclose(st["external_energy_kj_per_mol"], expected, rtol=1e-12) and
          np.allclose(st["potential_energy_kj_per_mol"] - before, expected, rtol=1e-9),
          f"Ensemble.add_force: each replica's energy its own spring's ({st['external_energy_kj_per_mol']})")
    f_with = cupy.asnumpy(cupy.asarray(ens.forces))
    ens.remove_force(handle)
    f_without = cupy.asnumpy(cupy.asarray(ens.forces))
    check(np.allclose(f_with[:, 0, :] - f_without[:, 0, :], -np.array([100.0, 200.0, 300.0])[:, None] * x0, rtol=1e-6,
                      atol=1e-6) and np.array_equal(f_with[:, 1:, :], f_without[:, 1:, :]),
          "Ensemble.add_force's forces act on atom 0 of each replica alone; remove_force takes them out")
    ens.add_force(lambda positions, forces, box: [1.0, 2.0])
    err = raises(lambda: ens.state(), mdsim.SimulationError)
    check("not the energies of the 3 replicas" in err, f"a callback returning 2 energies for 3 replicas: {err}")
    ens.remove_force(2)
    ens.step(40)
    check(ens.close()["last_step"] == 100 and os.path.exists(os.path.join(work, "out", "replica_02", "state.csv")),
          "Ensemble.close() at step 100 with each replica's state log")
    check("belonged to an Ensemble that is closed now" in raises(lambda: xv.__cuda_array_interface__, ValueError),
          "a DeviceArray of a closed Ensemble refuses to be used")

print(f"test_python_cuda: {len(failures)} failed" if failures else "test_python_cuda: all passed")
sys.exit(1 if failures else 0)
