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
    # (an editable install has two locations: the sources, and the built files beside the venv's)
    paths = [os.path.join(d, "_cli.py") for d in spec.submodule_search_locations]
    path = next((p for p in paths if os.path.exists(p)), paths[0])
    launcher_spec = importlib.util.spec_from_file_location("_torch2onnx_launcher", path)
    launcher = importlib.util.module_from_spec(launcher_spec)
    launcher_spec.loader.exec_module(launcher)
    launcher.main()


if __name__ == "__main__":
    main()
