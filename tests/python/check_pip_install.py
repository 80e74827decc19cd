"""`pip install .` into a fresh virtual environment (python3 -m venv --system-site-packages), offline, then the
package used from another folder: `import mdsim` finds the venv's copy (its version the installed metadata's), a
Simulation steps on the CPU platform, and `python -m mdsim` and the `mdsim` console script run the command line
program with its exit codes; pip leaves nothing in the source tree outside build-pip/ (CTest python_pip_install).
Usage: check_pip_install.py SOURCE_DIR CMAKE_BUILD_DIR TEST_DATA_DIR. The build tree is reused
(MDSIM_CMAKE_BUILD_DIR): pip's CMake step only checks it is up to date. A fresh build: docs/python.md."""
import os
import subprocess
import sys
import tempfile
import time
from checks import check, failures  # tests/python/checks.py

source, build, data = (os.path.abspath(a) for a in sys.argv[1:4])


def run(command, cwd, env):
    result = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True)
    return result.returncode, result.stdout + result.stderr


def make_venv(work):
    venv = os.path.join(work, "venv")
    code, out = run([sys.executable, "-m", "venv", "--system-site-packages", venv], work, None)
    if code != 0 or not os.path.exists(os.path.join(venv, "bin", "pip")):
        print(out)
        sys.exit("FAIL  python3 -m venv could not make a virtual environment with pip: install Debian's python3-venv "
                 "(scripts/setup.sh --tests does)")
    return venv


def pip_install(venv, work, env):
    """Installs the source tree; True when pip succeeded. Also checks pip left no new file in the source tree."""
    before = {d: set(os.listdir(os.path.join(source, d))) for d in (".", "python", "python/mdsim")}
    t0 = time.time()
    code, out = run([os.path.join(venv, "bin", "python"), "-m", "pip", "install", "--no-build-isolation", "--no-deps",
                     "--no-index", source], work, dict(env, MDSIM_CMAKE_BUILD_DIR=build))
    hint = "\n(no bdist_wheel: install Debian's python3-wheel)" if "bdist_wheel" in out else ""
    check(code == 0, f"pip install --no-build-isolation --no-deps --no-index SOURCE ({time.time() - t0:.1f} s)"
          + ("" if code == 0 else "\n" + out + hint))
    new = [os.path.join(d, n) for d, names in before.items()
           for n in set(os.listdir(os.path.join(source, d))) - names if n not in ("build-pip", "__pycache__")]
    check(not new, f"pip wrote nothing in the source tree but build-pip/: new {new}")
    return code == 0


def use_package(venv, work, env):
    """The installed package from a folder outside the source and build trees."""
    python = os.path.join(venv, "bin", "python")
    probe = ("import importlib.metadata, os, mdsim\n"
             f"sim = mdsim.Simulation.from_structure({os.path.join(data, 'systems', 'ala2_vacuum.pdb')!r}, "
             "nonbonded_method='no_cutoff', platform='cpu', seed=3, quiet=True)\n"
             "sim.step(10)\n"
             "print(mdsim.__file__, mdsim.__version__, importlib.metadata.version('mdsim'), sim.state()['step'])\n")
    code, out = run([python, "-c", probe], work, env)
    words = out.split()
    check(code == 0 and len(words) == 4 and words[0].startswith(os.path.join(venv, "lib")) and words[1] == words[2]
          and words[3] == "10", f"import mdsim from the venv (version: the metadata's), 10 CPU steps: {out.strip()}")
    package = os.path.dirname(words[0]) if words else ""
    code, out = run([python, "-c", "import mdsim; print(mdsim._mdsim._forcefield_dirs()[0])"], work, env)
    check(code == 0 and out.strip() == os.path.join(package, "share", "mdsim", "forcefields"),
          f"bundled force fields from the installed package first: {out.strip()}")
    check(all(os.path.isfile(os.path.join(package, f)) for f in ("_mdsim.pyi", "py.typed")),
          "the type stub and py.typed are installed")
    code, out = run([python, "-m", "mdsim", "--version"], work, env)
    check(code == 0 and out.startswith("mdsim "), f"python -m mdsim --version: {out.strip()}")
    code, out = run([os.path.join(venv, "bin", "mdsim"), "platforms"], work, env)
    check(code == 0 and "cpu" in out.lower(), f"the venv's mdsim console script: mdsim platforms (exit {code})")
    # The same exit code as the program's own on a usage error (2), through python -m mdsim.
    missing = os.path.join(work, "missing.yaml")
    direct, _ = run([os.path.join(build, "mdsim"), "check", missing], work, env)
    code, out = run([python, "-m", "mdsim", "check", missing], work, env)
    check(code == direct == 2, f"python -m mdsim check MISSING exits {code}, the program {direct} (2 expected)")


with tempfile.TemporaryDirectory(prefix="mdsim_pip_") as work:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "MDSIM_CMAKE_BUILD_DIR")}
    start = time.time()
    venv = make_venv(work)
    print(f"venv in {time.time() - start:.1f} s", flush=True)
    if pip_install(venv, work, env):
        use_package(venv, work, env)
    print(f"check_pip_install: {time.time() - start:.1f} s in all")

print(f"check_pip_install: {len(failures)} failed" if failures else "check_pip_install: all passed")
sys.exit(1 if failures else 0)
