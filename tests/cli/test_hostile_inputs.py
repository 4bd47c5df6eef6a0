"""Inputs that gave silent wrong numbers, tracebacks or unbounded memory: each gives the
right answer (against trec_eval's definition or pytrec_eval) or one error line naming the
problem, exit status 2, nothing written and the inputs unchanged."""

from __future__ import annotations

import gzip
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from bayeschain.cli import main
from tests.faults.helpers import TREC, snapshot, tiny_posterior
from tests.faults.helpers import one_line_error as _one_line

QRELS = TREC / "qrels.test"
RUN = TREC / "results.test"


def _cli(args, capsys) -> tuple[int, str, str]:
    status = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return status, out, err


def _child(args, *, env=None, stdout=subprocess.PIPE, preexec=None, timeout=300):
    """``python -m bayeschain ARGS`` as a fresh process."""
    return subprocess.run([sys.executable, "-m", "bayeschain", *map(str, args)],
                          stdout=stdout, stderr=subprocess.PIPE, text=True, env=env,
                          preexec_fn=preexec, timeout=timeout)


def _table(out: str) -> dict[str, float]:
    return {line.split("\t")[0].strip(): float(line.split("\t")[2])
            for line in out.splitlines() if line.split("\t")[0].strip() not in ("runid",)}


# line endings ------------------------------------------------------------------------------

@pytest.mark.parametrize("end", ["\n", "\r\n", "\r"])
def test_every_line_ending_gives_the_same_evaluation(tmp_path, capsys, end):
    """LF, CRLF and old-Mac CR line ends read the same lines (qrels and runs alike)."""
    run = tmp_path / "run.txt"
    qrels = tmp_path / "qrels.txt"
    run.write_bytes(RUN.read_bytes().replace(b"\n", end.encode()))
    qrels.write_bytes(QRELS.read_bytes().replace(b"\n", end.encode()))
    status, out, _ = _cli(["eval", qrels, run, "-m", "AP", "-m", "P@10"], capsys)
    assert status == 0
    status, reference, _ = _cli(["eval", QRELS, RUN, "-m", "AP", "-m", "P@10"], capsys)
    assert out == reference and "num_q                 \tall\t3" in out


def test_iter_lines_splits_cr_crlf_and_lf_across_chunk_edges(tmp_path):
    """The streaming line reader (click logs) under one rule, whatever the chunk edges."""
    from bayeschain.io import arrow

    text = "a\rb\r\nc\nd\r\re"
    path = tmp_path / "lines.txt"
    path.write_bytes(text.encode())
    for size in (1, 2, 3, 5, 1 << 20):
        old = arrow._CHUNK
        arrow._CHUNK = size
        try:
            got = [line for _, line in arrow.iter_lines(path)]
        finally:
            arrow._CHUNK = old
        assert got == ["a", "b", "c", "d", "", "e"] == arrow.split_lines(text)


def test_a_huge_first_line_is_a_format_error(tmp_path, capsys):
    run = tmp_path / "run.txt"
    run.write_text("x" * (10 << 20) + "\n" + RUN.read_text())
    status, _, err = _cli(["eval", QRELS, run, "-m", "AP"], capsys)
    assert status == 2
    _one_line(err, "eval", str(run))


# scale-free, relevance rule, alignment ------------------------------------------------------

def test_ndcg_does_not_change_with_the_scale_of_the_gains(capsys):
    values = []
    for gains in ("{1: 1, 0: 0}", "{1: 1e300, 0: 0}", "{1: 1e308, 0: 0}", "{1: 1e-300, 0: 0}"):
        status, out, err = _cli(["eval", QRELS, RUN, "-m", f"nDCG(gains={gains})@10",
                                 "--per-topic"], capsys)
        assert status == 0 and err == ""
        values.append([line.split("\t")[2] for line in out.splitlines()[1:]])
    assert all(v == values[0] for v in values)


def test_level_zero_counts_judged_documents_only(tmp_path, capsys):
    """trec_eval -l 0 on grades 1, 0, -2 and an unjudged document first: map 0.5833 and
    P_10 0.2 (trec_eval 10), not the unjudged one or the padding; -l -1 the same."""
    qrels, run = tmp_path / "q", tmp_path / "r"
    qrels.write_text("1 0 a 1\n1 0 b 0\n1 0 c -2\n")
    run.write_text("1 Q0 x 1 4 r\n1 Q0 a 2 3 r\n1 Q0 b 3 2 r\n1 Q0 c 4 1 r\n")
    for level in ("0", "-1"):
        status, out, _ = _cli(["eval", "-l", level, qrels, run, "-m", "AP", "-m", "P@10",
                               "-m", "RR", "-m", "Rprec"], capsys)
        got = _table(out)
        assert status == 0
        assert got["AP"] == pytest.approx(0.5833, abs=5e-5) and got["P@10"] == 0.2
        assert got["RR"] == 0.5 and got["Rprec"] == 0.5


