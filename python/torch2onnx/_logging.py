"""enable_log / disable_log: progress lines on stderr during export."""
import contextlib
import os
import sys

__all__ = ["enable_log", "disable_log", "is_onnx_log_enabled", "log"]

_enabled = False


def enable_log():
    """Exports print what they do (each stage with its time and the peak memory) to stderr."""
    global _enabled
    _enabled = True


def disable_log():
    """Stops the log that enable_log() started."""
    global _enabled
    _enabled = False


def is_onnx_log_enabled():
    return _enabled


def log(*args):
    if _enabled:
        print("torch2onnx:", *args, file=sys.stderr, flush=True)


@contextlib.contextmanager
def _core_log():
    """The C++ core prints its stage timings when T2O_TIMING is set."""
    if not _enabled or os.environ.get("T2O_TIMING"):
        yield
        return
    os.environ["T2O_TIMING"] = "1"
    try:
        yield
    finally:
        os.environ.pop("T2O_TIMING", None)
