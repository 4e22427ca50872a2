"""The `torch2onnx` command of the wheel (pyproject.toml's project.scripts):
runs the C++ CLI that the package holds (torch2onnx/bin/torch2onnx) without
importing the package, whose import loads torch (seconds). `python -m
torch2onnx` does the same after that import."""
import importlib.util
import os


def main():
    spec = importlib.util.find_spec("torch2onnx")
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("torch2onnx: the package is not installed beside this command")
    path = os.path.join(list(spec.submodule_search_locations)[0], "_cli.py")
    launcher_spec = importlib.util.spec_from_file_location("_torch2onnx_launcher", path)
    launcher = importlib.util.module_from_spec(launcher_spec)
    launcher_spec.loader.exec_module(launcher)
    launcher.main()


if __name__ == "__main__":
    main()
