"""``bayeschain fit`` on the bundled TREC Session log, then ``score`` with its walk.

The posteriors and scores written are read back and checked against counts made here from
the XML (ElementTree) and against the definitions: the moves of a rank are a probability
distribution; the conjugate click-to-click posterior is Dirichlet(prior + counts); P@H of
the two-document list (relevant, non-relevant) is 1 / (1 + p_1) under a walk whose
forward move at rank 1 is p_1."""

import gzip
import re
import tomllib
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from bayeschain.cli import main
from bayeschain.inference import Posterior, expected_visits

LOG = Path(__file__).resolve().parents[2] / "data" / "trec_session_2013" / \
    "sessiontrack2013.xml.gz"
QRELS = LOG.parent / "qrels.txt"
TOP_GRADE = max(int(line.split()[3]) for line in QRELS.read_text().splitlines() if line.strip())


def _xml_pages() -> list[tuple[int, int, list[int], bool]]:
    """Per result page of the XML: (session, results shown, clicked ranks, whether the
    session issues a later query -- another page or its final currentquery)."""
    pages = []
    for n, session in enumerate(ET.parse(gzip.open(LOG)).getroot().iter("session")):
        interactions = session.findall("interaction")
        final_query = session.find("currentquery") is not None
        for i, page in enumerate(interactions):
            ranks = [int(c.findtext("rank")) for c in page.findall("clicked/click")]
            later = i + 1 < len(interactions) or final_query
            pages.append((n, len(page.findall("results/result")), ranks, later))
    return pages


def _check_walk_moves(walk, ranks: int) -> None:
    """Per-step moves: finite probabilities summing to 1 at each rank, no backward move
    from rank 1, one entry per rank of the log's longest page."""
    values = walk.values
    assert np.isfinite(values).all() and (values >= 0).all() and (values <= 1).all()
    np.testing.assert_allclose(walk.sum("move").values, 1, atol=1e-9)
    assert (walk.sel(rank=1, move="backward").values == 0).all()
    assert list(walk["rank"].values) == list(range(1, ranks + 1))


def _two_document_topics(tmp_path) -> tuple[Path, Path]:
    """Topic ``relfirst`` ranks (relevant, non-relevant), ``relsecond`` the reverse,
    ``allrel`` 20 documents of grade 2, ``norel`` 20 of grade 0."""
    grades = {"relfirst": [1, 0], "relsecond": [0, 1], "allrel": [2] * 20, "norel": [0] * 20}
    qrels, run = tmp_path / "defs.qrels", tmp_path / "defs.run"
    qrels.write_text("".join(f"{t} 0 {t}-{i} {g}\n" for t, gs in grades.items()
                             for i, g in enumerate(gs)))
    run.write_text("".join(f"{t} Q0 {t}-{i} {i + 1} {100 - i} r\n" for t, gs in grades.items()
                           for i in range(len(gs))))
    return qrels, run


def _check_definitional_scores(table: pd.DataFrame, first: pd.Series,
                               first_nonrelevant: pd.Series) -> None:
    """P@H = E[T]/E[H] on the lists of ``_two_document_topics``: rank 2 is reached only from
    rank 1, so E[visits 2] = p_1 E[visits 1] with p_1 the forward move at rank 1 (after a
    relevant or a non-relevant document for the walk by relevance)."""
    by = table.set_index(["topic", "chain", "draw"])["score"].sort_index()
    for topic, want in (("relfirst", 1 / (1 + first)),
                        ("relsecond", first_nonrelevant / (1 + first_nonrelevant)),
                        ("allrel", 2.0 + 0 * first), ("norel", 0 * first)):
        got = by.loc[topic]
        assert len(got) == len(first)
        np.testing.assert_allclose(got.to_numpy(), want.reindex(got.index).to_numpy(),
                                   rtol=0, atol=1e-12, err_msg=topic)


def _run_from_qrels(tmp_path) -> Path:
    """A run of 20 judged documents of the track's first topic."""
    run = tmp_path / "run.txt"
    topic = QRELS.read_text().split()[0]
    docs = [line.split()[2] for line in QRELS.read_text().splitlines()
            if line.split()[0] == topic][:20]
    run.write_text("".join(f"{topic} Q0 {d} {i + 1} {20 - i} r\n" for i, d in enumerate(docs)))
    return run


