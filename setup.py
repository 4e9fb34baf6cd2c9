"""Builds and installs the Python package `neardup` by driving CMake.

    python3 -m venv --system-site-packages .venv
    .venv/bin/pip install --no-build-isolation --no-index .

(Debian 12 has no scikit-build-core; setuptools runs CMake here instead.)
The extension is the CMake target neardup_python, built against the
interpreter that runs this script, with the library's static, position-
independent modules linked in: the installed package needs no other file
from this checkout. Set CMAKE_CXX_COMPILER_LAUNCHER=ccache to reuse a cache.
"""

import os
import pathlib
import shutil
import subprocess
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = pathlib.Path(__file__).parent.resolve()


class CMakeExtension(Extension):
    def __init__(self, name):
        super().__init__(name, sources=[])


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        target = pathlib.Path(self.get_ext_fullpath(ext.name)).resolve()
        build = pathlib.Path(self.build_temp).resolve() / "cmake"
        build.mkdir(parents=True, exist_ok=True)
        configure = [
            "cmake", "-S", str(ROOT), "-B", str(build), "-G", "Ninja",
            "-DCMAKE_BUILD_TYPE=Release",
            f"-DPython3_EXECUTABLE={sys.executable}",
            "-DNEARDUP_BUILD_PYTHON=ON", "-DNEARDUP_BUILD_TESTS=OFF",
            "-DNEARDUP_BUILD_BENCHMARKS=OFF", "-DNEARDUP_BUILD_CLI=OFF",
        ]
        launcher = os.environ.get("CMAKE_CXX_COMPILER_LAUNCHER")
        if launcher:
            configure.append(f"-DCMAKE_CXX_COMPILER_LAUNCHER={launcher}")
        subprocess.run(configure, check=True)
        jobs = os.environ.get("CMAKE_BUILD_PARALLEL_LEVEL", str(os.cpu_count() or 1))
        subprocess.run(["cmake", "--build", str(build), "--target", "neardup_python", "-j", jobs],
                       check=True)
        built = build / "python" / "neardup" / target.name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(built, target)


setup(
    name="neardup",
    version="0.1.0",
    description="Near-duplicate detection: SimHash, MinHash, LSH and a Hamming index",
    packages=["neardup"],
    package_dir={"": "python"},
    package_data={"neardup": ["*.pyi", "py.typed"]},
    ext_modules=[CMakeExtension("neardup._neardup")],
    cmdclass={"build_ext": CMakeBuild},
    install_requires=["numpy"],
    python_requires=">=3.9",
    zip_safe=False,
)
