"""The torch that `pip install .` / `pip wheel .` builds torch2onnx for: the
one installed in the Python that runs pip. The extension and the CLI link
that torch's LibTorch, so the wheel is for that torch version only (its
metadata pins it, as torchvision's wheels do).

pip runs the build backend with its own interpreter (sys.executable); with
build isolation it hides that interpreter's site-packages behind PYTHONPATH
(an overlay holding the build requirements). Asked without the overlay, the
interpreter names its torch. Used by backend.py (the CMake settings) and
torch_pin.py (the wheel's dependencies)."""
import functools
import json
import os
import subprocess
import sys

# What pip's isolation sets (pip/_internal/build_env.py): without them the interpreter sees its own packages.
_ISOLATION_VARIABLES = ("PYTHONPATH", "PYTHONNOUSERSITE")

_ASK = """
import json, os, sys
try:
    import torch
except ImportError as e:
    print(json.dumps({"error": str(e)}))
else:
    print(json.dumps({"version": torch.__version__.split("+")[0], "dir": os.path.dirname(torch.__file__),
                      "python": sys.executable}))
"""


def environment_without_isolation():
    return {k: v for k, v in os.environ.items() if k not in _ISOLATION_VARIABLES}


@functools.lru_cache(maxsize=None)
def installing_torch():
    """{"version": "2.14.1", "dir": ..., "python": ...} of the installing
    Python's torch; RuntimeError naming the interpreter when it has none."""
    proc = subprocess.run([sys.executable, "-c", _ASK], capture_output=True, text=True,
                          env=environment_without_isolation())
    try:
        found = json.loads(proc.stdout.strip().splitlines()[-1])
    except (IndexError, ValueError):
        found = {"error": (proc.stderr or proc.stdout).strip()[-2000:]}
    if "error" in found:
        raise RuntimeError(f"torch2onnx builds on the torch of the Python that installs it, and {sys.executable} "
                           f"has none ({found['error']}): install torch there first (e.g. pip install "
                           f"torch==2.14.1)")
    return found