@pytest.mark.filterwarnings("ignore:NUTS diagnostics:UserWarning")   # capped at 300 draws
def test_default_fit_then_score_the_walk(tmp_path, capsys):
    """The README's two steps: `bayeschain fit LOG -o post.nc` with no spec fits the walk;
    `bayeschain score` scores P@H with it; the scores are finite and in [0, 1].  On TREC
    Session 2013 the fitted walk's replay of the log puts the share of pages with a click
    at rank >= 5 (30.1%) inside its 95% predictive band, and examines rank 5 on most
    pages: users examine what they click (the click-to-click frequencies read as the
    walk's moves visit rank 5 with probability about 0.07)."""
    pytest.importorskip("nutpie")
    out = tmp_path / "post.nc"
    figs = tmp_path / "figs"
    assert main(["fit", str(LOG), "-o", str(out), "--draws", "300", "--quiet",
                 "--figures", str(figs)]) == 0
    for name in ("ppc_clicks_per_page.png", "ppc_deepest_click.png", "ppc_click_rank.png",
                 "ppc_first_click.png", "ppc_last_click.png", "ppc_click_distance.png",
                 "ppc_dwell.png"):
        assert (figs / name).stat().st_size > 5_000
    text = capsys.readouterr().out
    assert "fitting walk (the walk P@H scores" in text
    assert "E[H] on a 10-result page" in text
    deep = [line for line in text.splitlines()
            if line.startswith("pages with a click at rank >= 5: observed 0.301, ")]
    assert len(deep) == 1 and "outside" not in deep[0], text
    post = Posterior.load(out)
    visits = expected_visits(post, 10)
    assert np.quantile(visits[:, 4], 0.025) > 0.5      # rank 5 is examined on most pages
    assert post.attrs["spec_name"] == "walk" and post.parametrises == "walk"
    pages = _xml_pages()
    longest = max(shown for _, shown, _, _ in pages)
    assert longest == 49
    assert post.attrs["longest_page"] == longest       # the log's longest page: nothing cut
    # the posterior read back: 2 chains x 300 draws of probabilities, positive rates
    assert post.n_draws == 2 * 300
    assert post.attrs["clicks"] == sum(len(r) for _, _, r, _ in pages)
    assert post.attrs["pages"] == sum(shown > 0 for _, shown, _, _ in pages)
    _check_walk_moves(post.posterior["walk"], longest)
    for name in ("click", "repeat"):
        v = post.posterior[name].values
        assert np.isfinite(v).all() and (v >= 0).all() and (v <= 1).all(), name
    rates = post.posterior["holding_rate"].values
    assert np.isfinite(rates).all() and (rates > 0).all()
    scores = tmp_path / "scores.csv"
    run = _run_from_qrels(tmp_path)
    assert main(["score", str(QRELS), str(run), "--posterior", str(out), "-m",
                 "PatH(model='rwbm', order=2)", "-o", str(scores)]) == 0
    table = pd.read_csv(scores, dtype={"topic": str, "run": str})
    assert len(table) == post.n_draws and np.all(np.isfinite(table["score"]))
    assert set(table["run"]) == {"r"} and set(table["topic"]) == {run.read_text().split()[0]}
    assert not table.duplicated(["chain", "draw"]).any()
    # P@H of graded gains lies between 0 and the top grade; draws differ
    assert table["score"].between(0, TOP_GRADE).all() and table["score"].std() > 0
    qrels, defs = _two_document_topics(tmp_path)
    exact = tmp_path / "defs.csv"
    assert main(["score", str(qrels), str(defs), "--posterior", str(out), "-m",
                 "PatH(model='rwbm', order=2)", "-o", str(exact)]) == 0
    forward = post.posterior["walk"].sel(rank=1, move="forward").to_series().sort_index()
    _check_definitional_scores(pd.read_csv(exact, dtype={"topic": str}), forward, forward)
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
    # read back: the exact posterior of each rank's row is Dirichlet(prior + counts), the
    # counts made here from the XML as bayeschain.inference.clicks.data documents them: after a
    # click on rank i (deeper ranks pooled into the spec's last), the next click is deeper
    # (forward) or higher (backward); after the page's last click the session ends (stop)
    # or issues another query (reformulate); a click on the same rank again is left out;
    # rank 1 has no backward move (a structural zero)
    post = Posterior.load(out)
    spec = tomllib.loads(post.attrs["spec"])
    categories, prior = spec["transitions"]["categories"], spec["transitions"]["prior"]
    ranks = spec["model"]["ranks"]
    counts = np.zeros((ranks, len(categories)))
    repeats = 0
    for _, _, clicked, later in _xml_pages():
        kept = [r for i, r in enumerate(clicked) if i == 0 or r != clicked[i - 1]]
        repeats += len(clicked) - len(kept)
        for i, r in enumerate(kept):
            if i + 1 < len(kept):
                move = "forward" if kept[i + 1] > r else "backward"
            else:
                move = "reformulate" if later else "stop"
            counts[min(r, ranks) - 1, categories.index(move)] += 1
    assert post.attrs["transitions_observed"] == counts.sum() == 562
    assert post.attrs["repeats_left_out"] == repeats == 24
    alpha = counts + np.asarray(prior)
    alpha[0, categories.index("backward")] = 0
    draws = post.posterior["transition"].transpose("chain", "draw", "rank", "category")
    assert list(draws["category"].values) == categories
    assert list(draws["rank"].values) == list(range(1, ranks + 1))
    values = draws.values.reshape(-1, ranks, len(categories))
    assert values.shape[0] == post.n_draws == 4 * 100
    assert np.isfinite(values).all() and (values >= 0).all()
    np.testing.assert_allclose(values.sum(axis=-1), 1, atol=1e-12)
    assert (values[:, 0, categories.index("backward")] == 0).all()
    mean = alpha / alpha.sum(axis=1, keepdims=True)
    sd = np.sqrt(mean * (1 - mean) / (alpha.sum(axis=1, keepdims=True) + 1))
    error = np.abs(values.mean(axis=0) - mean)
    assert (error <= 5 * sd / np.sqrt(values.shape[0]) + 1e-12).all(), error
    rates = post.posterior["holding_rate"].values
    assert np.isfinite(rates).all() and (rates > 0).all()
    run = _run_from_qrels(tmp_path)
    for measure in ("PatH(model='rwbm', order=2)", "PatH(model='sfbm', order=2)", "RBP"):
        assert main(["score", str(QRELS), str(run), "--posterior", str(out), "-m",
                     measure]) == 2
        err = capsys.readouterr().err
        assert "click-to-click" in err and "'walk'" in err and err.count("\n") == 1


