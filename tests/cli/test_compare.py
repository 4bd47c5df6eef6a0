"""``bayeschain compare`` and ``bayeschain score``: fit on the bundled log, compare and score
trec_eval's test runs; every table written is read back and checked against the scores'
definitions (an identical copy of a run differs from it by exactly 0; a run with no judged
document scores 0, so its difference to a run is that run's mean score, a convex combination
of the run's topic scores under any averaging of topics)."""

import math
import re
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from bayeschain.cli import main

ROOT = Path(__file__).resolve().parents[2]
LOG = ROOT / "data" / "trec_session_2013" / "sessiontrack2013.xml.gz"
TREC = ROOT / "data" / "trec_eval"
PRINTED = 5e-5 + 1e-12            # half a unit of the 4th decimal the tables print


def read_markdown_table(path: Path) -> pd.DataFrame:
    """The pipe table at the top of a Markdown file, with Markdown escapes removed."""
    rows = []
    for line in path.read_text().splitlines():
        if not line.startswith("|"):
            break
        cells = re.split(r"(?<!\\)\|", line.strip())[1:-1]
        rows.append([re.sub(r"\\(.)", r"\1", c.strip()) for c in cells])
    header, rule, *body = rows
    assert set("".join(rule)) == {"-"}
    return pd.DataFrame(body, columns=header)


@pytest.mark.filterwarnings("ignore:NUTS diagnostics")   # a short fit: compare is tested
def test_compare_prints_writes_and_draws(tmp_path, capsys):
    from tests.faults.helpers import FAST_SPEC

    pytest.importorskip("h5netcdf")
    post, spec = tmp_path / "post.nc", tmp_path / "fast.toml"
    spec.write_text(FAST_SPEC.format(draws=150, tune=50))
    assert main(["fit", str(LOG), "--spec", str(spec), "-o", str(post), "--quiet"]) == 0
    capsys.readouterr()
    # an identical copy of results.test, and a run of unjudged documents (scores 0)
    copy = tmp_path / "copy.test"
    shutil.copy(TREC / "results.test", copy)
    zero = tmp_path / "zero.test"
    zero.write_text("".join(f"{t} Q0 unjudged-{i} {i + 1} {50 - i} STANDARD\n"
                            for t in ("301", "302", "303") for i in range(50)))
    runs = [TREC / "results.test", TREC / "results.trunc", copy, zero]
    names = [f"STANDARD:{r.name}" for r in runs]      # one run id: named by file as well
    table = tmp_path / "cmp.md"
    figs = tmp_path / "figs"
    measure = "PatH(model='rwbm', order=2)"
    args = ["compare", str(TREC / "qrels.test"), *map(str, runs), "--posterior", str(post),
            "-m", measure, "-o", str(table), "--figures", str(figs)]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "P(A>B)" in out and "P(best)" in out
    assert table.read_text().startswith("| A | B |")
    assert (figs / "forest.png").stat().st_size > 5_000
    # the table, read back: every pair once (A < B), finite numbers, probabilities in [0, 1]
    pairs = read_markdown_table(table)
    low, high = "hdi_0.95_low", "hdi_0.95_high"
    assert list(pairs.columns[:5]) == ["A", "B", "mean_diff", low, high]
    probs = list(pairs.columns[5:])
    assert len(probs) >= 3 and all(c.startswith("P(") for c in probs)
    same = [c for c in probs if "|A-B|" in c]
    assert len(same) == 1                              # P(|A-B| within the rope)
    assert sorted(zip(pairs["A"], pairs["B"], strict=True)) == \
        [(a, b) for a in sorted(names) for b in sorted(names) if a < b]
    values = pairs.set_index(["A", "B"]).astype(float)
    assert np.isfinite(values.to_numpy()).all()
    assert ((values[probs] >= 0) & (values[probs] <= 1)).all().all()
    assert (values[low] <= values[high]).all()
    # a run against its identical copy: the difference is 0 in every draw
    twin = values.loc[("STANDARD:copy.test", "STANDARD:results.test")]
    assert (twin["mean_diff"], twin[low], twin[high]) == (0, 0, 0)
    assert twin[same[0]] == 1 and all(twin[c] == 0 for c in probs if c != same[0])
    # against the run that scores 0, the difference in a draw is the run's mean over its
    # topics: between its lowest and highest topic score of that draw
    scores_csv = tmp_path / "scores.csv"
    assert main(["score", str(TREC / "qrels.test"), *map(str, runs), "--posterior", str(post),
                 "-m", measure, "-o", str(scores_csv)]) == 0
    capsys.readouterr()
    scores = pd.read_csv(scores_csv)
    assert (scores.loc[scores["run"] == "STANDARD:zero.test", "score"] == 0).all()
    for name in names[:3]:
        draws = scores[scores["run"] == name].groupby(["chain", "draw"])["score"]
        lo, hi = draws.min(), draws.max()
        row = values.loc[(name, "STANDARD:zero.test")]
        assert lo.mean() - PRINTED <= row["mean_diff"] <= hi.mean() + PRINTED, name
        assert lo.min() - PRINTED <= row[low] and row[high] <= hi.max() + PRINTED, name
        assert row[low] > 0                          # every topic scores > 0 in every draw
    best_line = next(line for line in out.splitlines() if line.startswith("P(best):"))
    best = {n: float(p) for n, p in re.findall(r"(STANDARD:\S+) ([0-9.]+)", best_line)}
    assert set(best) == set(names) and math.isclose(sum(best.values()), 1, abs_tol=2e-3)
    assert best["STANDARD:zero.test"] == 0
    # outputs are never replaced
    assert main(args) == 2                        # outputs exist: refused without --force
    assert "exists" in capsys.readouterr().err
    table.unlink()                                # figures alone exist: refused up front,
    assert main(args) == 2                        # before the table is written
    assert "forest.png" in capsys.readouterr().err and not table.exists()
    bad = ["compare", str(TREC / "qrels.test"), str(TREC / "results.test"),
           "--posterior", str(post)]
    assert main(bad) == 2
    assert "two runs" in capsys.readouterr().err


