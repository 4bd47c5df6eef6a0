"""``bayeschain compare``: fit on the bundled log, compare trec_eval's two test runs."""

from pathlib import Path

import pytest

from bayeschain.cli import main

ROOT = Path(__file__).resolve().parents[1]
LOG = ROOT / "data" / "trec_session_2013" / "sessiontrack2013.xml.gz"
TREC = ROOT / "data" / "trec_eval"


def test_compare_prints_writes_and_draws(tmp_path, capsys):
    pytest.importorskip("h5netcdf")
    post = tmp_path / "post.nc"
    assert main(["fit", str(LOG), "-o", str(post), "--draws", "300", "--quiet"]) == 0
    capsys.readouterr()
    table = tmp_path / "cmp.md"
    figs = tmp_path / "figs"
    args = ["compare", str(TREC / "qrels.test"), str(TREC / "results.test"),
            str(TREC / "results.trunc"), "--posterior", str(post),
            "-m", "PatH(model='rwbm', order=2)", "-o", str(table), "--figures", str(figs)]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "P(A>B)" in out and "P(best)" in out
    assert table.read_text().startswith("| A | B |")
    assert (figs / "forest.png").stat().st_size > 5_000
    assert main(args) == 2                        # outputs exist: refused without --force
    assert "exists" in capsys.readouterr().err
    table.unlink()                                # figures alone exist: refused up front,
    assert main(args) == 2                        # before the table is written
    assert "forest.png" in capsys.readouterr().err and not table.exists()
    bad = ["compare", str(TREC / "qrels.test"), str(TREC / "results.test"),
           "--posterior", str(post)]
    assert main(bad) == 2
    assert "two runs" in capsys.readouterr().err


def test_score_command_writes_every_draw(tmp_path, capsys):
    pytest.importorskip("h5netcdf")
    post = tmp_path / "post.nc"
    assert main(["fit", str(LOG), "-o", str(post), "--draws", "50", "--chains", "2",
                 "--quiet"]) == 0
    capsys.readouterr()
    out = tmp_path / "scores.csv"
    assert main(["score", str(TREC / "qrels.test"), str(TREC / "results.test"),
                 "--posterior", str(post), "-o", str(out)]) == 0
    text = capsys.readouterr().out
    assert "STANDARD:" in text and "95% interval" in text
    import pandas as pd

    table = pd.read_csv(out)
    assert set(table.columns) >= {"chain", "draw", "run", "topic", "score"}
    assert len(table) == 2 * 50 * 1 * 3
    assert main(["score", str(TREC / "qrels.test"), str(TREC / "results.test"),
                 "--posterior", str(post), "-o", str(out)]) == 2
