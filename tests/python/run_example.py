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
for i, option in enumerate(options):
    if option == "--needs" and importlib.util.find_spec(options[i + 1]) is None:
        print(f"SKIPPED: the Python module {options[i + 1]} is not installed")
        sys.exit(77)
    if option == "--needs-jit":  # the module must also compile a CUDA kernel here (Numba with a numpy it supports)
        probe = subprocess.run([sys.executable, "-c", "from numba import cuda\n@cuda.jit\ndef k(a):\n    a[0] = 1\n"
                                "import numpy as np\nk[1, 1](cuda.to_device(np.zeros(1)))"], capture_output=True, text=True)
        if probe.returncode != 0:
            reason = (probe.stderr.strip().splitlines() or ["?"])[-1]
            print(f"SKIPPED: Numba cannot compile a CUDA kernel with this installation ({reason})")
            sys.exit(77)
    if option == "--cuda":
        listing = subprocess.run([options[i + 1], "platforms"], capture_output=True, text=True).stdout
        if "cuda:0" not in listing:
            print("SKIPPED: no CUDA device")
            sys.exit(77)
run = subprocess.run([sys.executable, example] + example_args, capture_output=True, text=True, timeout=600)
print(run.stdout[-3000:], run.stderr[-3000:])
last = run.stdout.strip().splitlines()[-1] if run.stdout.strip() else ""
if run.returncode != 0 or not re.search(pattern, last):
    print(f"FAIL: exit {run.returncode}, last line {last!r} does not match {pattern!r}")
    sys.exit(1)
print("ok")
