"""Package-level behaviour: light import, the command line, the README's demo."""

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import xarray as xr

import bayeschain
from bayeschain.cli import main

HEAVY = ("numpy", "scipy", "pandas", "xarray", "pymc", "pytensor", "arviz", "duckdb", "dask",
         "matplotlib")


def test_import_loads_no_heavy_module():
    code = ("import sys, bayeschain; "
            f"print([m for m in {HEAVY!r} if m in sys.modules])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_arvizs_daily_refactor_notice_does_not_reach_the_user(tmp_path):
    """ArviZ's last 0.x releases warn about their refactor on import (0.23.4: on the first
    import of each day, a stamp under ``$XDG_CACHE_HOME``): in a fresh cache folder it is
    printed without bayeschain, and not once ``import bayeschain`` has run (its fits import
    ArviZ through nutpie), while another FutureWarning still is."""
    def run(code: str, folder: Path) -> str:
        env = {**os.environ, "XDG_CACHE_HOME": str(folder)}
        return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                              check=True, env=env).stderr

    alone = run("import arviz", tmp_path / "alone")
    if "major refactor" not in alone:
        pytest.skip("this ArviZ prints no daily notice")
    ours = run("import warnings, bayeschain, arviz; "
               "warnings.warn('another notice', FutureWarning)", tmp_path / "ours")
    assert "major refactor" not in ours
    assert "another notice" in ours