def _trec_reference(qrels: dict, run: dict, level: int) -> dict[str, float]:
    """trec_eval's definitions, written out per topic (ranking by score descending, then
    doc id descending; relevant: judged with grade >= level)."""
    ranked = sorted(run, key=lambda d: (-run[d], tuple(-ord(c) for c in d)))
    rel = [d in qrels and qrels[d] >= level for d in ranked]
    base = sum(g >= level for g in qrels.values())
    hits, ap, rr = 0, 0.0, 0.0
    for k, r in enumerate(rel, start=1):
        if r:
            hits += 1
            ap += hits / k
            rr = rr or 1.0 / k
    return {"AP": ap / base if base else 0.0, "P@10": sum(rel[:10]) / 10, "RR": rr,
            "Rprec": sum(rel[:base]) / base if base else 0.0,
            "R@1000": sum(rel[:1000]) / base if base else 0.0}


def test_level_zero_follows_trec_eval_and_does_not_depend_on_other_runs():
    """A generated collection at relevance level 0 (pytrec_eval refuses level 0): every
    topic's AP, P@10, RR, Rprec and R@1000 equal trec_eval's definitions written out, and
    a run scores the same alone or with a longer run beside it."""
    import pandas as pd

    from bayeschain.evaluation import evaluate_runs

    rng = np.random.default_rng(5)
    qrels, runs = {}, {}
    for t in range(25):
        docs = [f"d{t}-{i}" for i in range(60)]
        judged = rng.choice(60, 30, replace=False)
        qrels[str(t)] = {docs[i]: int(rng.integers(-1, 3)) for i in judged}
        for r, depth in (("short", 8), ("long", 50)):
            ranked = rng.permutation(60)[:depth]
            runs.setdefault(r, {})[str(t)] = {docs[i]: float(depth - k)
                                               for k, i in enumerate(ranked)}
    q = pd.DataFrame([(t, d, g) for t, m in qrels.items() for d, g in m.items()],
                     columns=["query_id", "doc_id", "relevance"])
    frames = {r: pd.DataFrame([(t, d, s, r) for t, m in run.items() for d, s in m.items()],
                              columns=["query_id", "doc_id", "score", "run_id"])
              for r, run in runs.items()}
    names = ["AP", "P@10", "RR", "Rprec", "R@1000"]
    both = evaluate_runs(q, frames, names, level=0)
    alone = evaluate_runs(q, {"short": frames["short"]}, names, level=0)
    for r, run in runs.items():
        for t, ranking in run.items():
            want = _trec_reference(qrels[t], ranking, 0)
            for name in names:
                got = both[(both.run == r) & (both.topic == t) & (both.measure == name)]
                assert float(got.value.iloc[0]) == pytest.approx(want[name], abs=1e-12), \
                    (r, t, name)
    short = both[both.run == "short"].sort_values(["topic", "measure"]).value.to_numpy()
    np.testing.assert_array_equal(short, alone.sort_values(["topic", "measure"]).value)


def test_compare_scores_every_run_on_the_qrels_topics(tmp_path, capsys):
    """Runs over different topic sets: a topic a run lacks scores as an empty ranking
    (trec_eval -c), so a run missing a topic cannot look better by it; ``compare`` of
    scores over different topics does the same and says which topics it filled."""
    post = tiny_posterior(tmp_path / "post.nc")
    lines = RUN.read_text().splitlines()
    fewer = tmp_path / "fewer.txt"
    fewer.write_text("\n".join(ln.replace("STANDARD", "FEWER") for ln in lines
                               if not ln.startswith("302")) + "\n")
    status, out, err = _cli(["compare", QRELS, RUN, fewer, "--posterior", post, "--topics",
                             "fixed"], capsys)
    assert status == 0, err
    from bayeschain.inference import Posterior
    from bayeschain.io import read_qrels, read_run
    from bayeschain.scoring import score

    scores = score({"STANDARD": read_run(RUN), "FEWER": read_run(fewer)}, read_qrels(QRELS),
                   "PatH(model='rwbm', order=2)", Posterior.load(post), complete=True)
    assert float(scores.sel(run="FEWER", topic="302").max()) == 0.0     # an empty ranking
    diff = (scores.sel(run="STANDARD") - scores.sel(run="FEWER")).mean("topic")
    row = next(ln for ln in out.splitlines() if "FEWER" in ln and "STANDARD" in ln)
    assert f"{float(diff.mean()):.4f}" in row.split() or \
        f"{-float(diff.mean()):.4f}" in row.split()
    from bayeschain.comparison import compare

    partial = score({"STANDARD": read_run(RUN), "FEWER": read_run(fewer)}, read_qrels(QRELS),
                    "PatH(model='rwbm', order=2)", Posterior.load(post))
    result = compare(partial, topics="fixed")
    assert result.missing_topics == {"FEWER": ["302"]}
    assert result.pairs["mean_diff"].abs().iloc[0] == pytest.approx(
        abs(float(diff.mean())), abs=1e-12)


