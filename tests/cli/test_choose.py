"""``bayeschain choose``: walk specs compared on a log from users whose moves depend on the
click (the independent simulator): the table lists every walk with its LOO and held-out
metrics (the perplexity against the lowest's with a paired bootstrap interval), and LOO
prefers the walk that generated the log by more than four standard
errors of the paired difference."""

import numpy as np
import pytest

from bayeschain.cli import main
from bayeschain.io import write_canonical
from tests.reference.walk_clicks import pages_to_log, simulate_pages

SKIP = np.array([[0.8, 0.0, 0.05, 0.15], [0.6, 0.25, 0.05, 0.1], [0.55, 0.3, 0.05, 0.1],
                 [0.5, 0.35, 0.05, 0.1], [0.0, 0.6, 0.15, 0.25]])
AFTER = np.array([[0.35, 0.0, 0.25, 0.4], [0.3, 0.05, 0.25, 0.4], [0.25, 0.1, 0.25, 0.4],
                  [0.2, 0.15, 0.25, 0.4], [0.0, 0.2, 0.3, 0.5]])


@pytest.mark.filterwarnings("ignore:NUTS diagnostics")   # short fits: the table is tested
def test_choose_prints_loo_and_heldout_metrics_and_prefers_the_true_walk(tmp_path, capsys):
    rng = np.random.default_rng(31)
    pages = simulate_pages(rng, 4000, *SKIP.T, np.array([0.55, 0.4, 0.3, 0.3, 0.25]),
                           np.full(5, 0.1), after_click=tuple(AFTER.T))
    # ten queries, so held-out pages have their query in training
    log = pages_to_log(pages, 5, queries=[f"q{k % 10}" for k in range(len(pages))])
    events, results = tmp_path / "log.parquet", tmp_path / "pages.parquet"
    write_canonical(log, events)
    log.results.to_parquet(results, index=False)
    assert main(["choose", str(events), "--results", str(results), "--draws", "300",
                 "--quiet"]) == 0
    out = capsys.readouterr().out
    table = out[out.index("PSIS-LOO"):].splitlines()
    rows = {line.split()[0]: line.split() for line in table[2:] if line.split()
            and line.split()[0] in ("walk", "walk-click")}
    assert set(rows) == {"walk", "walk-click"}
    assert table[3].split()[0] == "walk-click"              # the best first
    assert "LOO prefers walk-click" in out
    elpd_diff, se_diff = float(rows["walk"][3]), float(rows["walk"][4])
    assert elpd_diff > 4 * se_diff                          # by more than 4 s.e.
    for row in rows.values():
        assert -1 < float(row[7]) < 0                       # held-out LL per rank
        assert float(row[8]) > 1                            # perplexity
        assert row[-1] == "-"                     # documents: none, clicks per rank
    # the perplexity minus the lowest's (the walk whose row says so), with its paired
    # bootstrap's 90% interval
    rows = {line.split()[0]: line.split() for line in table[2:] if line.split()
            and line.split()[0] in ("walk", "walk-click", "walk-reclick")}
    lowest = [name for name, row in rows.items() if row[9] == "lowest"]
    assert len(lowest) == 1
    low = float(rows[lowest[0]][8])
    for name, row in rows.items():
        if name == lowest[0]:
            continue
        gap, lo, hi = (float(v.strip("[],")) for v in row[9:12])
        assert float(row[8]) >= low
        assert gap == pytest.approx(float(row[8]) - low, abs=1.5e-4)
        assert lo <= gap <= hi
    assert "vs_lowest: the perplexity minus the lowest's" in out


def test_choose_refuses_a_spec_that_is_not_a_walk(tmp_path, capsys):
    log = tmp_path / "log.csv"
    log.write_text("session_id,query_id,serp_id,event,rank,doc_id,time\n1,q,0,query,,,\n")
    assert main(["choose", str(log), "--spec", "clicks-conjugate"]) == 2
    assert "is not a walk fitted to clicks alone" in capsys.readouterr().err
