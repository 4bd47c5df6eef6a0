"""``bayeschain fit`` on the bundled TREC Session log, then ``score`` with its walk."""

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from bayeschain.cli import main
from bayeschain.inference import Posterior

LOG = Path(__file__).resolve().parents[1] / "data" / "trec_session_2013" / \
    "sessiontrack2013.xml.gz"
QRELS = LOG.parent / "qrels.txt"
TOP_GRADE = max(int(line.split()[3]) for line in QRELS.read_text().splitlines() if line.strip())


def _run_from_qrels(tmp_path) -> Path:
    """A run of 20 judged documents of the track's first topic."""
    run = tmp_path / "run.txt"
    topic = QRELS.read_text().split()[0]
    docs = [line.split()[2] for line in QRELS.read_text().splitlines()
            if line.split()[0] == topic][:20]
    run.write_text("".join(f"{topic} Q0 {d} {i + 1} {20 - i} r\n" for i, d in enumerate(docs)))
    return run


def test_default_fit_then_score_the_walk(tmp_path, capsys):
    """The README's two steps: `bayeschain fit LOG -o post.nc` with no spec fits the walk;
    `bayeschain score` scores P@H with it; the scores are finite and in [0, 1]."""
    pytest.importorskip("nutpie")
    out = tmp_path / "post.nc"
    figs = tmp_path / "figs"
    assert main(["fit", str(LOG), "-o", str(out), "--draws", "300", "--quiet",
                 "--figures", str(figs)]) == 0
    for name in ("ppc_clicks_per_page.png", "ppc_deepest_click.png", "ppc_click_rank.png",
                 "ppc_dwell.png"):
        assert (figs / name).stat().st_size > 5_000
    text = capsys.readouterr().out
    assert "fitting walk (the walk P@H scores" in text
    assert "E[H] on a 10-result page" in text and "pages with a click at rank >= 5" in text
    post = Posterior.load(out)
    assert post.attrs["spec_name"] == "walk" and post.parametrises == "walk"
    assert post.attrs["longest_page"] == 49         # the log's longest page: nothing cut
    scores = tmp_path / "scores.csv"
    run = _run_from_qrels(tmp_path)
    assert main(["score", str(QRELS), str(run), "--posterior", str(out), "-m",
                 "PatH(model='rwbm', order=2)", "-o", str(scores)]) == 0
    table = pd.read_csv(scores)
    assert len(table) == post.n_draws and np.all(np.isfinite(table["score"]))
    # P@H of graded gains lies between 0 and the top grade; draws differ
    assert table["score"].between(0, TOP_GRADE).all() and table["score"].std() > 0
    # outputs are never replaced without --force, and figures are checked before the fit
    assert main(["fit", str(LOG), "-o", str(out), "--quiet"]) == 2
    assert "exists" in capsys.readouterr().err
    other = tmp_path / "other.nc"
    assert main(["fit", str(LOG), "-o", str(other), "--figures", str(figs), "--quiet"]) == 2
    assert "ppc_clicks_per_page.png" in capsys.readouterr().err and not other.exists()
    assert main(["fit", str(LOG), "--spec", "nope", "--quiet"]) == 2
    assert "built-in specs" in capsys.readouterr().err


def test_click_to_click_posterior_is_refused_for_the_walk(tmp_path, capsys):
    """A click-to-click posterior fits, says what it is, and `score` refuses it for P@H
    with an error that says why and names the spec to fit."""
    out = tmp_path / "cc.nc"
    assert main(["fit", str(LOG), "--spec", "clicks-conjugate", "-o", str(out),
                 "--draws", "100", "--quiet"]) == 0
    assert "click-to-click chain" in capsys.readouterr().out
    run = _run_from_qrels(tmp_path)
    for measure in ("PatH(model='rwbm', order=2)", "PatH(model='sfbm', order=2)", "RBP"):
        assert main(["score", str(QRELS), str(run), "--posterior", str(out), "-m",
                     measure]) == 2
        err = capsys.readouterr().err
        assert "click-to-click" in err and "'walk'" in err and err.count("\n") == 1


def test_fit_by_relevance_then_score_with_the_relevance_walk(tmp_path, capsys):
    """walk-relevance on the TREC Session log with its qrels, then `bayeschain score`
    with PatH(model='drwbm') on a run of judged documents."""
    pytest.importorskip("nutpie")
    out = tmp_path / "rel.nc"
    assert main(["fit", str(LOG), "--spec", "walk-relevance", "-o", str(out), "--quiet"]) == 2
    assert "--qrels" in capsys.readouterr().err
    assert main(["fit", str(LOG), "--spec", "walk-relevance", "--qrels", str(QRELS),
                 "-o", str(out), "--draws", "200", "--quiet"]) == 0
    post = Posterior.load(out)
    assert set(post.posterior["walk"]["relevance"].values) == {"relevant", "non-relevant"}
    scores = tmp_path / "scores.csv"
    assert main(["score", str(QRELS), str(_run_from_qrels(tmp_path)), "--posterior",
                 str(out), "-m", "PatH(model='drwbm', order=2)", "-o", str(scores)]) == 0
    table = pd.read_csv(scores)
    assert np.all(np.isfinite(table["score"])) and table["score"].between(0, TOP_GRADE).all()
    # the walk by relevance is not P@H's walk without relevance
    assert main(["score", str(QRELS), str(_run_from_qrels(tmp_path)), "--posterior",
                 str(out), "-m", "PatH(model='rwbm', order=2)"]) == 2
    assert "drwbm" in capsys.readouterr().err


def test_heldout_reports_click_model_metrics(capsys):
    pytest.importorskip("nutpie")
    assert main(["fit", str(LOG), "--heldout", "0.25", "--draws", "200", "--quiet"]) == 0
    text = capsys.readouterr().out
    assert "held-out click prediction, all held-out pages" in text
    assert "perplexity" in text and "log-likelihood" in text
    assert main(["fit", str(LOG), "--heldout", "1.5", "--quiet"]) == 2
