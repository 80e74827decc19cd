"""Runs one of examples/python and checks its last output line (CTest: the example_python_* tests).
Usage: run_example.py EXAMPLE REGEX [--cuda MDSIM_BINARY] [--needs MODULE ...] -- ARGS...
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
