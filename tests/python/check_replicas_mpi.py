"""Replica ensembles over MPI ranks, end to end with the mdsim binary and mpirun on the CPU platform.

  python3 check_replicas_mpi.py MDSIM MPIEXEC DATA_DIR

A 4-replica temperature ladder on alanine dipeptide in vacuum (300-400 K):
  - in one process, over 2 ranks and over 3 ranks (2 + 1 + 1 replicas): the same exchange log, byte for byte,
    and the same state logs (but for the speed column);
  - half the run in one process, the rest resumed over 2 ranks: the same again;
  - more ranks than replicas, a config without replicas under mpirun, a bad config, and one rank's bad output
    path: exit status 2 from every rank and one error line;
  - one rank failing mid-run (a full disk, injected into rank 0 only): every rank stops with status 1, every
    trajectory and the ensemble checkpoint stay readable, and --resume completes the run as if nothing happened;
  - SIGTERM to mpirun: every rank stops at the same step with a checkpoint, and --resume continues as an
    uninterrupted run;
  - mdsim demux: per-temperature trajectories that MDTraj and MDAnalysis read.
Exit 0 when all pass, 1 on a failure, 77 (skipped) when mpirun is missing.
"""
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from checks import check, failures  # tests/python/checks.py

MDSIM, MPIEXEC, DATA = sys.argv[1], sys.argv[2], sys.argv[3]


CONFIG = """\
system: {{structure: {pdb}, forcefield: [amber14-all.xml], nonbonded_method: no_cutoff}}
platform: cpu
integrator: {{friction: 1/ps, timestep: 2 fs, seed: 5}}
replicas: {{exchange: temperature, temperatures: {{min: 300 K, max: 400 K, count: 4}}, exchange_interval: 0.1 ps}}
run: {{steps: {steps}}}
output: {{directory: {out}, trajectory: {{interval: 100}}, state: {{interval: 50}},
         checkpoint: {{interval: 200}}, progress: false}}
"""


def write_config(folder, out, steps, **changes):
    text = CONFIG.format(pdb=os.path.join(DATA, "systems", "ala2_vacuum.pdb"), out=out, steps=steps)
    for old, new in changes.items():
        text = text.replace(old, new)
    path = os.path.join(folder, out + ".yaml")
    with open(path, "w") as f:
        f.write(text)
    return path


ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
           OMPI_MCA_rmaps_base_oversubscribe="1")


def run(args, ranks=None, env=None):
    command = ([MPIEXEC, "-n", str(ranks), "--oversubscribe"] if ranks else []) + args
    if ranks and args and args[0] == ":":  # MPMD: given whole
        command = [MPIEXEC, "--oversubscribe"] + args[1:]
    p = subprocess.run(command, capture_output=True, text=True, env=env or ENV, timeout=300)
    return p.returncode, p.stdout, p.stderr


def text(path):
    with open(path) as f:
        return f.read()


def state_without_speed(path):
    return [line.rsplit(",", 1)[0] for line in text(path).splitlines()]


def same_outputs(a, b):
    if text(os.path.join(a, "exchange.csv")) != text(os.path.join(b, "exchange.csv")):
        return False
    return all(state_without_speed(os.path.join(a, f"replica_0{k}", "state.csv")) ==
               state_without_speed(os.path.join(b, f"replica_0{k}", "state.csv")) for k in range(4))


def error_lines(stderr):
    return [line for line in stderr.splitlines() if line.startswith("error:")]


