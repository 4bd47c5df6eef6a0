"""Fresh virtual environments of the project for the compatibility stage.

An environment is a Python, the extras to install and whether to pin every direct
dependency to the lower bound pyproject.toml allows (``.ci/min_constraints.py``).  Each is
built once (``pip install -e ".[extras]"`` from this checkout) under
``BAYESCHAIN_COMPAT_DIR`` or a temporary folder (removed when the tests end), behind a file
lock so that test workers share it.
"""

from __future__ import annotations

import atexit
import fcntl
import glob
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "data"


@dataclass(frozen=True)
class Environment:
    """What to build: ``python`` is ``"3.12"`` or ``"3.13"`` (pyenv's interpreter or
    ``python3.12`` on the PATH) or ``"machine"`` (the Python running the tests)."""

    name: str
    python: str
    extras: str = "dev"
    minimum: bool = False


#: the environments of the compatibility stage
NEWEST_312 = Environment("py312-newest", "3.12")
NEWEST_313 = Environment("py313-newest", "3.13")
MINIMUM_311 = Environment("py311-minimum", "machine", minimum=True)
CORE = Environment("core-only", "machine", extras="")
BAYES = Environment("bayes-only", "machine", extras="bayes")


def find_python(version: str) -> str | None:
    """An interpreter of ``version`` ("3.12") that runs: pyenv's, then one on the PATH
    (pyenv's shims answer for versions they do not serve: each is tried), or None."""
    if version == "machine":
        return sys.executable
    home = os.environ.get("PYENV_ROOT", os.path.expanduser("~/.pyenv"))
    candidates = sorted(glob.glob(os.path.join(home, "versions", f"{version}.*", "bin",
                                               "python3")), reverse=True)
    found = shutil.which(f"python{version}")
    for python in [*candidates, *([found] if found else [])]:
        probe = subprocess.run([python, "-c", "import sys; print(sys.version_info[:2])"],
                               capture_output=True, text=True)
        if probe.returncode == 0 and probe.stdout.strip() == str(
                tuple(int(x) for x in version.split("."))):
            return python
    return None


def base_dir() -> Path:
    path = os.environ.get("BAYESCHAIN_COMPAT_DIR")
    if path:
        Path(path).mkdir(parents=True, exist_ok=True)
        return Path(path)
    global _TEMP
    if _TEMP is None:
        _TEMP = tempfile.mkdtemp(prefix="bayeschain-compat-")
        atexit.register(shutil.rmtree, _TEMP, ignore_errors=True)
    return Path(_TEMP)


#: free space a build needs (the largest environment takes 1.4 GB, pip's build more)
NEEDED_BYTES = 3 * 2**30


_TEMP: str | None = None


def build(env: Environment) -> Path:
    """The environment's folder (built on first use); skips the test, saying why, where
    its Python is not installed."""
    python = find_python(env.python)
    if python is None:
        pytest.skip(f"Python {env.python} is not installed here (pyenv versions)")
    folder = base_dir() / env.name
    with open(base_dir() / f"{env.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        done = folder / ".built"
        if not done.exists():
            if folder.exists():
                shutil.rmtree(folder)
            free = shutil.disk_usage(base_dir()).free
            if free < NEEDED_BYTES:
                raise RuntimeError(
                    f"only {free / 2**30:.1f} GB free in {base_dir()}; building the "
                    f"environment {env.name} needs about {NEEDED_BYTES / 2**30:.0f} GB "
                    "(remove old environments or set BAYESCHAIN_COMPAT_DIR elsewhere)")
            _run([python, "-m", "venv", str(folder)])
            pip = [str(folder / "bin" / "python"), "-m", "pip", "install", "--quiet",
                   "--disable-pip-version-check"]
            _run(pip + ["--upgrade", "pip"])
            target = f".[{env.extras}]" if env.extras else "."
            command = pip + ["-e", target]
            if env.minimum:
                constraints = folder / "minimum-constraints.txt"
                pins = subprocess.run([sys.executable, str(ROOT / ".ci" / "min_constraints.py"),
                                       "all"], check=True, capture_output=True, text=True)
                constraints.write_text(pins.stdout)
                command += ["-c", str(constraints)]
            _run(command, cwd=ROOT)
            done.write_text(versions(folder))
    return folder


def _run(command, cwd=None) -> None:
    result = subprocess.run(command, cwd=cwd, capture_output=True, text=True)
    if result.returncode != 0:
        raise RuntimeError(f"{' '.join(map(str, command))} failed:\n{result.stdout[-3000:]}"
                           f"\n{result.stderr[-3000:]}")


def versions(folder: Path) -> str:
    """``name==version`` of the libraries that matter, as installed in ``folder``."""
    code = ("import importlib.metadata as m, sys\n"
            "print('python==' + sys.version.split()[0])\n"
            "for n in ('numpy', 'scipy', 'pandas', 'xarray', 'pyarrow', 'pymc', 'pytensor',\n"
            "          'arviz', 'nutpie', 'numba', 'h5netcdf', 'h5py', 'duckdb', 'dask',\n"
            "          'matplotlib'):\n"
            "    try: print(n + '==' + m.version(n))\n"
            "    except m.PackageNotFoundError: pass\n")
    return subprocess.run([str(folder / "bin" / "python"), "-c", code], check=True,
                          capture_output=True, text=True).stdout


def bayeschain(folder: Path | None, *args, cwd=None, timeout=900
               ) -> subprocess.CompletedProcess:
    """``bayeschain ARGS`` as a fresh process of the environment (``None``: the Python
    running the tests), with a clean environment for warnings (none turned off)."""
    python = sys.executable if folder is None else str(folder / "bin" / "python")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONWARNINGS", "PYTHONPATH")}
    return subprocess.run([python, "-m", "bayeschain", *map(str, args)], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=timeout)
