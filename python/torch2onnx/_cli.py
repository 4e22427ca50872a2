"""The C++ command-line program from Python: where it is (the wheel's
bin/torch2onnx, or the build tree's) and where ONNX Runtime's library is
for its --verify. Imports nothing of the package: the `torch2onnx` command
(python/_torch2onnx_cli.py) loads this file alone."""
import glob
import importlib.util
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def package_locations(name):
    """The directories of an installed package, found without importing it
    (an editable install has two: the sources, and the built files beside
    the environment's other packages); [] when it is not installed."""
    spec = importlib.util.find_spec(name)
    return list(spec.submodule_search_locations or []) if spec else []


def executable():
    """The CLI: the installed package's bin/torch2onnx, else the build tree's
    (_build_info.CLI, written by CMake)."""
    for location in [HERE, *package_locations("torch2onnx")]:
        installed = os.path.join(location, "bin", "torch2onnx")
        if os.path.exists(installed):
            return installed
    info = os.path.join(HERE, "_build_info.py")
    if os.path.exists(info):
        values = {}
        with open(info) as fh:
            exec(compile(fh.read(), info, "exec"), values)  # (a file CMake generated: plain assignments)
        if os.path.exists(values.get("CLI", "")):
            return values["CLI"]
    raise FileNotFoundError(f"torch2onnx: no command-line program in {HERE} (bin/torch2onnx) or its build tree")


def onnxruntime_library():
    """libonnxruntime.so of the onnxruntime Python package where it is
    installed, else None."""
    for location in package_locations("onnxruntime"):
        found = sorted(glob.glob(os.path.join(location, "capi", "libonnxruntime.so*")))
        if found:
            return found[0]
    return None


def use_onnxruntime_library(env):
    """Sets T2O_ONNXRUNTIME_LIB in env (a dict or os.environ) to the
    onnxruntime package's library unless it names one already: the C++
    verifier's compiled-in path is the build's, which an installed wheel
    does not have."""
    if not env.get("T2O_ONNXRUNTIME_LIB"):
        lib = onnxruntime_library()
        if lib:
            env["T2O_ONNXRUNTIME_LIB"] = lib


def torch_library_dir():
    """lib/ of the torch this Python imports, else None. The CLI's run path
    looks for it beside the package ($ORIGIN/../../torch/lib); torch may be
    elsewhere on sys.path (another site directory, a .pth file), and another
    LibTorch on the system's paths must not be taken instead."""
    for location in package_locations("torch"):
        if os.path.isdir(os.path.join(location, "lib")):
            return os.path.join(location, "lib")
    return None


def main(argv=None):
    """Replaces this process with the CLI (exit status and signals are its own)."""
    cli = executable()
    env = dict(os.environ)
    torch_lib = torch_library_dir()
    if torch_lib:
        env["LD_LIBRARY_PATH"] = os.pathsep.join(filter(None, [torch_lib, env.get("LD_LIBRARY_PATH")]))
    use_onnxruntime_library(env)
    args = sys.argv[1:] if argv is None else list(argv)
    sys.stdout.flush()
    sys.stderr.flush()
    os.execve(cli, [cli, *args], env)
