"""torch2onnx: PyTorch -> ONNX export done in C++, with torch.onnx's API.

    import torch2onnx
    torch2onnx.export(model, (x,), "model.onnx", input_names=["x"], opset_version=17)
"""
import os

import torch  # noqa: F401  (loads LibTorch before the extension)

from . import _cli

# ONNX Runtime for verify=True (the C++ core loads its library): the onnxruntime package of this environment.
_cli.use_onnxruntime_library(os.environ)

from . import errors
from ._logging import disable_log, enable_log, is_onnx_log_enabled
from ._modes import OperatorExportTypes, TrainingMode, is_in_onnx_export, select_model_mode_for_export
from .errors import OnnxExporterError, UnsupportedOperatorError
from .utils import (
    export,
    export_to_pretty_string,
    register_custom_op_symbolic,
    unconvertible_ops,
    unregister_custom_op_symbolic,
)
from . import operators, symbolic_helper, utils  # noqa: E402
from . import _C
from ._dynamo import ONNXProgram

__version__ = _C.version()
producer_name = "torch2onnx"
producer_version = __version__

__all__ = [
    "export",
    "ONNXProgram",
    "export_to_pretty_string",
    "register_custom_op_symbolic",
    "unregister_custom_op_symbolic",
    "select_model_mode_for_export",
    "is_in_onnx_export",
    "enable_log",
    "disable_log",
    "is_onnx_log_enabled",
    "unconvertible_ops",
    "TrainingMode",
    "OperatorExportTypes",
    "OnnxExporterError",
    "UnsupportedOperatorError",
    "errors",
    "operators",
    "symbolic_helper",
    "utils",
]
