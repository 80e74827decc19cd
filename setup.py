"""`pip install .`: builds the _mdsim extension and the mdsim command with the project's CMake (Ninja when found),
then packages them with python/mdsim (the command as mdsim/bin/mdsim, the bundled force fields and data files as
mdsim/share/mdsim/, where that command looks first). Environment: MDSIM_CMAKE_BUILD_DIR builds in that CMake tree
(an existing one is reused as it is configured, as CI's test does; default: build-pip/cmake in the source tree, kept
for the next install), CMAKE_ARGS adds configure arguments, CMAKE_BUILD_PARALLEL_LEVEL sets the build's jobs."""
import os
import re
import shlex
import shutil
import subprocess
import sys
import sysconfig

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = os.path.dirname(os.path.abspath(__file__))


def version():
    """The project's version, as CMakeLists.txt's project() gives it (the extension's mdsim.__version__)."""
    with open(os.path.join(ROOT, "CMakeLists.txt")) as f:
        return re.search(r"project\(mdsim VERSION ([0-9.]+)", f.read()).group(1)


def cached_python(build):
    """The interpreter a configured tree builds for (its CMakeCache's Python_EXECUTABLE), or None."""
    with open(os.path.join(build, "CMakeCache.txt")) as f:
        found = re.search(r"^Python_EXECUTABLE:[A-Z]*=(.*)$", f.read(), re.M)
    return found.group(1) if found else None


def configure(build, given):
    """Configures the tree when it is new, when CMAKE_ARGS has arguments, or when the default tree was configured
    for another interpreter. A tree given by MDSIM_CMAKE_BUILD_DIR keeps its own interpreter and options."""
    extra = shlex.split(os.environ.get("CMAKE_ARGS", ""))
    fresh = not os.path.exists(os.path.join(build, "CMakeCache.txt"))
    if fresh:
        generator = ["-G", "Ninja"] if shutil.which("ninja") else []
        args = [*generator, "-DCMAKE_BUILD_TYPE=Release", "-DMDSIM_BUILD_TESTS=OFF",
                f"-DPython_EXECUTABLE={sys.executable}"]
    elif not given and cached_python(build) != sys.executable:
        args = [f"-DPython_EXECUTABLE={sys.executable}"]
    else:
        args = []
    if fresh or args or extra:
        subprocess.check_call(["cmake", "-S", ROOT, "-B", build, *args, *extra])


class CMakeBuild(build_ext):
    """Runs CMake for the extension and the command line program (no tests), then copies both into the package."""

    def run(self):
        # An editable install would leave the module in python/mdsim without the program; the build tree serves.
        if self.inplace or getattr(self, "editable_mode", False):
            sys.exit("setup.py: no editable or in-place install (the package needs its bin/mdsim): use "
                     "`pip install --no-build-isolation .`, or PYTHONPATH=build/python with a CMake build")
        super().run()

    def build_extension(self, ext):
        given = os.environ.get("MDSIM_CMAKE_BUILD_DIR")
        build = os.path.abspath(given or os.path.join(ROOT, "build-pip", "cmake"))
        configure(build, bool(given))
        subprocess.check_call(["cmake", "--build", build, "--target", "_mdsim", "mdsim"])
        # The module must be built for this interpreter (a reused tree may have been configured for another).
        module = os.path.join(build, "python", "mdsim", "_mdsim" + sysconfig.get_config_var("EXT_SUFFIX"))
        if not os.path.isfile(module):
            sys.exit(f"setup.py: no {os.path.basename(module)} in {os.path.dirname(module)}: the CMake tree {build} "
                     f"builds for another Python than {sys.executable} (or none: are pybind11 and python3-dev there?)")
        target = self.get_ext_fullpath(ext.name)
        package = os.path.dirname(target)
        os.makedirs(os.path.join(package, "bin"), exist_ok=True)
        shutil.copy2(module, target)
        shutil.copy2(os.path.join(build, "mdsim"), os.path.join(package, "bin", "mdsim"))
        for folder in ("forcefields", "data"):
            shutil.copytree(os.path.join(ROOT, folder), os.path.join(package, "share", "mdsim", folder),
                            dirs_exist_ok=True)


# setuptools' staging folder, emptied first: a module since removed from python/mdsim must not reach the wheel.
shutil.rmtree(os.path.join(ROOT, "build-pip", "setuptools"), ignore_errors=True)
os.makedirs(os.path.join(ROOT, "build-pip"), exist_ok=True)  # egg_info's folder must exist
setup(
    version=version(),
    packages=["mdsim"],
    package_dir={"mdsim": "python/mdsim"},
    package_data={"mdsim": ["*.pyi", "py.typed"]},  # the extension's type stub (editors, type checkers)
    ext_modules=[Extension("mdsim._mdsim", sources=[])],
    cmdclass={"build_ext": CMakeBuild},
    # setuptools' own build and egg-info folders: under build-pip/ (ignored by git), never in the CMake tree build/.
    options={"build": {"build_base": os.path.join("build-pip", "setuptools")},
             "egg_info": {"egg_base": "build-pip"}},
)
