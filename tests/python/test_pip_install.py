"""`pip install .` into a fresh venv (Debian's Python, system site packages,
no network), then torch2onnx from the installed package."""
import os
import subprocess
import sys
import textwrap

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_pip_install_into_a_venv(tmp_path):
    venv = tmp_path / "venv"
    subprocess.run(["/usr/bin/python3", "-m", "venv", "--system-site-packages", str(venv)], check=True)
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)  # the installed package, not the build tree's
    env["PIP_NO_INDEX"] = "1"  # offline: nothing may come from PyPI
    # T2O_BUILD_DIR (set by CTest): the CMake build the extension comes from.
    proc = subprocess.run([str(venv / "bin" / "pip"), "install", "--no-deps", ROOT], env=env,
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    script = textwrap.dedent("""
        import io, os, torch, torch2onnx
        assert torch2onnx.__file__.startswith(os.environ["VIRTUAL_ENV"]), torch2onnx.__file__
        m = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3), torch.nn.ReLU(), torch.nn.Flatten(), torch.nn.Linear(16, 2))
        buf = io.BytesIO()
        torch2onnx.export(m.eval(), (torch.randn(1, 3, 4, 4),), buf, verify=True)
        print("exported", len(buf.getvalue()))
    """)
    env["VIRTUAL_ENV"] = str(venv)
    proc = subprocess.run([str(venv / "bin" / "python"), "-c", script], env=env, capture_output=True, text=True,
                          cwd=str(tmp_path))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "exported" in proc.stdout
