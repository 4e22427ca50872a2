"""The C++ command-line program from Python: where it is (the wheel's
bin/torch2onnx, or the build tree's) and where ONNX Runtime's library is
for its --verify. Imports nothing of the package: the `torch2onnx` command
(python/_torch2onnx_cli.py) loads this file alone."""
import glob
import importlib.util
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def executable():
    """The CLI: the installed package's bin/torch2onnx (in an editable install,
    beside the package's other location), else the build tree's
    (_build_info.CLI, written by CMake)."""
    spec = importlib.util.find_spec("torch2onnx")
    locations = [HERE] + list(spec.submodule_search_locations or []) if spec else [HERE]
    for location in locations:
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
    installed (found without importing it), else None."""
    spec = importlib.util.find_spec("onnxruntime")
    if spec is None or not spec.submodule_search_locations:
        return None
    for location in spec.submodule_search_locations:
        found = sorted(glob.glob(os.path.join(location, "capi", "libonnxruntime.so*")))
        if found:
            return found[0]
    return None


def torch_library_dir():
    """lib/ of the torch this Python imports (found without importing it),
    else None. The CLI's run path looks for it beside the package
    ($ORIGIN/../../torch/lib); torch may be elsewhere on sys.path (another
    site directory, a .pth file), and another LibTorch on the system's paths
    must not be taken instead."""
    spec = importlib.util.find_spec("torch")
    if spec is None or not spec.submodule_search_locations:
        return None
    for location in spec.submodule_search_locations:
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
    if not env.get("T2O_ONNXRUNTIME_LIB"):
        lib = onnxruntime_library()
        if lib:
            env["T2O_ONNXRUNTIME_LIB"] = lib
    args = sys.argv[1:] if argv is None else list(argv)
    sys.stdout.flush()
    sys.stderr.flush()
    os.execve(cli, [cli, *args], env)
