"""`pip install .` into a fresh venv that holds the torch this build is on
(the test interpreter's packages, made visible with a .pth file; no
network), then torch2onnx from the installed package."""
import os
import subprocess
import sys
import sysconfig
import textwrap

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_pip_install_into_a_venv(tmp_path):
    venv = tmp_path / "venv"
    # A venv of the same base Python, seeing the test interpreter's packages
    # (torch, onnxruntime; with Debian's torch, the system's too).
    subprocess.run([sys._base_executable, "-m", "venv", "--system-site-packages", str(venv)], check=True)
    site = subprocess.check_output([str(venv / "bin" / "python"), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                                   text=True).strip()
    with open(os.path.join(site, "test_interpreter.pth"), "w") as fh:
        fh.write(sysconfig.get_paths()["purelib"] + "\n")
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)  # the installed package, not the build tree's
    env["PIP_NO_INDEX"] = "1"  # offline: nothing may come from PyPI
    # T2O_BUILD_DIR (set by CTest): the CMake build the extension comes from.
    proc = subprocess.run([str(venv / "bin" / "pip"), "install", "--no-deps", "--no-build-isolation", ROOT], env=env,
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    script = textwrap.dedent("""
        import io, os, torch, torch2onnx
        assert torch2onnx.__file__.startswith(os.environ["VIRTUAL_ENV"]), torch2onnx.__file__
        assert torch.__version__.split("+")[0] == os.environ["T2O_EXPECT_TORCH"], torch.__version__
        m = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3), torch.nn.ReLU(), torch.nn.Flatten(), torch.nn.Linear(16, 2))
        buf = io.BytesIO()
        torch2onnx.export(m.eval(), (torch.randn(1, 3, 4, 4),), buf, verify=True)
        print("exported", len(buf.getvalue()))
    """)
    env["VIRTUAL_ENV"] = str(venv)
    import torch
    env["T2O_EXPECT_TORCH"] = torch.__version__.split("+")[0]
    proc = subprocess.run([str(venv / "bin" / "python"), "-c", script], env=env, capture_output=True, text=True,
                          cwd=str(tmp_path))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "exported" in proc.stdout
