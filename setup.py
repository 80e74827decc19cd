"""`pip install .`: builds the _mdsim extension and the mdsim command with the project's CMake (Ninja when found),
then packages them with python/mdsim. Environment: MDSIM_CMAKE_BUILD_DIR builds in that CMake tree (an existing
one is reused, as CI's test does; default: a folder under build-pip/), CMAKE_ARGS adds configure arguments,
CMAKE_BUILD_PARALLEL_LEVEL sets the build's jobs."""
import os
import re
import shlex
import shutil
import subprocess
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = os.path.dirname(os.path.abspath(__file__))


def version():
    """The project's version, as CMakeLists.txt's project() gives it."""
    text = open(os.path.join(ROOT, "CMakeLists.txt")).read()
    return re.search(r"project\(mdsim VERSION ([0-9.]+)", text).group(1)


class CMakeBuild(build_ext):
    """Runs CMake for the extension and the command line program (no tests)."""

    def build_extension(self, ext):
        build = os.environ.get("MDSIM_CMAKE_BUILD_DIR") or os.path.join(ROOT, "build-pip", "cmake")
        build = os.path.abspath(build)
        if not os.path.exists(os.path.join(build, "CMakeCache.txt")):
            generator = ["-G", "Ninja"] if shutil.which("ninja") else []
            subprocess.check_call(["cmake", "-S", ROOT, "-B", build, *generator, "-DCMAKE_BUILD_TYPE=Release",
                                   "-DMDSIM_BUILD_TESTS=OFF", f"-DPython_EXECUTABLE={sys.executable}",
                                   *shlex.split(os.environ.get("CMAKE_ARGS", ""))])
        subprocess.check_call(["cmake", "--build", build, "--target", "_mdsim", "mdsim"])
        module = [f for f in os.listdir(os.path.join(build, "python", "mdsim")) if f.startswith("_mdsim")]
        if len(module) != 1:
            sys.exit(f"setup.py: expected one _mdsim extension in {build}/python/mdsim, found {module}")
        target = self.get_ext_fullpath(ext.name)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        shutil.copy2(os.path.join(build, "python", "mdsim", module[0]), target)
        bin_dir = os.path.join(os.path.dirname(target), "bin")
        os.makedirs(bin_dir, exist_ok=True)
        shutil.copy2(os.path.join(build, "mdsim"), os.path.join(bin_dir, "mdsim"))


setup(
    version=version(),
    packages=["mdsim"],
    package_dir={"mdsim": "python/mdsim"},
    ext_modules=[Extension("mdsim._mdsim", sources=[])],
    cmdclass={"build_ext": CMakeBuild},
    options={"build": {"build_base": os.path.join("build-pip", "setuptools")},
             "egg_info": {"egg_base": "build-pip"}},
)
