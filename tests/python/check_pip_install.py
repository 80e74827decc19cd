"""`pip install .` into a fresh virtual environment (python3 -m venv --system-site-packages), offline, then the
package used from another folder: `import mdsim` finds the venv's copy, a Simulation steps on the CPU platform, and
`python -m mdsim` and the `mdsim` console script run the command line program (CTest python_pip_install).
Usage: check_pip_install.py SOURCE_DIR CMAKE_BUILD_DIR TEST_DATA_DIR. The build tree is reused
(MDSIM_CMAKE_BUILD_DIR): pip's CMake step only checks it is up to date. A fresh build: docs/python.md."""
import os
import subprocess
import sys
import tempfile

source, build, data = (os.path.abspath(a) for a in sys.argv[1:4])
failures = []


def check(condition, what):
    print(("ok    " if condition else "FAIL  ") + what)
    if not condition:
        failures.append(what)


def run(command, cwd, env=None):
    result = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True)
    return result.returncode, result.stdout + result.stderr


with tempfile.TemporaryDirectory(prefix="mdsim_pip_") as work:
    venv = os.path.join(work, "venv")
    code, out = run([sys.executable, "-m", "venv", "--system-site-packages", venv], work)
    if code != 0:
        print(out)
        sys.exit(f"FAIL  python3 -m venv failed: install Debian's python3-venv (scripts/setup.sh does)")
    env = dict(os.environ, MDSIM_CMAKE_BUILD_DIR=build, PYTHONPATH="")
    python = os.path.join(venv, "bin", "python")
    code, out = run([python, "-m", "pip", "install", "--no-build-isolation", "--no-deps", "--no-index", source], work,
                    env)
    check(code == 0, "pip install --no-build-isolation --no-deps --no-index SOURCE" + ("" if code == 0 else "\n" + out))
    probe = ("import os, mdsim\n"
             f"sim = mdsim.Simulation.from_structure({os.path.join(data, 'systems', 'ala2_vacuum.pdb')!r}, "
             "nonbonded_method='no_cutoff', platform='cpu', seed=3, quiet=True)\n"
             "sim.step(10)\n"
             "print(mdsim.__file__, mdsim.__version__, sim.state()['step'])\n")
    code, out = run([python, "-c", probe], work, env)
    check(code == 0 and out.startswith(os.path.join(venv, "lib")) and out.split()[-1] == "10",
          f"import mdsim from the venv, 10 steps: {out.strip()}")
    code, out = run([python, "-m", "mdsim", "--version"], work, env)
    check(code == 0 and out.startswith("mdsim "), f"python -m mdsim --version: {out.strip()}")
    code, out = run([os.path.join(venv, "bin", "mdsim"), "platforms"], work, env)
    check(code == 0 and "cpu" in out, "the venv's mdsim console script: mdsim platforms")

print(f"check_pip_install: {len(failures)} failed" if failures else "check_pip_install: all passed")
sys.exit(1 if failures else 0)