def test_a_module_of_the_chains_package_imports_no_solver():
    """Readers of large files import ``chains.checks`` from worker threads while the main
    thread imports the measures: importing it must not run the package's solvers'
    imports (two threads importing the package from different modules at once met the
    import lock's deadlock detection, ``_DeadlockError``, in ``bayeschain eval``)."""
    code = ("import sys, bayeschain.chains.checks; "
            "print(sorted(m for m in sys.modules if m.startswith('bayeschain.chains.')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "['bayeschain.chains.checks']"
    import bayeschain.chains as chains

    for name in chains.__all__:
        assert getattr(chains, name).__name__ == name
    with pytest.raises(AttributeError):
        chains.does_not_exist  # noqa: B018


def test_the_walks_compiled_density_imports_no_data_frame_library():
    """The demo's compile children import the walk's likelihood, density and C callback
    only: pandas and xarray (about half a second of a child's CPU) stay out, and the
    packages' public names, ``fit`` the function among them, still resolve."""
    code = ("import sys, bayeschain.inference.walk.bridge, bayeschain.cli.rehearsal, "
            "bayeschain.cli.prewarm; "
            f"print([m for m in {HEAVY!r} if m in sys.modules])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "['numpy', 'scipy']"          # Numba's own, no more
    import bayeschain.inference as inference
    import bayeschain.inference.fit  # noqa: F401 - importing the module leaves `fit` the function
    import bayeschain.posterior as posterior

    assert inference.fit.__module__ == "bayeschain.inference.fit" and callable(inference.fit)
    for package in (inference, posterior):
        for name in package.__all__:
            assert getattr(package, name).__name__ in (name, f"{package.__name__}.{name}")


def test_public_names_resolve_lazily():
    assert bayeschain.Tridiagonal.__name__ == "Tridiagonal"
    assert callable(bayeschain.simulate_users)
    with pytest.raises(AttributeError):
        bayeschain.does_not_exist  # noqa: B018


def test_demo_prints_the_paper_numbers(capsys):
    assert main(["demo", "--toy", "--users", "2000"]) == 0
    out = capsys.readouterr().out
    # DFBM gives P@10 = 0.4 for both runs; SFBM p = 0.5 gives RBP = 0.57 / 0.47 (Section 5.2)
    assert "DFBM (Precision)     r     10.000   4.0000   0.4000" in out
    assert "0.5718" in out and "0.4692" in out


def test_demo_missing_data_is_a_one_line_error(tmp_path, capsys):
    assert main(["demo", "--toy", "--data", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "No such file" in err


def test_demo_malformed_data_names_file_and_line(tmp_path, capsys):
    (tmp_path / "examples").mkdir()
    (tmp_path / "examples" / "ictir2020_section5.tsv").write_text("# c\nr\t1 0 x\n")
    assert main(["demo", "--toy", "--data", str(tmp_path)]) == 2
    assert "ictir2020_section5.tsv:2: relevance values must be numbers" in capsys.readouterr().err


def test_help_runs_without_heavy_imports():
    out = subprocess.run([sys.executable, "-m", "bayeschain", "--help"], capture_output=True,
                         text=True, check=True)
    assert "demo" in out.stdout
    code = ("import sys; from bayeschain.cli import build_parser; build_parser(); "
            f"print([m for m in {HEAVY!r} if m in sys.modules])")
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            check=True)
    assert loaded.stdout.strip() == "[]"        # every command's options, nothing heavy


def test_the_program_passes_main_status_on_and_only_it_freezes_the_collector(tmp_path):
    """The console script and ``python -m bayeschain`` run ``cli.program``: ``main``'s
    exit status, and the collector frozen for the interpreter's teardown (a second less
    at the end of a command; ``benchmarks/bench_exit.py``); ``main``, which callers run
    in their own process, leaves the collector as it found it."""
    import tomllib

    root = Path(__file__).resolve().parents[1]
    scripts = tomllib.loads((root / "pyproject.toml").read_text())["project"]["scripts"]
    assert scripts["bayeschain"] == "bayeschain.cli:program"
    assert "sys.exit(program())" in (root / "bayeschain" / "__main__.py").read_text()
    code = ("import gc, sys; from bayeschain.cli import main, program; "
            "sys.argv = ['bayeschain', *sys.argv[1:]]; "
            "a = main(sys.argv[1:]); frozen_by_main = gc.get_freeze_count(); "
            "b = program(); print(a, b, frozen_by_main, gc.get_freeze_count() > 0)")
    for args, status in (([], 0), (["eval", str(tmp_path / "missing"), "x"], 2)):
        out = subprocess.run([sys.executable, "-c", code, *args], capture_output=True,
                             text=True)
        assert out.stdout.split()[-4:] == [str(status), str(status), "0", "True"], out


def _check_demo_outputs(out: Path) -> None:
    """The demo's data files read back: the walk's posterior, every draw's scores of the
    four systems, and the comparisons, which must follow from those scores."""
    from bayeschain.inference import Posterior

    qrels = Path(__file__).resolve().parents[1] / "data" / "trec_session_2013" / "qrels.txt"
    top = max(int(line.split()[3]) for line in qrels.read_text().splitlines() if line.strip())
    post = Posterior.load(out / "posterior.nc")
    walk = post.posterior["walk"]
    assert np.isfinite(walk.values).all() and ((walk >= 0) & (walk <= 1)).all()
    np.testing.assert_allclose(walk.sum("move").values, 1, atol=1e-9)
    assert post.attrs["clicks"] == 586
    systems = {"first query", "last query", "engine", "baseline"}
    tables = {}
    for name in ("scores.nc", "scores_drwbm.nc"):
        with xr.open_dataset(out / name, engine="h5netcdf") as ds:
            t = ds["score"].load().to_dataframe().reset_index()
        assert set(t["run"]) == systems, name
        topics = t.groupby("run")["topic"].apply(frozenset)
        assert len(set(topics)) == 1 and len(topics.iloc[0]) > 100, name   # same sessions
        cells = t.groupby(["chain", "draw"]).ngroups
        assert len(t) == cells * 4 * len(topics.iloc[0]), name              # a full grid
        assert not t.duplicated(["chain", "draw", "run", "topic"]).any(), name
        assert np.isfinite(t["score"]).all() and t["score"].between(0, top).all(), name
        assert t["score"].std() > 0, name
        tables[name] = t
    assert tables["scores.nc"].groupby(["chain", "draw"]).ngroups == post.n_draws
    assert not (out / "scores.csv").exists()                  # CSV only with --csv
    comp = pd.read_csv(out / "comparisons.csv")
    assert {(a, b) for a, b in zip(comp["A"], comp["B"], strict=True)} == \
        {("first query", "last query"), ("baseline", "engine")}
    probs = [c for c in comp.columns if c.startswith("P(")]
    assert len(probs) >= 4
    numbers = comp[["mean_diff", "hdi_0.95_low", "hdi_0.95_high", *probs]].astype(float)
    assert np.isfinite(numbers.to_numpy()).all()
    assert ((comp[probs] >= 0) & (comp[probs] <= 1)).all().all()
    assert (comp["hdi_0.95_low"] <= comp["hdi_0.95_high"]).all()
    # each draw's difference is a weighted mean of the sessions' differences (equal weights,
    # or Bayesian-bootstrap Dirichlet(1, ..., 1) weights whose mean is equal weights): its
    # mean over draws is the equal-weight mean within Monte-Carlo error, and the interval
    # lies within the range of the sessions' differences
    wide = tables["scores.nc"].pivot_table(index=["chain", "draw", "topic"], columns="run",
                                            values="score")
    for _, row in comp.iterrows():
        pair = (row["A"], row["B"])
        d = (wide[row["A"]] - wide[row["B"]]).groupby(level=["chain", "draw"])
        n_topics = d.size().iloc[0]
        equal = d.mean()
        se = np.sqrt((d.var(ddof=0) / (n_topics + 1)).sum()) / len(equal)
        assert abs(row["mean_diff"] - equal.mean()) <= 5 * se + 1e-12, pair
        assert d.min().min() <= row["hdi_0.95_low"], pair
        assert row["hdi_0.95_high"] <= d.max().max(), pair


def _check_converged(path: Path) -> None:
    """The demo's walk posterior meets R-hat <= 1.01 and bulk ESS >= 400 for every
    quantity, by ArviZ's own functions on the saved draws."""
    import warnings

    import arviz as az

    from bayeschain.inference import Posterior

    post = Posterior.load(path)
    for name, da in post.posterior.data_vars.items():
        x = da.transpose("chain", "draw", ...).values
        x = x.reshape(x.shape[0], x.shape[1], -1)
        for j in range(x.shape[2]):
            if np.ptp(x[:, :, j]) == 0:                   # structural zeros
                continue
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                assert az.rhat(x[:, :, j], method="rank") <= 1.01, (name, j)
                assert az.ess(x[:, :, j], method="bulk") >= 400, (name, j)


def test_real_data_demo_writes_its_outputs(tmp_path, capsys):
    pytest.importorskip("nutpie")
    out = tmp_path / "demo"
    assert main(["demo", "--out", str(out)]) == 0
    captured = capsys.readouterr()
    text = captured.out
    assert captured.err == ""                     # no warning, no foreign notice
    _check_demo_outputs(out)
    _check_converged(out / "posterior.nc")
    assert "133 sessions, 401 result pages, 586 clicks" in text
    assert "E[H] on a 10-result page" in text and "pages with a click at rank >= 5" in text
    assert "P(A dom B)" in text and "How to read these numbers" in text
    assert "under the relevance-dependent walk" in text and "walk-session" in text
    report = (out / "report.html").read_text(encoding="utf-8")
    assert "did reformulating help?" in report and "E[H] on a 10-result page" in report


def test_demo_never_overwrites_an_output_folder(tmp_path):
    """The complete outputs are renamed into ``demo``, or ``demo-2``... when it exists
    (also when another run made it meanwhile); ``--force`` replaces files in ``demo``."""
    from bayeschain.cli.demo import _output_folder, _publish

    base = tmp_path / "demo"
    assert _output_folder(base, force=False) == base and not base.exists()

    def stage(text):
        folder = tmp_path / f".stage-{text}"
        folder.mkdir()
        (folder / "scores.csv").write_text(text)
        return folder

    assert _publish(stage("one"), base, force=False) == base
    assert _output_folder(base, force=False) == tmp_path / "demo-2"
    assert _publish(stage("two"), base, force=False) == tmp_path / "demo-2"
    assert _output_folder(base, force=True) == base
    assert _publish(stage("three"), base, force=True) == base
    assert (base / "scores.csv").read_text() == "three"
    assert (tmp_path / "demo-2" / "scores.csv").read_text() == "two"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["demo", "demo-2"]
