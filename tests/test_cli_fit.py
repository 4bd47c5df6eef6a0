"""``bayeschain fit`` on the bundled TREC Session log (conjugate), output safety."""

from pathlib import Path

import pytest

from bayeschain.cli import main
from bayeschain.inference import Posterior

LOG = Path(__file__).resolve().parents[1] / "data" / "trec_session_2013" / \
    "sessiontrack2013.xml.gz"


def test_fit_writes_a_posterior_and_refuses_to_overwrite(tmp_path, capsys):
    pytest.importorskip("h5netcdf")
    out = tmp_path / "post.nc"
    figs = tmp_path / "figs"
    assert main(["fit", str(LOG), "-o", str(out), "--draws", "200", "--quiet",
                 "--figures", str(figs)]) == 0
    for name in ("ppc_backward.png", "ppc_click_depth.png", "ppc_dwell.png"):
        assert (figs / name).stat().st_size > 5_000
    text = capsys.readouterr().out
    assert "transition[1, forward]" in text and "backward share" in text
    assert "deepest clicked rank, mean depth" in text and "dwell time (s), 90th" in text
    post = Posterior.load(out)
    assert post.attrs["spec_name"] == "rwbm-conjugate"
    assert main(["fit", str(LOG), "-o", str(out), "--quiet"]) == 2
    assert "exists" in capsys.readouterr().err
    # figures that exist are refused before fitting, and nothing is written
    other = tmp_path / "other.nc"
    assert main(["fit", str(LOG), "-o", str(other), "--figures", str(figs), "--quiet"]) == 2
    assert "ppc_backward.png" in capsys.readouterr().err and not other.exists()
    # a new figures folder is made, whatever the model
    assert main(["fit", str(LOG), "--figures", str(tmp_path / "new" / "figs"), "--draws",
                 "50", "--quiet"]) == 0
    assert (tmp_path / "new" / "figs" / "ppc_dwell.png").exists()
    assert main(["fit", str(LOG), "--spec", "nope", "--quiet"]) == 2
    assert "built-in specs" in capsys.readouterr().err


def test_fit_by_relevance_then_score_with_the_relevance_walk(tmp_path, capsys):
    """rwbm-relevance on the TREC Session log with its qrels, then `bayeschain score`
    with PatH(model='drwbm') on a run built from the log's own first pages."""
    pytest.importorskip("h5netcdf")
    qrels = LOG.parent / "qrels.txt"
    out = tmp_path / "rel.nc"
    assert main(["fit", str(LOG), "--spec", "rwbm-relevance", "-o", str(out), "--quiet"]) == 2
    assert "--qrels" in capsys.readouterr().err
    assert main(["fit", str(LOG), "--spec", "rwbm-relevance", "--qrels", str(qrels),
                 "-o", str(out), "--draws", "100", "--quiet"]) == 0
    text = capsys.readouterr().out
    assert "transition_by_relevance[relevant, all, forward]" in text   # shared: listed once
    post = Posterior.load(out)
    t = post.posterior["transition_by_relevance"]
    assert set(t["relevance"].values) == {"relevant", "non-relevant"}
    run = tmp_path / "run.txt"
    topic = qrels.read_text().split()[0]
    docs = [line.split()[2] for line in qrels.read_text().splitlines()
            if line.split()[0] == topic][:20]
    run.write_text("".join(f"{topic} Q0 {d} {i + 1} {20 - i} r\n" for i, d in enumerate(docs)))
    scores = tmp_path / "scores.csv"
    assert main(["score", str(qrels), str(run), "--posterior", str(out), "-m",
                 "PatH(model='drwbm', order=2)", "-o", str(scores)]) == 0
    assert scores.stat().st_size > 1_000
