"""Fault injection: a full disk, simulated by a file-size limit in the child process
(``RLIMIT_FSIZE`` with SIGXFSZ ignored: a write beyond the limit fails with EFBIG, as
ENOSPC does on a full disk), a full standard output (``/dev/full``) and a closed pipe.

Expected of every command: a one-line error ``bayeschain CMD: error: ...`` naming what
could not be written, exit status 2, no partial or hidden temporary file, no empty folder
made for the run, inputs unchanged.  (``fit -o`` used to print HDF5 tracebacks, then
segfault, leaving a hidden temporary file.)
"""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from .helpers import CHILD, assert_one_line_error, make_inputs, run_child, snapshot

pytest.importorskip("h5netcdf")
resource = pytest.importorskip("resource")


@pytest.fixture
def inputs(tmp_path):
    return make_inputs(tmp_path / "work")


def _commands(p):
    """(command, arguments, file-size limit, output named in the error)."""
    return {
        "fit": (["fit", p["log"], "--spec", "clicks-conjugate", "--draws", "200", "-o",
                 "post.nc", "--quiet"], 20_000, "post.nc"),
        "fit-walk": (["fit", p["log"], "--spec", p["spec"], "-o", "post.nc", "--quiet",
                      "--figures", "figs"], 20_000, "post.nc"),
        "score": (["score", p["qrels"], p["run"], "--posterior", p["posterior"], "-o",
                   "scores.csv"], 512, "scores.csv"),
        "score-nc": (["score", p["qrels"], p["run"], "--posterior", p["posterior"], "-o",
                      "scores.nc"], 4096, "scores.nc"),
        "stats": (["stats", p["log"], "--figures", "figs/new"], 4096, "clicks_per_rank.png"),
        "demo": (["demo", "--out", "demo-out"], 4096, "demo-out/posterior.nc"),
    }


@pytest.mark.parametrize("case", ["fit", "fit-walk", "score", "score-nc", "stats", "demo"])
def test_file_size_limit(inputs, case):
    args, limit, named = _commands(inputs)[case]
    if case == "fit-walk":
        pytest.importorskip("nutpie")
    work = inputs["log"].parent
    before = snapshot(work)
    code, out, err = run_child(args, cwd=work, fsize=limit,
                               **({"fake_demo": 1} if case == "demo" else {}))
    assert code == 2, (out, err)
    assert_one_line_error(err, args[0], "File too large", named)
    assert snapshot(work) == before, set(snapshot(work)) ^ set(before)


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
@pytest.mark.parametrize("command", ["eval", "stats", "score"])
def test_full_standard_output(inputs, command):
    p = inputs
    args = {"eval": ["eval", p["qrels"], p["run"], "-q"], "stats": ["stats", p["log"]],
            "score": ["score", p["qrels"], p["run"], "--posterior", p["posterior"]]}[command]
    work = p["log"].parent
    before = snapshot(work)
    with open("/dev/full", "w") as full:
        proc = subprocess.run([sys.executable, str(CHILD), *map(str, args)], cwd=work,
                              stdout=full, stderr=subprocess.PIPE, text=True, timeout=300)
    assert proc.returncode == 2
    assert_one_line_error(proc.stderr, command, "No space left on device", "standard output")
    assert snapshot(work) == before


def test_closed_pipe(inputs):
    """`bayeschain eval ... | head -0`: BrokenPipeError is one line, not a traceback and
    not Python's "Exception ignored" at exit."""
    p = inputs
    proc = subprocess.Popen([sys.executable, str(CHILD), "eval", str(p["qrels"]),
                             str(p["run"]), "-q", "-m", "P@5", "-m", "AP", "-m", "nDCG"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONUNBUFFERED": "1"})
    proc.stdout.close()
    err = proc.stderr.read()
    assert proc.wait(timeout=300) == 2
    assert_one_line_error(err, "eval", "Broken pipe", "standard output")