@pytest.mark.filterwarnings("ignore:NUTS diagnostics")   # 50 draws: score is tested
def test_score_command_writes_every_draw(tmp_path, capsys):
    pytest.importorskip("h5netcdf")
    from bayeschain.inference import Posterior

    post = tmp_path / "post.nc"
    assert main(["fit", str(LOG), "-o", str(post), "--draws", "50", "--chains", "2",
                 "--tune", "100", "--quiet"]) == 0
    capsys.readouterr()
    out = tmp_path / "scores.csv"
    assert main(["score", str(TREC / "qrels.test"), str(TREC / "results.test"),
                 "--posterior", str(post), "-o", str(out)]) == 0
    text = capsys.readouterr().out
    assert "STANDARD:" in text and "95% interval" in text
    table = pd.read_csv(out, dtype={"topic": str})
    assert set(table.columns) >= {"chain", "draw", "run", "topic", "score"}
    # one row per (chain, draw, topic): 2 chains x 50 draws x the run's 3 judged topics
    assert len(table) == 2 * 50 * 1 * 3
    assert set(table["run"]) == {"STANDARD"}
    assert set(table["topic"]) == {"301", "302", "303"}
    assert not table.duplicated(["chain", "draw", "topic"]).any()
    assert set(table["chain"]) == {0, 1} and set(table["draw"]) == set(range(50))
    # P@H of binary judgements is a share of examinations: in [0, 1]
    assert np.isfinite(table["score"]).all() and table["score"].between(0, 1).all()
    assert table["score"].std() > 0
    # the printed summary is the written draws' mean over topics: mean and 95% quantiles
    per_draw = table.groupby(["chain", "draw"])["score"].mean()
    line = next(x for x in text.splitlines() if x.strip().startswith("STANDARD:"))
    mean, lo, hi = map(float, re.findall(r"-?\d+\.\d+", line.split(":", 1)[1]))
    assert mean == pytest.approx(per_draw.mean(), abs=PRINTED)
    assert lo == pytest.approx(per_draw.quantile(0.025), abs=PRINTED)
    assert hi == pytest.approx(per_draw.quantile(0.975), abs=PRINTED)
    # from P@H's definition E[T]/E[H]: for the list (relevant, non-relevant) the walk
    # examines rank 2 only from rank 1, E[visits 2] = p_1 E[visits 1] with p_1 the draw's
    # forward move at rank 1, so P@H = 1 / (1 + p_1) in every draw
    qrels, run = tmp_path / "two.qrels", tmp_path / "two.run"
    qrels.write_text("t 0 rel 1\nt 0 non 0\n")
    run.write_text("t Q0 rel 1 2 r\nt Q0 non 2 1 r\n")
    two = tmp_path / "two.csv"
    assert main(["score", str(qrels), str(run), "--posterior", str(post), "-m",
                 "PatH(model='rwbm', order=2)", "-o", str(two)]) == 0
    got = pd.read_csv(two).set_index(["chain", "draw"])["score"].sort_index()
    forward = Posterior.load(post).posterior["walk"].sel(rank=1, move="forward")
    want = 1 / (1 + forward.to_series().sort_index())
    assert len(got) == 100
    np.testing.assert_allclose(got.to_numpy(), want.reindex(got.index).to_numpy(),
                               rtol=0, atol=1e-12)
    assert main(["score", str(TREC / "qrels.test"), str(TREC / "results.test"),
                 "--posterior", str(post), "-o", str(out)]) == 2
