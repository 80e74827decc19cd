"""`python -m mdsim ARGS...`: the mdsim command (`mdsim run config.yaml`, `mdsim check`, ...), the same program
with the same arguments and exit code; also the `mdsim` command `pip install` puts on PATH."""
import os
import sys


def command():
    """The mdsim program: the installed package's bin/mdsim, else the build tree's (PYTHONPATH=build/python)."""
    here = os.path.dirname(os.path.abspath(__file__))
    candidates = [os.path.join(here, "bin", "mdsim"), os.path.join(here, "..", "..", "mdsim")]
    for path in candidates:
        if os.path.isfile(path) and os.access(path, os.X_OK):
            return os.path.abspath(path)
    sys.stderr.write("mdsim: the mdsim program is not where the package expects it (looked at "
                     + ", ".join(os.path.abspath(p) for p in candidates) + "): reinstall with `pip install .`\n")
    sys.exit(2)


def main():
    program = command()
    os.execv(program, [program, *sys.argv[1:]])  # signals (Ctrl-C, SIGTERM) reach mdsim itself


if __name__ == "__main__":
    main()
