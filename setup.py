"""pip install . -- the torch2onnx Python package. Its extension is built on
the LibTorch of the torch that the installing Python has (torch 2.x: the
LibTorch inside its wheel; Debian's python3-torch 1.13: libtorch-dev), with the
project's CMake build: the source tree's build/ when `make` configured it for
that same torch, else a build of its own under build/pip/torch-<version>.

Into a venv holding torch 2.14 (torch must be importable while building, so
no build isolation):
    python3 -m venv venv && venv/bin/pip install torch==2.14.1
    venv/bin/pip install --no-build-isolation .
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


def _torch_version():
    """The torch the installing Python has: the extension is built on its LibTorch."""
    try:
        out = subprocess.check_output([sys.executable, "-c", "import torch; print(torch.__version__)"], text=True)
    except subprocess.CalledProcessError:
        raise RuntimeError(f"torch2onnx builds on PyTorch: install torch for {sys.executable} first")
    return out.strip().split("+")[0]


def _build_dir_for(version):
    """The source tree's build/ when it is configured for this torch (what
    `make` builds), else a build of its own under build/pip."""
    default = os.path.join(ROOT, "build")
    try:
        with open(os.path.join(default, "CMakeCache.txt")) as fh:
            if f"T2O_TORCH_VERSION_BUILT:INTERNAL={version}\n" in fh.read():
                return default
    except OSError:
        pass
    return os.path.join(ROOT, "build", "pip", f"torch-{version}")


class CMakeBuild(build_ext):
    """Builds torch2onnx._C with CMake and puts it (and the generated
    _build_info.py) into the package."""

    def run(self):
        build_dir = os.environ.get("T2O_BUILD_DIR") or _build_dir_for(_torch_version())
        jobs = os.environ.get("JOBS", str(max(1, min(os.cpu_count() or 1, 2))))
        if not os.path.exists(os.path.join(build_dir, "CMakeCache.txt")):
            # Debian's torch 1.13 is LibTorch from libtorch-dev; any 2.x is the LibTorch in its wheel.
            flavour = "system" if _torch_version().startswith("1.") else "wheel"
            # The ONNX that `make` built from source (opsets to 23), else the system's (Debian's: to 17).
            onnx = os.path.join(ROOT, "build", "onnx", "install")
            extra = [f"-DT2O_ONNX_PREFIX={onnx}"] if flavour == "wheel" and os.path.isdir(onnx) else []
            subprocess.check_call(["cmake", "-S", ROOT, "-B", build_dir, "-DCMAKE_BUILD_TYPE=RelWithDebInfo",
                                   f"-DT2O_TORCH={flavour}", f"-DT2O_PYTHON={sys.executable}",
                                   f"-DPython3_EXECUTABLE={sys.executable}", "-DT2O_BUILD_TESTS=OFF", *extra])
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
