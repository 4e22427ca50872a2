"""python -m torch2onnx ...: the command-line program (torch2onnx --help)."""
from ._cli import main

main()
