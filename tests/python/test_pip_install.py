"""The wheel (pyproject.toml): `pip wheel .` with the test interpreter, whose
torch the wheel is built for and pins; the wheel installed into a fresh venv
that holds that same torch (the test interpreter's packages, made visible
with a .pth file; no network), then used there: an export with verify=True
from Python, and the `torch2onnx` command on the venv's PATH (and `python -m
torch2onnx`) exporting and verifying a saved archive."""
import os
import subprocess
import sys
import sysconfig
import textwrap
import zipfile

import torch

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TORCH = torch.__version__.split("+")[0]


def _offline_env():
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)  # the installed package, not the build tree's
    env["PIP_NO_INDEX"] = "1"  # offline: nothing may come from PyPI
    env.pop("T2O_CLI", None)
    env.pop("T2O_ONNXRUNTIME_LIB", None)
    return env


def _venv(tmp_path):
    venv = tmp_path / "venv"
    subprocess.run([sys._base_executable, "-m", "venv", "--system-site-packages", "--without-pip", str(venv)],
                   check=True)
    site = subprocess.check_output([str(venv / "bin" / "python"), "-c",
                                    "import sysconfig; print(sysconfig.get_paths()['purelib'])"], text=True).strip()
    with open(os.path.join(site, "test_interpreter.pth"), "w") as fh:
        fh.write(sysconfig.get_paths()["purelib"] + "\n")
    return venv


def test_wheel_into_a_venv(tmp_path):
    env = _offline_env()
    # (the backend puts the build tree's files into the wheel: T2O_BUILD_DIR, set by CTest, is this build's)
    wheels = tmp_path / "wheels"
    proc = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
                           "--disable-pip-version-check", "-w", str(wheels), ROOT],
                          env=env, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]
    (wheel,) = wheels.glob("torch2onnx-*.whl")
    with zipfile.ZipFile(wheel) as z:
        names = set(z.namelist())
        metadata = z.read(next(n for n in names if n.endswith(".dist-info/METADATA"))).decode()
        entry_points = z.read(next(n for n in names if n.endswith(".dist-info/entry_points.txt"))).decode()
    assert f"Requires-Dist: torch=={TORCH}\n" in metadata, metadata
    assert "torch2onnx = _torch2onnx_cli:main" in entry_points, entry_points
    for part in ("torch2onnx/__init__.py", "torch2onnx/bin/torch2onnx", "torch2onnx/lib/libtorch2onnx.so.0",
                 "_torch2onnx_cli.py"):
        assert part in names, sorted(names)
    assert any(n.startswith("torch2onnx/_C") and n.endswith(".so") for n in names), sorted(names)

    # A venv of the same base Python, seeing the test interpreter's packages (torch, onnxruntime, pip; with
    # Debian's torch, the system's too). Without a pip of its own: Python 3.11's venv would also bring a
    # setuptools older than the one torch requires, found before the test interpreter's.
    venv = _venv(tmp_path)
    # (with its dependencies: torch and numpy are there already, so pip takes nothing more)
    proc = subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "--disable-pip-version-check",
                           str(wheel)],
                          env=env, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]

    env["VIRTUAL_ENV"] = str(venv)
    env["PATH"] = str(venv / "bin") + os.pathsep + env.get("PATH", "")
    env["T2O_EXPECT_TORCH"] = TORCH
    script = textwrap.dedent("""
        import io, os, torch, torch2onnx
        assert torch2onnx.__file__.startswith(os.environ["VIRTUAL_ENV"]), torch2onnx.__file__
        assert torch.__version__.split("+")[0] == os.environ["T2O_EXPECT_TORCH"], torch.__version__
        m = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3), torch.nn.ReLU(), torch.nn.Flatten(), torch.nn.Linear(16, 2))
        x = torch.randn(1, 3, 4, 4)
        buf = io.BytesIO()
        torch2onnx.export(m.eval(), (x,), buf, verify=True)
        print("exported", len(buf.getvalue()))
        torch.jit.trace(m.eval(), (x,)).save("m.pt")
        torch.save((x,), "args.pt")
    """)
    proc = subprocess.run([str(venv / "bin" / "python"), "-c", script], env=env, capture_output=True, text=True,
                          cwd=str(tmp_path))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "exported" in proc.stdout

    # The command on PATH (the venv's bin/torch2onnx), then `python -m torch2onnx`: export and --verify.
    for cmd in (["torch2onnx"], [str(venv / "bin" / "python"), "-m", "torch2onnx"]):
        out = tmp_path / "cli.onnx"
        proc = subprocess.run([*cmd, "export", "m.pt", "--args", "args.pt", "-o", str(out), "--verify"], env=env,
                              capture_output=True, text=True, cwd=str(tmp_path))
        assert proc.returncode == 0, (cmd, proc.stdout + proc.stderr)
        assert out.exists() and "| match |" in proc.stdout and "| yes |" in proc.stdout, proc.stdout + proc.stderr
        out.unlink()
    proc = subprocess.run(["torch2onnx", "--version"], env=env, capture_output=True, text=True)
    assert proc.returncode == 0 and proc.stdout.strip(), proc.stdout + proc.stderr
    import shutil
    assert shutil.which("torch2onnx", path=env["PATH"]) == str(venv / "bin" / "torch2onnx")


def test_editable_install(tmp_path):
    """pip install -e .: the package's Python files stay in the sources, the extension, the CLI and its library
    go beside the venv's other packages; the command and an export find them there."""
    venv = _venv(tmp_path)
    env = _offline_env()
    proc = subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "--no-deps", "--no-build-isolation",
                           "--disable-pip-version-check", "-e", ROOT], env=env, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]
    script = textwrap.dedent("""
        import io, os, torch, torch2onnx
        assert torch2onnx.__file__.startswith(os.environ["T2O_SOURCES"]), torch2onnx.__file__
        buf = io.BytesIO()
        torch2onnx.export(torch.nn.Linear(3, 2).eval(), (torch.randn(1, 3),), buf, verify=True)
        print("exported", len(buf.getvalue()))
    """)
    env["T2O_SOURCES"] = os.path.join(ROOT, "python", "torch2onnx")
    proc = subprocess.run([str(venv / "bin" / "python"), "-c", script], env=env, capture_output=True, text=True,
                          cwd=str(tmp_path))
    assert proc.returncode == 0 and "exported" in proc.stdout, proc.stdout + proc.stderr
    for cmd in ([str(venv / "bin" / "torch2onnx")], [str(venv / "bin" / "python"), "-m", "torch2onnx"]):
        proc = subprocess.run([*cmd, "--version"], env=env, capture_output=True, text=True, cwd=str(tmp_path))
        assert proc.returncode == 0 and proc.stdout.startswith("torch2onnx "), (cmd, proc.stdout + proc.stderr)
