"""Exceptions raised by torch2onnx; each carries the C++ core's message.

They mirror torch.onnx.errors: ``OnnxExporterError`` is the base class and
``UnsupportedOperatorError`` lists every operator that has no conversion.
"""

__all__ = [
    "OnnxExporterError",
    "ExportUsageError",
    "UnsupportedOperatorError",
    "CheckerError",
    "ExampleInputError",
    "LoadError",
    "ExportIOError",
    "SymbolicValueError",
]


try:  # code written for torch.onnx catches torch.onnx.errors.OnnxExporterError: ours are ones too
    from torch.onnx.errors import OnnxExporterError as _TorchOnnxExporterError
except ImportError:  # pragma: no cover - a torch without torch.onnx
    _TorchOnnxExporterError = RuntimeError


class OnnxExporterError(_TorchOnnxExporterError):
    """Errors raised by the exporter (a RuntimeError, and a torch.onnx.errors.OnnxExporterError)."""


class ExportUsageError(OnnxExporterError, ValueError):
    """Invalid options or arguments (an unknown dynamic_axes name, an opset out of range...)."""


class UnsupportedOperatorError(OnnxExporterError):
    """Operators without a conversion at the target opset. ``operators`` names all of them."""

    def __init__(self, message, operators=()):
        super().__init__(message)
        self.operators = list(operators)


class CheckerError(OnnxExporterError):
    """The exported model failed the ONNX checker or shape inference."""


class ExampleInputError(OnnxExporterError, ValueError):
    """The example args do not fit the model."""


class LoadError(OnnxExporterError):
    """A TorchScript archive could not be loaded."""


class ExportIOError(OnnxExporterError, OSError):
    """The model could not be written."""


class SymbolicValueError(OnnxExporterError):
    """A symbolic function was given a value it cannot use."""
