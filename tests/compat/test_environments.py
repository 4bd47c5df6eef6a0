"""The README's commands on the Pythons and library releases users install: Python 3.12 and
3.13 with the newest releases pip picks, Python 3.11 with the oldest releases
pyproject.toml allows, and each extra alone.  Every command runs as a fresh process of
its environment; a posterior written in one environment is scored in every other and
gives the same numbers.  Warnings are failures here: a deprecation or FutureWarning of
a dependency on the normal path is a bug (an empty standard error is asserted, and the
tests run inside the environments with ``-W error``)."""

from __future__ import annotations

import csv
import subprocess
from pathlib import Path

import numpy as np
import pytest

from .environments import (
    BAYES,
    CORE,
    DATA,
    MINIMUM_311,
    NEWEST_312,
    NEWEST_313,
    ROOT,
    bayeschain,
    build,
)

pytestmark = pytest.mark.compat

LOG = DATA / "trec_session_2013" / "sessiontrack2013.xml.gz"
QRELS = DATA / "trec_eval" / "qrels.test"
RUNS = [DATA / "trec_eval" / "results.test", DATA / "trec_eval" / "results.trunc"]
EVAL = ["eval", QRELS, *RUNS, "-m", "AP", "-m", "P@10", "-m", "nDCG@10",
        "-m", "PatH(model='rwbm', p=0.5, q=0.25)", "--per-topic"]
MEASURE = "PatH(model='rwbm', order=2)"
#: the environments that run the whole main job
PYTHONS = [NEWEST_312, NEWEST_313, MINIMUM_311]
#: the tests run inside each of them: those of the code the releases touch (nutpie's
#: bridge and the walk's sampler, Numba's first-class functions the walk's likelihood
#: calls its kernels by, posterior storage, PyMC models, ArviZ's HDI, scoring, the
#: commands)
SUITE = ["tests/inference/walk/test_bridge.py",
         "tests/chains/test_jit.py::"
         "test_a_caller_runs_whichever_kernel_it_is_handed_the_address_of",
         "tests/inference/walk/test_stop_on_diagnostics.py",
         "tests/inference/clicks/test_conjugate.py", "tests/inference/walk/test_sampler.py",
         "tests/comparison/test_summary.py", "tests/scoring", "tests/cli/test_fit.py",
         "tests/cli/test_compare.py"]


def _ok(result: subprocess.CompletedProcess, what: str) -> str:
    assert result.returncode == 0, f"{what}: exit {result.returncode}\n{result.stderr[-3000:]}"
    assert result.stderr == "", f"{what} wrote to standard error:\n{result.stderr[-3000:]}"
    return result.stdout


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    """The main job in the environment running the tests (CI's own: the machine's Python
    with the newest releases): the demo's outputs, eval's text and a saved posterior."""
    work = tmp_path_factory.mktemp("reference")
    _ok(bayeschain(None, "demo", cwd=work), "demo")
    post = work / "post.nc"
    _ok(bayeschain(None, "fit", LOG, "-o", post, "--quiet"), "fit")
    return {"demo": work / "bayeschain-demo", "eval": _ok(bayeschain(None, *EVAL), "eval"),
            "posterior": post}


def test_core_alone_evaluates_runs(reference):
    """``pip install -e .`` (no extra): ``eval`` prints what it prints with every extra,
    and none of the heavy libraries is installed."""
    folder = build(CORE)
    assert _ok(bayeschain(folder, *EVAL), "eval") == reference["eval"]
    probe = subprocess.run([str(folder / "bin" / "python"), "-c",
                            "import importlib.util as u; print([m for m in ('pymc', 'arviz', "
                            "'nutpie', 'duckdb', 'matplotlib') if u.find_spec(m)])"],
                           capture_output=True, text=True, check=True)
    assert probe.stdout.strip() == "[]"


def test_bayes_alone_fits_and_scores_the_bundled_log(tmp_path):
    """``pip install -e ".[bayes]"``: ``fit`` of the bundled log (the default walk, its
    statistics by DuckDB) and ``score`` under the posterior it wrote."""
    folder = build(BAYES)
    post = tmp_path / "post.nc"
    out = _ok(bayeschain(folder, "fit", LOG, "-o", post), "fit")
    assert "R-hat" in out and post.stat().st_size > 0
    _ok(bayeschain(folder, "score", QRELS, *RUNS, "--posterior", post, "-m", MEASURE,
                   "-o", tmp_path / "scores.nc"), "score")