@pytest.mark.parametrize(("name", "text", "words"), [
    ("qrels", "", ("no judgement",)),
    ("run", "999 Q0 d 1 1.0 r\n", ("No queries with both results and relevance info",))])
def test_nothing_to_evaluate_is_refused(tmp_path, capsys, name, text, words):
    """An empty qrels file, and a run none of whose topics is judged (trec_eval exits 7
    with this message), are errors naming the file, not a blank table."""
    path = tmp_path / name
    path.write_text(text)
    args = [path, RUN] if name == "qrels" else [QRELS, path]
    status, out, err = _cli(["eval", *args, "-m", "AP"], capsys)
    assert status == 2 and out == ""
    _one_line(err, "eval", str(path), *words)


def test_clicks_before_their_page_s_query_are_counted_and_dropped(tmp_path):
    from bayeschain.io import read_canonical

    log = tmp_path / "log.csv"
    log.write_text("session_id,query_id,serp_id,event,rank,doc_id,time\n"
                   "s1,q1,1,click,1,d1,5\ns1,q1,1,click,2,d2,6\ns1,q1,1,query,,,10\n"
                   "s1,q1,1,click,1,d1,12\n"
                   "s2,q2,2,query,,,1\ns2,q2,2,click,3,d3,2\n")
    read = read_canonical(log)
    assert read.report["clicks_before_query"] == 2
    clicks = read.events[read.events["event"] == "click"]
    assert sorted(clicks["time"].tolist()) == [2.0, 12.0]


# resources ----------------------------------------------------------------------------------

def test_dev_zero_and_a_gzip_bomb_are_refused_without_running_out_of_memory(tmp_path):
    """/dev/zero as a run, qrels or log is refused at its first chunk (a NUL byte); a gzip
    that expands beyond the memory budget (set to 32 MiB by BAYESCHAIN_MEMORY_BUDGET; by
    default a quarter of the machine's memory or of ``ulimit -v``) is refused while it is
    read, under an address-space cap of 2 GiB."""
    bomb = tmp_path / "bomb.gz"
    with gzip.open(bomb, "wb", compresslevel=9) as fh:
        block = b"1 Q0 d 1 1.0 r\n" * (1 << 16)
        for _ in range(40):                                     # 39 MiB expanded
            fh.write(block)
    assert bomb.stat().st_size < 1 << 20

    def cap():
        import resource

        resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))

    env = {**os.environ, "BAYESCHAIN_MEMORY_BUDGET": str(32 << 20)}
    before = snapshot(tmp_path)
    cases = [("eval", "/dev/zero", RUN), ("eval", QRELS, "/dev/zero"), ("stats", "/dev/zero"),
             ("eval", QRELS, bomb)]
    for command, *args in cases:
        result = _child([command, *args, *(["-m", "AP"] if command == "eval" else [])],
                        preexec=cap, env=env)
        assert result.returncode == 2, (args, result.stderr)
        _one_line(result.stderr, command)
        assert any(w in result.stderr for w in ("NUL byte", "larger than 32.0 MiB",
                                                  "cannot tell the click-log format"))
    assert snapshot(tmp_path) == before


