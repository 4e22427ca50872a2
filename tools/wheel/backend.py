"""The build backend of pyproject.toml: scikit-build-core, told which torch
to build on (installing_torch.py) before it configures CMake.

- T2O_PYTHON / T2O_TORCH: the installing Python and its torch (a 2.x wheel,
  or Debian's 1.13 with its system LibTorch).
- The ONNX C++ library `make` built (build/onnx/install), when there.
- T2O_WHEEL_PREBUILT: when a build tree of `make` (build/, build-1.13/ or
  $T2O_BUILD_DIR) is configured for this same torch, its extension, CLI and
  library go into the wheel (after `cmake --build` brings them up to date)
  instead of a second build of everything; T2O_WHEEL_FRESH=1 builds from
  scratch in build/wheel/ (scikit-build-core's build-dir).
Every other hook is scikit-build-core's."""
import os
import re
import shlex
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from installing_torch import environment_without_isolation, installing_torch  # noqa: E402
from scikit_build_core import build as _backend  # noqa: E402
from scikit_build_core.build import *  # noqa: E402,F401,F403  (the PEP 517 hooks this module does not wrap)

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _prebuilt(version):
    """A build tree of `make` configured for this torch: $T2O_BUILD_DIR (CTest
    sets it for the tests it runs), else the source tree's build/ or
    build-1.13/."""
    if os.environ.get("T2O_WHEEL_FRESH") == "1":
        return None
    candidates = [os.environ.get("T2O_BUILD_DIR"), os.path.join(ROOT, "build"), os.path.join(ROOT, "build-1.13")]
    for build in filter(None, candidates):
        try:
            with open(os.path.join(build, "CMakeCache.txt")) as fh:
                cache = fh.read()
        except OSError:
            continue
        # (the release: Debian's torch says 1.13.0a0 in Python, 1.13.0 in its LibTorch)
        built = re.search(r"^T2O_TORCH_VERSION_BUILT:INTERNAL=(\d+\.\d+\.\d+)", cache, re.MULTILINE)
        release = re.match(r"\d+\.\d+\.\d+", version)
        if built and release and built.group(1) == release.group(0) and "T2O_BUILD_PYTHON:BOOL=ON\n" in cache:
            return os.path.abspath(build)
    return None


def _cmake_settings():
    torch = installing_torch()
    flavour = "system" if torch["version"].startswith("1.") else "wheel"
    defines = {"T2O_PYTHON": torch["python"], "Python3_EXECUTABLE": torch["python"], "T2O_TORCH": flavour}
    onnx = os.path.join(ROOT, "build", "onnx", "install")
    if flavour == "wheel" and os.path.isdir(onnx):
        defines["T2O_ONNX_PREFIX"] = onnx
    prebuilt = _prebuilt(torch["version"])
    if prebuilt:
        env = environment_without_isolation()
        env.setdefault("CCACHE_SLOPPINESS", "pch_defines,time_macros,include_file_mtime,include_file_ctime")
        jobs = os.environ.get("JOBS", str(max(1, min(os.cpu_count() or 1, 2))))
        # (stdout to stderr: pip shows the build's output with -v)
        subprocess.check_call(["cmake", "--build", prebuilt, "--target", "torch2onnx_python", "torch2onnx_cli",
                               "-j", jobs], env=env, stdout=sys.stderr)
    # (always given: a build directory's cache keeps what the last build set)
    defines["T2O_WHEEL_PREBUILT"] = prebuilt or ""
    return defines


class _Settings:
    """The CMake settings and the environment of a build: CMake and what it
    runs use the installing Python with its own packages (pip's isolation
    variables are put back after)."""

    def __enter__(self):
        self.saved = {k: os.environ.get(k) for k in ("CMAKE_ARGS", "PYTHONPATH", "PYTHONNOUSERSITE",
                                                     "SKBUILD_BUILD_DIR")}
        args = [f"-D{k}={v}" for k, v in _cmake_settings().items()]
        # (a build directory per torch: a CMake cache is for one LibTorch; the wheel tag alone does not tell)
        if not os.environ.get("SKBUILD_BUILD_DIR"):
            os.environ["SKBUILD_BUILD_DIR"] = os.path.join(ROOT, "build", "wheel", "torch-" + installing_torch()["version"])
        os.environ["CMAKE_ARGS"] = " ".join(filter(None, [os.environ.get("CMAKE_ARGS"), *map(shlex.quote, args)]))
        os.environ.pop("PYTHONPATH", None)
        os.environ.pop("PYTHONNOUSERSITE", None)

    def __exit__(self, *exc):
        for k, v in self.saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    with _Settings():
        return _backend.build_wheel(wheel_directory, config_settings, metadata_directory)


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    with _Settings():
        return _backend.build_editable(wheel_directory, config_settings, metadata_directory)
