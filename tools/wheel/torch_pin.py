"""[[tool.dynamic-metadata]] provider (pyproject.toml): the wheel's
dependencies, with torch pinned to the release the extension was built on
(installing_torch.py); numpy for torch2onnx.verification."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from installing_torch import installing_torch  # noqa: E402


def dynamic_metadata(settings, project):
    if settings:
        raise RuntimeError(f"torch_pin takes no settings, got {sorted(settings)}")
    return {"dependencies": [f"torch=={installing_torch()['version']}", "numpy"]}