@pytest.mark.filterwarnings("ignore:NUTS diagnostics:UserWarning")   # capped at 200 draws
def test_fit_by_relevance_then_score_with_the_relevance_walk(tmp_path, capsys):
    """walk-relevance on the TREC Session log with its qrels, then `bayeschain score`
    with PatH(model='drwbm') on a run of judged documents."""
    pytest.importorskip("nutpie")
    out = tmp_path / "rel.nc"
    assert main(["fit", str(LOG), "--spec", "walk-relevance", "-o", str(out), "--quiet"]) == 2
    assert "--qrels" in capsys.readouterr().err
    assert main(["fit", str(LOG), "--spec", "walk-relevance", "--qrels", str(QRELS),
                 "-o", str(out), "--draws", "200", "--tune", "100", "--quiet"]) == 0
    post = Posterior.load(out)
    assert set(post.posterior["walk"]["relevance"].values) == {"relevant", "non-relevant"}
    assert post.n_draws == 2 * 200
    for relevance in ("relevant", "non-relevant"):
        _check_walk_moves(post.posterior["walk"].sel(relevance=relevance), 49)
    scores = tmp_path / "scores.csv"
    assert main(["score", str(QRELS), str(_run_from_qrels(tmp_path)), "--posterior",
                 str(out), "-m", "PatH(model='drwbm', order=2)", "-o", str(scores)]) == 0
    table = pd.read_csv(scores)
    assert len(table) == post.n_draws
    assert np.all(np.isfinite(table["score"])) and table["score"].between(0, TOP_GRADE).all()
    # P@H's definition with the moves after a relevant / a non-relevant document
    qrels, defs = _two_document_topics(tmp_path)
    exact = tmp_path / "defs.csv"
    assert main(["score", str(qrels), str(defs), "--posterior", str(out), "-m",
                 "PatH(model='drwbm', order=2)", "-o", str(exact)]) == 0
    first = post.posterior["walk"].sel(rank=1, move="forward")
    _check_definitional_scores(pd.read_csv(exact, dtype={"topic": str}),
                               first.sel(relevance="relevant").to_series().sort_index(),
                               first.sel(relevance="non-relevant").to_series().sort_index())
    # the walk by relevance is not P@H's walk without relevance
    assert main(["score", str(QRELS), str(_run_from_qrels(tmp_path)), "--posterior",
                 str(out), "-m", "PatH(model='rwbm', order=2)"]) == 2
    assert "drwbm" in capsys.readouterr().err


@pytest.mark.filterwarnings("ignore:NUTS diagnostics:UserWarning")   # capped at 30 draws
def test_tuning_steps_are_set_on_the_command_line_and_recorded(tmp_path, capsys,
                                                                monkeypatch):
    """``--tune`` reaches NUTS (the sampler is asked for that many tuning steps) and the
    posterior records the settings it was sampled with; 0 steps (on which nutpie 0.16.8
    panics) is a one-line error before any work."""
    import json

    from bayeschain.inference.walk import sampler

    pytest.importorskip("nutpie")
    asked = []
    real = sampler.sample

    def recording(model, **options):
        asked.append(options["tune"])
        return real(model, **options)

    monkeypatch.setattr(sampler, "sample", recording)
    out = tmp_path / "post.nc"
    assert main(["fit", str(LOG), "--tune", "40", "--draws", "30", "--seed", "3", "-o",
                 str(out), "--quiet"]) == 0
    assert asked == [40]
    settings = json.loads(Posterior.load(out).attrs["sampler"])
    assert (settings["tune"], settings["draws"], settings["seed"]) == (40, 30, 3)
    assert settings["target_accept"] == 0.9          # the spec's, not overridden
    capsys.readouterr()
    assert main(["fit", str(LOG), "--tune", "0", "--quiet"]) == 2
    err = capsys.readouterr().err.strip()
    assert "argument --tune: expected a positive integer, got 0" in err
    assert len(err.splitlines()) <= 3 and "Traceback" not in err      # usage + error
    assert main(["fit", str(LOG), "--tune", "5000001", "--quiet"]) == 2      # x 2 chains
    assert "10,000,002 tuning steps in all (tune x chains)" in capsys.readouterr().err