def test_long_rankings_are_scored_in_bounded_blocks_or_refused(tmp_path, capsys, monkeypatch):
    """Scoring streams draws in blocks that fit half the memory budget, with the same
    numbers as one block; a ranking too long for even 25 draws at a time is refused up
    front, pointing to a cut-off."""
    from bayeschain.chains import checks
    from bayeschain.inference import posterior_from_parameters
    from bayeschain.io import read_qrels, read_run
    from bayeschain.scoring import score

    walks = np.random.default_rng(1).dirichlet([6, 1, 1, 2], size=(400, 1))[:, 0]
    post = posterior_from_parameters({"walk": walks})
    runs, qrels = {"r": read_run(RUN)}, read_qrels(QRELS)
    whole = score(runs, qrels, "PatH(model='rwbm', order=2)", post, draw_block=400)
    monkeypatch.setattr(checks, "memory_budget", lambda: 2 * 3 * 1000 * 8 * 16 * 30)
    blocked = score(runs, qrels, "PatH(model='rwbm', order=2)", post, draw_block=400)
    np.testing.assert_array_equal(blocked.values, whole.values)
    monkeypatch.setattr(checks, "memory_budget", lambda: 1 << 20)
    from bayeschain.errors import ParameterError

    with pytest.raises(ParameterError, match=r"cut-off, e.g. PatH\(...\)@1000"):
        score(runs, qrels, "PatH(model='rwbm', order=2)", post)


def test_sizes_beyond_the_limits_are_refused_before_allocating(tmp_path, capsys):
    import re

    import bayeschain.models

    spec = tmp_path / "big.toml"
    walk = Path(bayeschain.models.__file__).parent / "walk-relevance.toml"
    spec.write_text(re.sub(r"(?m)^ranks = .*$", "ranks = 100000", walk.read_text()))
    log = tmp_path / "log.csv"
    status, _, err = _cli(["simulate", "-o", log, "--sessions", "1000000000000"], capsys)
    assert status == 2 and not log.exists()
    _one_line(err, "simulate", "1,000,000,000,000 sessions", "the limit is")
    status, _, err = _cli(["simulate", "-o", log, "--ranks", "100000"], capsys)
    assert status == 2 and not log.exists()
    _one_line(err, "simulate", "10,000 ranks")
    status, _, err = _cli(["fit", TREC.parent / "trec_session_2013" / "sessiontrack2013.xml.gz",
                           "--spec", spec, "-o", tmp_path / "p.nc"], capsys)
    assert status == 2
    _one_line(err, "fit", "ranks must be from 1 to 10,000")


# streams, environment, outputs -------------------------------------------------------------

@pytest.mark.parametrize("command", [["eval", QRELS, RUN, "-m", "AP"],
                                     ["stats", TREC.parent / "trec_session_2013" /
                                      "sessiontrack2013.xml.gz"]])
def test_a_closed_standard_output_is_one_error_line(command):
    result = subprocess.run([sys.executable, "-c", "import os, sys; os.close(1); "
                             "sys.argv = ['bayeschain'] + sys.argv[1:]; "
                             "from bayeschain.cli import main; sys.exit(main())",
                             *map(str, command)], stderr=subprocess.PIPE, text=True)
    assert result.returncode == 2
    _one_line(result.stderr, command[0], "standard output")


def test_an_ascii_terminal_gets_escaped_names(tmp_path):
    run = tmp_path / "run.txt"
    run.write_text(RUN.read_text().replace("STANDARD", "r\u00e9sum\u00e9"), encoding="utf-8")
    result = _child(["eval", QRELS, run, "-m", "AP"],
                    env={**os.environ, "PYTHONIOENCODING": "ascii"})
    assert result.returncode == 0, result.stderr
    assert "r\\xe9sum\\xe9" in result.stdout and result.stderr == ""


def test_a_missing_home_gets_temporary_compile_caches(tmp_path, monkeypatch):
    """Numba's and PyTensor's caches move to the temporary folder, with one line each,
    when the package folder, HOME and the user cache cannot be written."""
    from bayeschain import caches

    monkeypatch.setenv("HOME", "/nonexistent/home")
    # set, then removed: monkeypatch restores a variable only when it recorded it, and
    # ``delenv`` of an absent one records nothing, so what prepare_caches sets below
    # outlived the test (every later child of this worker compiled Numba's kernels and
    # PyTensor's modules afresh in a temporary folder: 35 s for one ``fit``)
    for name in ("XDG_CACHE_HOME", "NUMBA_CACHE_DIR", "PYTENSOR_FLAGS",
                 "BAYESCHAIN_NUMBA_NO_CACHE"):
        monkeypatch.setenv(name, "")
        monkeypatch.delenv(name)
    monkeypatch.setattr(caches, "_PACKAGE", Path("/nonexistent/site-packages/bayeschain"))
    real = caches.writable        # (root may write anywhere: only the temporary folder here)
    monkeypatch.setattr(caches, "writable",
                        lambda p: str(p).startswith(str(tmp_path)) and real(p))
    monkeypatch.setattr(caches.tempfile, "gettempdir", lambda: str(tmp_path))
    monkeypatch.delitem(sys.modules, "numba", raising=False)
    monkeypatch.delitem(sys.modules, "pytensor", raising=False)
    said = []
    caches.prepare_caches(said.append)
    uid = os.getuid()
    assert os.environ["NUMBA_CACHE_DIR"] == str(tmp_path / f"bayeschain-{uid}" / "numba")
    assert os.environ["PYTENSOR_FLAGS"] == \
        f"base_compiledir={tmp_path / f'bayeschain-{uid}' / 'pytensor'}"
    assert len(said) == 2 and all("using" in s for s in said)


