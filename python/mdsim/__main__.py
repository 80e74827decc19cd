"""`python -m mdsim ARGS...`: the mdsim command (`mdsim run config.yaml`, `mdsim check`, ...), the same program
with the same arguments and exit code; also the `mdsim` command `pip install` puts on PATH."""
import os
import sys


def command():
    """The mdsim program: the package's bin/mdsim (an installed wheel's copy; in a CMake build tree,
    PYTHONPATH=build/python, a link to build/mdsim)."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "bin", "mdsim")
    if os.path.isfile(path) and os.access(path, os.X_OK):
        return path
    sys.stderr.write(f"mdsim: the mdsim program is not at {path} (pip install . puts it there; in a CMake build "
                     "tree, build the mdsim target)\n")
    sys.exit(2)


def main():
    program = command()
    os.execv(program, [program, *sys.argv[1:]])  # mdsim replaces this process: Ctrl-C and SIGTERM reach it


if __name__ == "__main__":
    main()