@pytest.mark.filterwarnings("ignore:NUTS diagnostics:UserWarning")   # capped at 200 draws
def test_heldout_reports_click_model_metrics(capsys):
    pytest.importorskip("nutpie")
    assert main(["fit", str(LOG), "--heldout", "0.25", "--draws", "200", "--tune", "100",
                 "--quiet"]) == 0
    text = capsys.readouterr().out
    assert "held-out click prediction, all held-out pages" in text
    assert "perplexity" in text and "log-likelihood" in text
    # each line's numbers: a log-likelihood of probabilities is <= 0 and a perplexity >= 1
    lines = [x for x in text.splitlines() if x.startswith("held-out click prediction")]
    assert len(lines) >= 1
    for line in lines:
        ll = float(re.search(r"log-likelihood (-?[0-9.]+) nats/rank", line).group(1))
        pp = float(re.search(r", perplexity ([0-9.]+)", line).group(1))
        cpp = float(re.search(r"conditional perplexity ([0-9.]+)", line).group(1))
        assert np.isfinite([ll, pp, cpp]).all() and ll < 0 and pp >= 1 and cpp >= 1, line
    assert main(["fit", str(LOG), "--heldout", "1.5", "--quiet"]) == 2


@pytest.mark.filterwarnings("ignore:NUTS diagnostics:UserWarning")   # short fits (200 draws)
def test_the_click_model_is_chosen_on_the_command_line(tmp_path, capsys):
    """`--clicks`, `--min-impressions` and `--documents` set the walk's [examination]
    keys: a log whose (query, document) pairs recur (30 documents in 200 layouts, each
    pair shown hundreds of times) is fitted per document by default (its documents
    integrated out by Laplace), per rank with `--clicks pooled`, per rank when no pair is
    shown `--min-impressions` times, and with every document sampled by `--documents
    sampled`; the posterior stores the spec it was fitted with (read back by TOML) and the
    fit prints the documents' route; a spec without [examination] is refused."""
    pytest.importorskip("nutpie")
    from bayeschain.io.clicklog import write_canonical
    from tests.reference.walk_clicks import documents_at_several_ranks

    log, _, _, _ = documents_at_several_ranks(3, pages=3_000)
    events, pages = tmp_path / "log.parquet", tmp_path / "pages.parquet"
    write_canonical(log, events)
    log.results.to_parquet(pages, index=False)
    base = ["fit", str(events), "--results", str(pages), "--draws", "200", "--tune", "100",
            "--quiet"]
    for options, level, impressions in ((["--clicks", "pooled"], "rank", 10),
                                        (["--min-impressions", "100000"], "rank", 100000),
                                        ([], "document", 10),
                                        (["--documents", "sampled"], "document", 10)):
        out = tmp_path / f"{level}-{impressions}-{len(options)}.nc"
        assert main(base + options + ["-o", str(out)]) == 0, capsys.readouterr().err
        text = capsys.readouterr().out
        post = Posterior.load(out)
        exam = tomllib.loads(post.attrs["spec"])["examination"]
        assert exam.get("min_impressions", 10) == impressions
        assert exam["clicks"] == ("pooled" if "--clicks" in options else "auto")
        assert post.attrs["click_level"] == level and post.attrs["min_impressions"] == impressions
        assert ("attractiveness" in post.posterior) == (level == "document")
        assert ("--clicks pooled fits one click chance per rank" in text) == (level == "document")
        if level == "document":       # how the documents were fitted, printed and stored
            laplace = "--documents" not in options      # 600 impressions per document
            assert exam.get("documents", "auto") == ("auto" if laplace else "sampled")
            route = post.attrs["document_effects"]
            assert route.startswith("integrated out by a Laplace" if laplace else
                                    "sampled by NUTS with the rest"), route
            assert f"documents: {route}" in text
    assert main(base + ["--spec", "clicks-conjugate", "--clicks", "pooled"]) == 2
    assert "no [examination] section" in capsys.readouterr().err