def test_an_output_that_is_a_device_is_never_replaced(tmp_path, capsys):
    device = tmp_path / "null"
    try:
        os.mknod(device, 0o666 | __import__("stat").S_IFCHR, os.makedev(1, 3))
    except (PermissionError, OSError):
        pytest.skip("creating a device node needs root")
    status, _, err = _cli(["eval", QRELS, RUN, "-m", "AP", "-o", device, "--force"], capsys)
    assert status == 2
    _one_line(err, "eval", "not a regular file")
    assert device.is_char_device()


def test_a_huge_inst_target_reads_to_the_end(capsys):
    """INST with T = 1e308: the user never reaches the target and reads every rank, so the
    expected rate of gain tends to 0 and the expected depth with a cut-off is the cut-off."""
    status, out, err = _cli(["eval", QRELS, RUN, "-m", "INST(T=1e308)", "-m",
                             "INST(T=1e308, value='ED')@10", "-m", "INST(T=1e12)"], capsys)
    assert status == 0 and err == ""
    got = _table(out)
    assert got["INST(T=1e+308)"] == 0.0 and got["INST(T=1e+308, value='ED')@10"] == 10.0
    assert got["INST(T=1000000000000.0)"] < 1e-5


def test_a_nan_holding_rate_is_named(capsys):
    status, _, err = _cli(["eval", QRELS, RUN, "-m", "MPcont", "--holding-rates", "nan,1"],
                          capsys)
    assert status == 2
    _one_line(err, "eval", "--holding-rates", "found nan")


def test_a_compare_of_too_many_pairs_is_refused_up_front():
    import xarray as xr

    from bayeschain.comparison import compare
    from bayeschain.errors import ParameterError

    runs = [f"r{i}" for i in range(500)]
    scores = xr.DataArray(np.zeros((1, 2, 500, 3)), dims=("chain", "draw", "run", "topic"),
                          coords={"run": runs, "topic": ["1", "2", "3"]})
    with pytest.raises(ParameterError, match="124,750 pairs.*reference"):
        compare(scores)
    assert len(compare(scores, reference="r0").pairs) == 499


def test_a_signal_swallowed_by_a_finaliser_still_stops_the_commit(tmp_path):
    """A SIGTERM whose exception Python ignored in a finaliser ("Exception ignored in")
    is still seen before the outputs are moved into place: nothing is written."""
    from bayeschain.interrupts import RECEIVED, Terminated
    from bayeschain.io.write import atomic_output

    target = tmp_path / "out.txt"
    RECEIVED.append(15)
    try:
        with pytest.raises(Terminated), atomic_output(target) as tmp:
            tmp.write_text("x")
    finally:
        RECEIVED.clear()
    assert not target.exists() and list(tmp_path.iterdir()) == []


def test_a_canonical_header_field_beyond_the_csv_limit_is_a_format_error(tmp_path):
    """Found by the readers' fuzz (a line longer than the sniffed head): the csv module's
    128 KiB field limit raised its own error from the header."""
    from bayeschain.errors import FormatError
    from bayeschain.io import read_canonical

    log = tmp_path / "log.csv"
    log.write_text("1 " * 70_000 + "\nserp_id,rank,doc_id\n0,1,d\n")
    with pytest.raises(FormatError, match=str(log)):
        read_canonical(log)


def test_a_numba_cache_entry_that_cannot_be_read_is_a_miss(tmp_path, monkeypatch):
    """Two environments of one Python sharing an editable source tree: an entry written by
    another Numba (LLVM 20 bitcode read by LLVM 14 raises RuntimeError) is compiled
    afresh instead of failing the command."""
    pytest.importorskip("numba")
    from numba.core import caching

    from bayeschain.chains.jit import jit

    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path))

    def twice(x):
        return 2.0 * x

    def unreadable(self, sig, target_context):
        raise RuntimeError("LLVM bitcode parsing error")

    monkeypatch.setattr(caching.Cache, "load_overload", unreadable)
    assert jit(twice)(3.0) == 6.0
