"""``bayeschain eval`` against trec_eval's own expected outputs (data/trec_eval/expected).

Every per-topic and overall value of map, map_cut_k, P_k, ndcg, ndcg_cut_k, recall_k,
recip_rank, Rprec, success_k, bpref and (v10) rbp and rbp_resid must agree to the printed 4
decimals (half a unit of the last printed digit, plus floating-point slack)."""

import re
from pathlib import Path

import pytest

from bayeschain.cli import main

DATA = Path(__file__).resolve().parents[1] / "data" / "trec_eval"
CHECKED = re.compile(r"^(map|map_cut_\d+|P_\d+|ndcg|ndcg_cut_\d+|rbp|recall_\d+|recip_rank|"
                     r"Rprec|success_\d+|bpref|rbp_resid)$")

CASES = [
    # (version, expected file, qrels, run, extra options)
    ("v10.0", "out.test.aq", "qrels.test", "results.test", []),
    ("v9.0.8", "out.test.aq", "qrels.test", "results.test", []),
    ("v10.0", "out.test.aqc", "qrels.test", "results.trunc", ["-c"]),
    ("v9.0.8", "out.test.aqc", "qrels.test", "results.trunc", ["-c"]),
    ("v10.0", "out.test.aqcM", "qrels.test", "results.trunc", ["-c", "-M", "100"]),
    ("v10.0", "out.test.aql", "qrels.rel_level", "results.test", ["-l", "2"]),
    ("v9.0.8", "out.test.aql", "qrels.rel_level", "results.test", ["-l", "2"]),
    ("v10.0", "out.test", "qrels.test.with-comments", "results.test", []),
    ("v10.0", "out.comment.test", "qrels.comment.test", "results.comment.test", []),
    # P_3, P_5, P_7, ndcg_cut_10/20/23, recall_20/2000, success_2/5/20 (the other lines of
    # this file are measures with trec_eval parameters that bayeschain does not name)
    ("v10.0", "out.test.meas_params", "qrels.test", "results.test", []),
    ("v9.0.8", "out.test.meas_params", "qrels.test", "results.test", []),
]


def read_expected(path):
    rows = {}
    for line in path.read_text().splitlines():
        name, topic, value = (x.strip() for x in line.split("\t"))
        if CHECKED.match(name):
            rows[(name, topic)] = float(value)
    return rows


def run_eval(capsys, qrels, run, options, measures):
    args = ["eval", str(DATA / qrels), str(DATA / run), "-q", "--format", "tsv", *options]
    for m in measures:
        args += ["-m", m]
    assert main(args) == 0
    out = capsys.readouterr().out.splitlines()[1:]
    got = {}
    for line in out:
        _run, topic, measure, value = line.split("\t")
        got[(measure, topic)] = float(value)
    return got


@pytest.mark.parametrize(("version", "expected", "qrels", "run", "options"), CASES,
                         ids=[f"{c[0]}-{c[1]}-{c[2]}" for c in CASES])
def test_matches_trec_eval(capsys, version, expected, qrels, run, options):
    want = read_expected(DATA / "expected" / version / expected)
    names = sorted({name for name, _ in want})
    assert names, "expected file has none of the checked measures"
    got = run_eval(capsys, qrels, run, options, names)
    from bayeschain.measures import parse_measure

    canon = {name: repr(parse_measure(name)) for name in names}
    missing, wrong = [], []
    for (name, topic), value in want.items():
        key = (canon[name], topic)
        if key not in got:
            missing.append(key)
        elif abs(got[key] - value) > 5e-5 + 1e-9:
            wrong.append((name, topic, got[key], value))
    assert not missing, missing[:5]
    assert not wrong, wrong[:10]
    # and no topic that trec_eval did not evaluate
    # (v9 omits the zero rows of a topic missing from the run under -c; v10 prints them)
    want_topics = {t for _, t in want}
    got_topics = {t for _, t in got}
    if want_topics != {"all"}:
        assert want_topics <= got_topics
        if version == "v10.0":
            assert got_topics == want_topics


@pytest.mark.parametrize(("version", "expected", "qrels", "run", "options"), CASES,
                         ids=[f"{c[0]}-{c[1]}-{c[2]}" for c in CASES])
def test_trec_names_print_trec_eval_lines(capsys, version, expected, qrels, run, options):
    """With --trec-names the text output's lines are trec_eval's own lines, character for
    character, for every checked measure (name padded to 22, topic, 4 decimals)."""
    lines = (DATA / "expected" / version / expected).read_text().splitlines()
    want = {line for line in lines if CHECKED.match(line.split("\t")[0].strip())}
    names = sorted({line.split("\t")[0].strip() for line in want})
    args = ["eval", str(DATA / qrels), str(DATA / run), "-q", "--trec-names", *options]
    for name in names:
        args += ["-m", name]
    assert main(args) == 0
    got = set(capsys.readouterr().out.splitlines())
    if version == "v9.0.8" and "-c" in options:      # v9 prints no rows for topic 302
        got = {line for line in got if line.split("\t")[1] != "302"}
    assert want <= got, sorted(want - got)[:10]