@pytest.mark.parametrize("env", PYTHONS, ids=[e.name for e in PYTHONS])
def test_the_main_job_runs_quietly_with_the_same_outputs(env, reference, tmp_path):
    """The demo (exit 0, nothing on standard error, the same files and, within
    Monte-Carlo error, the same comparisons as in the reference environment), then eval,
    fit -o, score and compare on the bundled data."""
    folder = build(env)
    _ok(bayeschain(folder, "demo", cwd=tmp_path), "demo")
    ours, theirs = tmp_path / "bayeschain-demo", reference["demo"]
    assert sorted(p.name for p in ours.iterdir()) == sorted(p.name for p in theirs.iterdir())
    a, b = _rows(ours / "comparisons.csv"), _rows(theirs / "comparisons.csv")
    assert [(r["A"], r["B"]) for r in a] == [(r["A"], r["B"]) for r in b]
    for x, y in zip(a, b, strict=True):
        # two posteriors of the same log (other draws): differences of means to 0.005,
        # probabilities to 0.1 (their Monte-Carlo error is about 0.01-0.02)
        assert abs(float(x["mean_diff"]) - float(y["mean_diff"])) < 0.005
        for column in ("P(A>B)", "P(|A-B|<=rope)"):
            assert abs(float(x[column]) - float(y[column])) < 0.1, column
    assert _ok(bayeschain(folder, *EVAL), "eval") == reference["eval"]
    post = tmp_path / "post.nc"
    _ok(bayeschain(folder, "fit", LOG, "-o", post, "--quiet"), "fit")
    _ok(bayeschain(folder, "score", QRELS, *RUNS, "--posterior", post, "-m", MEASURE,
                   "-o", tmp_path / "scores.nc"), "score")
    _ok(bayeschain(folder, "compare", QRELS, *RUNS, "--posterior", post, "-m", MEASURE,
                   "-o", tmp_path / "comparison.csv"), "compare")


@pytest.mark.parametrize("env", PYTHONS, ids=[e.name for e in PYTHONS])
def test_a_posterior_scores_alike_in_every_environment(env, reference, tmp_path):
    """A posterior written by the reference environment scores in this one, and one
    written here scores there, with the same numbers (to 1e-12) on both sides."""
    folder = build(env)
    here = tmp_path / "here.nc"
    _ok(bayeschain(folder, "fit", LOG, "-o", here, "--quiet"), "fit")
    for post in (reference["posterior"], here):
        scores = {}
        for name, where in (("there", None), ("here", folder)):
            out = tmp_path / f"{post.stem}-{name}.csv"
            _ok(bayeschain(where, "score", QRELS, *RUNS, "--posterior", post, "-m", MEASURE,
                           "-o", out), f"score of {post.name} ({name})")
            scores[name] = _scores(out)
        np.testing.assert_allclose(scores["here"], scores["there"], rtol=1e-12, atol=1e-12,
                                   equal_nan=True)


@pytest.mark.parametrize("env", PYTHONS, ids=[e.name for e in PYTHONS])
def test_the_tests_of_the_touched_code_pass_without_warnings(env):
    """The tests of the code that depends on the releases, inside the environment, every
    deprecation and FutureWarning an error."""
    folder = build(env)
    result = subprocess.run([str(folder / "bin" / "python"), "-m", "pytest", "-q",
                             "-p", "no:cacheprovider", "-W", "error::DeprecationWarning",
                             "-W", "error::FutureWarning", *SUITE], cwd=ROOT,
                            capture_output=True, text=True, timeout=1800)
    assert result.returncode == 0, result.stdout[-5000:]


def _rows(path: Path) -> list[dict]:
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def _scores(path: Path) -> np.ndarray:
    """Every score of a ``score -o *.csv`` table, in its row order."""
    rows = _rows(path)
    column = next(c for c in rows[0] if c in ("score", "value"))
    return np.array([float(r[column]) if r[column] else np.nan for r in rows])
