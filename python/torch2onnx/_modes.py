"""TrainingMode, OperatorExportTypes, select_model_mode_for_export, is_in_onnx_export."""
import contextlib
import enum

__all__ = ["TrainingMode", "OperatorExportTypes", "select_model_mode_for_export", "is_in_onnx_export"]


class TrainingMode(enum.IntEnum):
    """How dropout and batch norm behave in the exported model (torch.onnx.TrainingMode)."""

    EVAL = 0  # inference mode
    PRESERVE = 1  # the model's own training flag decides
    TRAINING = 2  # training mode: dropout kept, batch norm uses batch statistics


class OperatorExportTypes(enum.IntEnum):
    """Which operators are exported how (torch.onnx.OperatorExportTypes)."""

    ONNX = 0  # every operator as ONNX operators
    ONNX_ATEN = 1  # every operator as an ATen node
    ONNX_ATEN_FALLBACK = 2  # ATen nodes only where no conversion exists
    ONNX_FALLTHROUGH = 3  # operators without a conversion kept as custom nodes


def _coerce(value, enum_cls, what):
    """Accepts our enums, torch.onnx's (by name), and for training a bool."""
    if isinstance(value, enum_cls):
        return value
    if enum_cls is TrainingMode and isinstance(value, bool):
        return TrainingMode.TRAINING if value else TrainingMode.EVAL
    name = getattr(value, "name", None)
    if isinstance(name, str) and name in enum_cls.__members__:
        return enum_cls[name]
    if isinstance(value, int) and not isinstance(value, bool):
        try:
            return enum_cls(value)
        except ValueError:
            pass
    choices = ", ".join(f"{enum_cls.__name__}.{m}" for m in enum_cls.__members__)
    raise TypeError(f"{what} must be one of {choices}, not {value!r}")


class _State:
    in_export = False


def is_in_onnx_export():
    """True while torch2onnx.export is running (e.g. inside a traced forward())."""
    return _State.in_export


@contextlib.contextmanager
def _exporting(opset=None):
    """An export at `opset` is running: our is_in_onnx_export() and torch.onnx's
    are True, torch.onnx's registered custom symbolics apply (_torch_onnx_compat)."""
    from . import _torch_onnx_compat

    previous = _State.in_export
    _State.in_export = True
    try:
        with _torch_onnx_compat.exporting(opset):
            yield
    finally:
        _State.in_export = previous


@contextlib.contextmanager
def select_model_mode_for_export(model, mode):
    """Puts `model` in the training mode `mode` asks for, and restores it on exit.

    EVAL: model.train(False); TRAINING: model.train(True); PRESERVE: unchanged.
    """
    mode = _coerce(mode, TrainingMode, "mode")
    has_flag = hasattr(model, "training") and hasattr(model, "train")
    originally_training = bool(model.training) if has_flag else False
    if has_flag and mode != TrainingMode.PRESERVE:
        model.train(mode == TrainingMode.TRAINING)
    try:
        yield
    finally:
        if has_flag and mode != TrainingMode.PRESERVE:
            model.train(originally_training)


def _training_of(model, mode):
    """The effective mode (PRESERVE resolved with the model's own flag)."""
    if mode == TrainingMode.PRESERVE:
        return TrainingMode.TRAINING if getattr(model, "training", False) else TrainingMode.EVAL
    return mode



@contextlib.contextmanager
def keep_module_attributes(model):
    """Puts back, on exit, every submodule's attributes as they were on entry.

    forward() run for the trace may assign module attributes: transformers'
    Swin stores a traced tensor as its window size when torch.jit.is_tracing()
    (torch.onnx leaves it there, and a later torch.export of the same model
    fails on it). Attributes assigned or added, and parameters, buffers and
    submodules replaced, are restored; tensors changed in place are not.
    """
    import torch

    if not isinstance(model, torch.nn.Module) or isinstance(model, torch.jit.ScriptModule):
        yield
        return
    tables = ("_parameters", "_buffers", "_modules")
    saved = [(m, dict(m.__dict__), {t: dict(m.__dict__.get(t) or {}) for t in tables}) for m in model.modules()]
    try:
        yield
    finally:
        for m, attrs, contents in saved:
            live = m.__dict__
            for k in [k for k in live if k not in attrs]:
                del live[k]
            for k, v in attrs.items():
                if live.get(k) is not v:
                    live[k] = v
            for t, old in contents.items():
                table = live.get(t)
                if isinstance(table, dict) and (table.keys() != old.keys() or
                                                any(table[k] is not v for k, v in old.items())):
                    table.clear()
                    table.update(old)
