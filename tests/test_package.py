"""Package-level behaviour: light import, the command line, the README's demo."""

import subprocess
import sys

import pandas as pd
import pytest

import bayeschain
from bayeschain.cli import main

HEAVY = ("numpy", "scipy", "pandas", "xarray", "pymc", "pytensor", "arviz", "duckdb", "dask",
         "matplotlib")


def test_import_loads_no_heavy_module():
    code = ("import sys, bayeschain; "
            f"print([m for m in {HEAVY!r} if m in sys.modules])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


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


def test_real_data_demo_writes_its_outputs(tmp_path, capsys):
    pytest.importorskip("nutpie")
    out = tmp_path / "demo"
    assert main(["demo", "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "133 sessions, 401 result pages, 586 clicks" in text
    assert "E[H] on a 10-result page" in text and "pages with a click at rank >= 5" in text
    assert "P(A dominates B)" in text and "How to read these numbers" in text
    assert "under the relevance-dependent walk" in text and "walk-session" in text
    for name in ("posterior.nc", "scores.csv", "scores_drwbm.csv", "comparisons.csv"):
        assert (out / name).stat().st_size > 0
    scores = pd.read_csv(out / "scores.csv")
    assert scores["score"].notna().any() and (scores["score"].dropna() >= 0).all()


def test_demo_never_overwrites_an_output_folder(tmp_path):
    from bayeschain.cli.demo import _output_folder

    first = _output_folder(tmp_path / "demo", force=False)
    second = _output_folder(tmp_path / "demo", force=False)
    assert first == tmp_path / "demo" and second == tmp_path / "demo-2"
    assert _output_folder(tmp_path / "demo", force=True) == tmp_path / "demo"
