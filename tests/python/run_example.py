"""Runs one of examples/python and checks its last output line (CTest: the example_python_* tests).
Usage: run_example.py EXAMPLE REGEX [--cuda MDSIM_BINARY] [--needs MODULE ...] [--needs-jit numba] -- ARGS...
Exit 77 (CTest: skipped) when the example needs the CUDA platform and `mdsim platforms` lists no device, or
needs a Python module this interpreter lacks."""
import importlib.util
import re
import subprocess
import sys

args = sys.argv[1:]
split = args.index("--") if "--" in args else len(args)
options, example_args = args[:split], args[split + 1:]
example, pattern = options[0], options[1]
prelude = ""
for i, option in enumerate(options):
    if option == "--needs" and importlib.util.find_spec(options[i + 1]) is None:
        print(f"SKIPPED: the Python module {options[i + 1]} is not installed")
        sys.exit(77)
    if option == "--needs-jit":  # the module must also compile a CUDA kernel here (Numba with a numpy it supports)
        probe_code = ("from numba import cuda\n@cuda.jit\ndef k(a):\n    a[0] = 1\n"
                      "import numpy as np\nk[1, 1](cuda.to_device(np.zeros(1)))")
        probe = subprocess.run([sys.executable, "-c", probe_code], capture_output=True, text=True)
        if probe.returncode != 0 and "row_stack" in probe.stderr:
            # Numba 0.68 still refers to np.row_stack, which numpy 2.4 removed (it was np.vstack's alias): with
            # the alias restored for this run only, Numba compiles; the example itself is unchanged.
            shim = "import numpy\nnumpy.row_stack = numpy.vstack\n"
            probe = subprocess.run([sys.executable, "-c", shim + probe_code], capture_output=True, text=True)
            if probe.returncode == 0:
                print("note: numpy.row_stack restored as numpy.vstack for Numba (numba 0.68 with numpy >= 2.4)")
                prelude = shim
        if probe.returncode != 0:
            reason = (probe.stderr.strip().splitlines() or ["?"])[-1]
            print(f"SKIPPED: Numba cannot compile a CUDA kernel with this installation ({reason})")
            sys.exit(77)
    if option == "--cuda":
        listing = subprocess.run([options[i + 1], "platforms"], capture_output=True, text=True).stdout
        if "cuda:0" not in listing:
            print("SKIPPED: no CUDA device")
            sys.exit(77)
command = [sys.executable, example] + example_args
if prelude:  # run the example as a script after the prelude
    command = [sys.executable, "-c", prelude + "import runpy, sys\nsys.argv = sys.argv[1:]\n"
               "sys.path.insert(0, __import__('os').path.dirname(sys.argv[0]))\n"
               "runpy.run_path(sys.argv[0], run_name='__main__')", example] + example_args
run = subprocess.run(command, capture_output=True, text=True, timeout=600)
print(run.stdout[-3000:], run.stderr[-3000:])
last = run.stdout.strip().splitlines()[-1] if run.stdout.strip() else ""
if run.returncode != 0 or not re.search(pattern, last):
    print(f"FAIL: exit {run.returncode}, last line {last!r} does not match {pattern!r}")
    sys.exit(1)
print("ok")