def main():
    if not shutil.which(MPIEXEC) and not os.path.exists(MPIEXEC):
        print(f"SKIPPED: {MPIEXEC} not found")
        return 77
    folder = tempfile.mkdtemp(prefix="mdsim_replicas_mpi_")
    os.chdir(folder)
    try:
        code, out, err = run([MDSIM, "run", write_config(folder, "alone", 1000)])
        check(code == 0, f"4 replicas in one process (rc {code}) {err.strip()[-300:] if code else ''}")
        for ranks in (2, 3):
            code, out, err = run([MDSIM, "run", write_config(folder, f"mpi{ranks}", 1000)], ranks)
            check(code == 0 and f"MPI, {ranks} ranks" in out, f"4 replicas over {ranks} ranks (rc {code}) {err.strip()[-300:]}")
            check(code == 0 and same_outputs("alone", f"mpi{ranks}"),
                  f"{ranks} ranks: the exchange log and state logs of the run in one process")

        run([MDSIM, "run", write_config(folder, "resumed", 400)])
        code, out, err = run([MDSIM, "run", "--resume", write_config(folder, "resumed", 1000)], 2)
        check(code == 0 and "steps 400 to 1000" in out, f"--resume over 2 ranks (rc {code}) {err.strip()[-300:]}")
        check(code == 0 and same_outputs("alone", "resumed"), "resumed over 2 ranks: the uninterrupted run's logs")

        # Bad input: one located error, status 2 from every rank.
        cases = [
            ("more ranks than replicas", [MDSIM, "run", write_config(folder, "five", 100)], 5,
             r"^error: .*five.yaml:4:1: replicas: 5 MPI ranks for 4 replicas would leave ranks without work"),
            ("no replicas under mpirun", [MDSIM, "run", write_config(folder, "single", 100, **{
                "replicas: {exchange: temperature, temperatures: {min: 300 K, max: 400 K, count: 4}, "
                "exchange_interval: 0.1 ps}\n": ""})], 2,
             r"mpirun started 2 ranks, but the config has no 'replicas' section"),
            ("temperatures not increasing", [MDSIM, "run", write_config(folder, "bad", 100, **{
                "{min: 300 K, max: 400 K, count: 4}": "[300 K, 290 K]"})], 2,
             r"^error: .*bad.yaml:4:57: 'temperatures' must increase"),
        ]
        for what, args, ranks, pattern in cases:
            code, out, err = run(args, ranks)
            lines = error_lines(err)
            check(code == 2 and len(lines) == 1 and re.search(pattern, lines[0]) is not None,
                  f"{what}: status {code}, {len(lines)} error line(s): {lines[:2]}")
        blocked = write_config(folder, "blocked", 100)
        os.makedirs(os.path.join("blocked", "replica_03", "trajectory.h5"))
        code, out, err = run([MDSIM, "run", blocked], 2)
        lines = error_lines(err)
        check(code == 2 and len(lines) == 1 and "replica_03/trajectory.h5" in lines[0] and "is a directory" in lines[0],
              f"rank 1's replica has a folder for its trajectory: status {code}, {lines[:2]}")

        # One rank fails mid-run: rank 0 runs out of disk at its third frame (step 300, after the checkpoint of step 200).
        fail = write_config(folder, "fail", 1000)
        code, out, err = run([":", "-n", "1", "env", "MDSIM_FAULT_TRAJECTORY_BYTES=120000", MDSIM, "run", fail, ":",
                              "-n", "1", MDSIM, "run", fail], 2)
        lines = error_lines(err)
        check(code == 1 and len(lines) == 1 and "No space left on device" in lines[0],
              f"rank 0 fails mid-run: status {code}, {lines[:2]}")
        try:
            import h5py
            readable = True
            for k in range(4):
                with h5py.File(os.path.join("fail", f"replica_0{k}", "trajectory.h5"), "r") as f:
                    readable &= f.attrs["complete"] == 0 and f["coordinates"].shape[0] >= 1
            with h5py.File(os.path.join("fail", "checkpoint.h5"), "r") as f:
                step = int(f.attrs["step"])
            check(readable and 0 < step < 1000, f"after the failure: every trajectory readable (complete=0), "
                                               f"the checkpoint at step {step}")
        except ImportError:
            print("skip  h5py missing: the files after the failure are not opened")
        code, out, err = run([MDSIM, "run", "--resume", fail], 2)
        check(code == 0 and same_outputs("alone", "fail"), f"--resume after the failure: the uninterrupted run's logs "
                                                           f"(rc {code}) {err.strip()[-300:]}")

        # A stop request: SIGTERM to mpirun reaches both ranks, which stop together with a checkpoint; --resume in one
        # process then continues as an uninterrupted run of the same length.
        long_run = write_config(folder, "stopped", 2000000)
        # Open MPI 4.1's mpirun passes the SIGTERM on to the ranks odls_base_sigkill_timeout seconds after it gets it,
        # and SIGKILLs them as long after that (default 1 s: a slow machine may need longer to reach the restart point
        # and write the checkpoint). 5 s: the run goes on ~5 s after the signal (with 60 s, this check took 4 minutes).
        p = subprocess.Popen([MPIEXEC, "-n", "2", "--oversubscribe", MDSIM, "run", long_run], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True, env=dict(ENV, OMPI_MCA_odls_base_sigkill_timeout="5"))
        state = os.path.join("stopped", "replica_00", "state.csv")
        deadline = time.time() + 120
        while time.time() < deadline and (not os.path.exists(state) or len(text(state).splitlines()) < 40):
            time.sleep(0.05)
        p.send_signal(signal.SIGTERM)
        out, err = p.communicate(timeout=120)
        match = re.search(r"^stopped 4 replicas .* steps 0 to (\d+)", out, re.M)
        check(p.returncode == 1 and match is not None and not os.path.exists(os.path.join("stopped", "replica_00", "final.pdb")),
              f"SIGTERM to mpirun: status {p.returncode}, {match.group(0) if match else out.strip()[-300:]} {err.strip()[-200:]}")
        if match:
            end = int(match.group(1)) + 1000
            code, out, err = run([MDSIM, "run", "--resume", write_config(folder, "stopped", end)])
            run([MDSIM, "run", write_config(folder, "straight", end)])
            check(code == 0 and same_outputs("stopped", "straight"),
                  f"--resume after the stop (to step {end}): the uninterrupted run's logs (rc {code}) {err.strip()[-200:]}")

        # demux of the MPI run.
        code, out, err = run([MDSIM, "demux", os.path.join(folder, "mpi2.yaml")])
        check(code == 0 and "10 frames and 20 state lines per temperature" in out, f"mdsim demux (rc {code}) {err.strip()}")
        try:
            import mdtraj
            import MDAnalysis
            import warnings
            warnings.simplefilter("ignore")
            demuxed = sorted(p for p in os.listdir(os.path.join("mpi2", "demux")) if p.endswith(".h5"))
            frames = [mdtraj.load(os.path.join("mpi2", "demux", p)).n_frames for p in demuxed]
            u = MDAnalysis.Universe(os.path.join("mpi2", "replica_00", "final.pdb"),
                                    os.path.join("mpi2", "demux", demuxed[0]), format="H5MD")
            check(len(demuxed) == 4 and frames == [10] * 4 and len(u.trajectory) == 10,
                  f"MDTraj and MDAnalysis read the demultiplexed trajectories: {demuxed}, frames {frames}")
        except ImportError as e:
            print(f"skip  {e.name} missing: the demultiplexed trajectories are not opened")
    finally:
        os.chdir("/")
        shutil.rmtree(folder, ignore_errors=True)
    print(f"check_replicas_mpi: {len(failures)} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
