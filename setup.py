"""pip install . — the torch2onnx Python package, its extension built by the
project's CMake build (the build/ tree of `make`, reused when it exists).

Offline, with Debian's Python:
    /usr/bin/python3 -m venv --system-site-packages venv
    venv/bin/pip install .
(setuptools and wheel come from Debian's python3-setuptools / python3-wheel.)
"""
import glob
import os
import shutil
import subprocess
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = os.path.dirname(os.path.abspath(__file__))
# setuptools' own build files (and the egg-info) go under build/pip, not into the sources.
os.makedirs(os.path.join(ROOT, "build", "pip"), exist_ok=True)


def _version():
    with open(os.path.join(ROOT, "CMakeLists.txt")) as fh:
        for line in fh:
            if line.startswith("project(torch2onnx VERSION"):
                return line.split("VERSION")[1].split()[0]
    raise RuntimeError("no version in CMakeLists.txt")


class CMakeBuild(build_ext):
    """Builds torch2onnx._C with CMake and puts it (and the generated
    _build_info.py, and run.js for verify=True) into the package."""

    def run(self):
        build_dir = os.environ.get("T2O_BUILD_DIR", os.path.join(ROOT, "build"))
        jobs = os.environ.get("JOBS", str(max(1, min(os.cpu_count() or 1, 2))))
        if not os.path.exists(os.path.join(build_dir, "CMakeCache.txt")):
            subprocess.check_call(["cmake", "-S", ROOT, "-B", build_dir, "-DCMAKE_BUILD_TYPE=RelWithDebInfo",
                                   f"-DPython3_EXECUTABLE={sys.executable}"])
        env = dict(os.environ)
        env.setdefault("CCACHE_SLOPPINESS", "pch_defines,time_macros,include_file_mtime,include_file_ctime")
        subprocess.check_call(["cmake", "--build", build_dir, "--target", "torch2onnx_python", "-j", jobs], env=env)
        built = os.path.join(build_dir, "python", "torch2onnx")
        target = os.path.join(os.path.abspath(self.build_lib), "torch2onnx")
        os.makedirs(target, exist_ok=True)
        extensions = glob.glob(os.path.join(built, "_C*.so"))
        if not extensions:
            raise RuntimeError(f"the CMake build made no extension in {built}")
        for path in extensions + [os.path.join(built, "_build_info.py")]:
            shutil.copy2(path, target)
        if shutil.which("strip"):  # the build tree's debug info stays out of the wheel
            for path in extensions:
                subprocess.check_call(["strip", "--strip-debug", os.path.join(target, os.path.basename(path))])
        os.makedirs(os.path.join(target, "ort"), exist_ok=True)
        shutil.copy2(os.path.join(ROOT, "tools", "ort", "run.js"), os.path.join(target, "ort", "run.js"))


setup(
    name="torch2onnx",
    version=_version(),
    description="PyTorch to ONNX export in C++, with torch.onnx's Python API",
    package_dir={"": "python"},
    packages=["torch2onnx"],
    ext_modules=[Extension("torch2onnx._C", sources=[])],
    cmdclass={"build_ext": CMakeBuild},
    python_requires=">=3.9",
    zip_safe=False,
    options={"build": {"build_base": os.path.join("build", "pip")}, "egg_info": {"egg_base": "build/pip"}},
)
