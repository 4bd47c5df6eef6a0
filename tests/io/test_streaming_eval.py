"""``bayeschain eval``'s streaming path: run files read as Arrow tables in file order, each
ranked as it is read, evaluated in batches (:func:`bayeschain.evaluation.evaluate_files`).

Its results are held against trec_eval's own printed output and against the DataFrame path
(:func:`read_run` sorted by Arrow, :func:`evaluate_runs` on all runs at once); its errors
name the file and line even when the bad line is in a later batch."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

from bayeschain import evaluation
from bayeschain.cli import main
from bayeschain.errors import FormatError, ParameterError
from bayeschain.evaluation import Evaluation, aggregate, evaluate_files, evaluate_runs
from bayeschain.io import lists as lists_module
from bayeschain.io import ranked_lists, read_qrels, read_run
from bayeschain.io.arrow import from_numpy, to_numpy
from bayeschain.io.trec import first_run_id, read_run_table, run_names

DATA = Path(__file__).resolve().parents[2] / "data" / "trec_eval"
MEASURES = ["AP", "P@10", "nDCG@10", "RBP(p=0.8)", "ERR@20", "Bpref", "RBPresid(p=0.9)",
            "Judged@10", "RR", "Rprec", "R@100"]


def write(tmp_path, name, text):
    p = tmp_path / name
    p.write_bytes(text.encode())
    return p


def synthetic(tmp_path, n_runs=5, n_topics=12, depth=40, seed=0, sep=" ", ties=True):
    """Qrels and run files as retrieval systems write them: topics 1..n in numeric order
    (not the ids' string order), scores descending, with ties, some topics unjudged."""
    rng = np.random.default_rng(seed)
    qrels = "".join(f"{t} 0 d{t}-{d} {rng.choice([-1, 0, 0, 1, 2])}\n"
                    for t in range(1, n_topics) for d in rng.permutation(80)[:30])
    qpath = write(tmp_path, "qrels.txt", qrels)
    paths = []
    for r in range(n_runs):
        lines = []
        for t in range(1, n_topics + 1):
            docs = rng.permutation(80)[:rng.integers(1, depth)]
            scores = np.sort(rng.integers(0, 15 if ties else 10**9, size=docs.size))[::-1]
            lines += [sep.join([str(t), "Q0", f"d{t}-{d}", str(k + 1), f"{s / 7:.4f}",
                                f"sys{r % 3}"])
                      for k, (d, s) in enumerate(zip(docs, scores, strict=True))]
        paths.append(write(tmp_path, f"run{r}.txt", "\n".join(lines) + "\n"))
    return qpath, paths


def frame_path(qrels, paths, measures, **options):
    """The DataFrame path: read_run (Arrow-sorted frames), all runs ranked at once."""
    frames = [read_run(p) for p in paths]
    runs = dict(zip(run_names(paths, frames), frames, strict=True))
    return evaluate_runs(read_qrels(qrels), runs, measures, **options)


@pytest.mark.parametrize("batch_lines", [1, 50, 700, None])
@pytest.mark.parametrize("options", [{}, {"complete": True}, {"depth": 7}, {"level": 2}])
def test_batches_equal_the_frame_path(tmp_path, batch_lines, options):
    qrels, paths = synthetic(tmp_path)
    want = frame_path(qrels, paths, MEASURES, **options)
    got = evaluate_files(qrels, paths, MEASURES, batch_lines=batch_lines, **options)
    table = got.to_frame()
    assert table[["run", "topic", "measure"]].equals(want[["run", "topic", "measure"]])
    np.testing.assert_allclose(table["value"], want["value"], rtol=0, atol=1e-15)
    if batch_lines is None:                          # one batch: the same arrays, bit for bit
        np.testing.assert_array_equal(table["value"], want["value"])
    means = aggregate(table)
    assert [got.runs[r] for r, _ in got.run_rows()] == list(means["run"].unique())
    _same_means(got.means().T.ravel(), means["value"])
    np.testing.assert_allclose(means["value"], aggregate(want)["value"], rtol=0, atol=1e-15)


def test_tab_separated_and_whitespace_aligned_files_alike(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    qrels, spaced = synthetic(tmp_path / "a", n_runs=2)
    _, tabbed = synthetic(tmp_path / "b", n_runs=2, sep="\t")
    aligned = [write(tmp_path, f"aligned{i}", "".join(
        "  " + "   ".join(line.split(" ")) + "\n" for line in p.read_text().splitlines()))
        for i, p in enumerate(spaced)]
    ref = evaluate_files(qrels, spaced, MEASURES).values
    np.testing.assert_array_equal(evaluate_files(qrels, tabbed, MEASURES).values, ref)
    np.testing.assert_array_equal(evaluate_files(qrels, aligned, MEASURES).values, ref)


@pytest.mark.parametrize(("version", "expected", "qrels", "runs", "options"), [
    ("v10.0", "out.test.aq", "qrels.test", ["results.test"], []),
    ("v10.0", "out.test.aqc", "qrels.test", ["results.trunc"], ["-c"]),
    ("v10.0", "out.test.aqcM", "qrels.test", ["results.trunc"], ["-c", "-M", "100"]),
    ("v10.0", "out.test.aql", "qrels.rel_level", ["results.test"], ["-l", "2"]),
])
def test_one_run_per_batch_prints_trec_eval_lines(capsys, monkeypatch, version, expected,
                                                   qrels, runs, options):
    """With a batch per run file (and the same run file under other names around it, so
    that every run is read in a later batch), the text lines are trec_eval's own."""
    monkeypatch.setattr(evaluation, "BATCH_LINES", 1)
    lines = (DATA / "expected" / version / expected).read_text().splitlines()
    names = ["map", "P_10", "ndcg_cut_10", "recip_rank", "Rprec", "bpref", "recall_100"]
    want = {line for line in lines if line.split("\t")[0].strip() in names}
    args = ["eval", str(DATA / qrels), *(str(DATA / r) for r in runs), "-q", "--trec-names",
            *options]
    for name in names:
        args += ["-m", name]
    assert main(args) == 0
    assert want <= set(capsys.readouterr().out.splitlines())


def test_text_output_equals_the_frame_path_with_many_batches(tmp_path, capsys, monkeypatch):
    from bayeschain.cli.eval import format_text

    qrels, paths = synthetic(tmp_path, n_runs=7, ties=False)
    monkeypatch.setattr(evaluation, "BATCH_LINES", 300)
    args = ["eval", str(qrels), *map(str, paths), "-q", *sum((["-m", m] for m in MEASURES),
                                                            [])]
    assert main(args) == 0
    got = capsys.readouterr().out
    assert got == format_text(frame_path(qrels, paths, MEASURES), True)
    # the same measure twice, or two measures under one trec name: grouped as before
    assert main(["eval", str(qrels), *map(str, paths), "-m", "AP", "-m", "map",
                 "--trec-names", "-q"]) == 0
    frame = frame_path(qrels, paths, ["AP", "map"])
    frame["measure"] = "map"
    assert capsys.readouterr().out == format_text(frame, True)


@pytest.mark.parametrize(("text", "line", "message"), [
    ("1 Q0 d1-1 1 x sys\n", 1, "score must be a number"),
    ("1 Q0 d1-1 1 1.0 sys\n1 Q0 d1-2 1\n", 2, "expected 6 fields"),
    ("1 Q0 d1-1 1 1.0 sys\n1 Q0 d1-2 2 nan sys\n", 2, "score must be finite"),
    ("1 Q0 d1-1 1 1.0 sys\n2 Q0 d1-1 1 1.0 sys\n1 Q0 d1-1 3 0.5 sys\n", 3, "appears twice"),
])
def test_a_bad_line_in_a_later_batch_is_named(tmp_path, capsys, text, line, message):
    qrels, paths = synthetic(tmp_path, n_runs=4)
    bad = write(tmp_path, "late.run", text)
    with pytest.raises(FormatError, match=message) as info:
        evaluate_files(qrels, [*paths, bad], ["AP"], batch_lines=10)
    assert info.value.line == line and Path(info.value.file).name == "late.run"
    proc = subprocess.run([sys.executable, "-m", "bayeschain", "eval", str(qrels),
                           *map(str, paths), str(bad)], capture_output=True, text=True)
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.strip() == proc.stderr.strip().splitlines()[0]     # one line
    assert f"late.run:{line}: " in proc.stderr and message in proc.stderr


def test_a_bad_line_deep_in_a_large_file_is_named(tmp_path):
    """Arrow's parser refuses the file; the careful parser names the exact line."""
    qrels, _ = synthetic(tmp_path, n_runs=1)
    lines = [f"{1 + i // 1000} Q0 d{i} {i} {1e6 - i} big" for i in range(60_000)]
    lines[54_321] = lines[54_321].replace(" big", " big extra\tfield")   # irregular spacing
    lines[57_001] = "3 Q0 d57001 1 1e400 big"                            # overflow
    path = write(tmp_path, "big.run", "\n".join(lines) + "\n")
    with pytest.raises(FormatError, match="score must be finite") as info:
        evaluate_files(qrels, [path], ["AP"], batch_lines=1000)
    assert info.value.line == 57_002


def test_empty_run_duplicate_files_and_qrels_errors(tmp_path):
    qrels, paths = synthetic(tmp_path, n_runs=3)
    empty = write(tmp_path, "empty.run", "")
    with pytest.raises(FormatError, match="no rankings") as info:
        evaluate_files(qrels, [*paths, empty], ["AP"], batch_lines=1)
    assert Path(info.value.file).name == "empty.run"
    with pytest.raises(ParameterError, match="given twice"):
        evaluate_files(qrels, [paths[0], paths[1], tmp_path / ".." / tmp_path.name
                               / paths[0].name], ["AP"])
    bad_qrels = write(tmp_path, "bad.qrels", "1 0 d1-1 1\n1 0 d1-1 2\n")
    with pytest.raises(FormatError, match="judged twice"):     # qrels errors come first
        evaluate_files(bad_qrels, [paths[0], paths[0]], ["AP"])
    with pytest.raises(ParameterError, match="unknown measure"):
        evaluate_files(qrels, paths, ["Nope"])
    with pytest.raises(ParameterError, match="depth"):
        evaluate_files(qrels, paths, ["AP"], depth=0)


def test_run_names_are_those_of_the_frame_path(tmp_path):
    qrels, paths = synthetic(tmp_path, n_runs=3)                   # run ids sys0, sys1, sys2
    mixed = write(tmp_path, "mixed.run", "2 Q0 d2-1 1 3.0 later\n10 Q0 d10-1 1 1.0 first\n"
                                         "10 Q0 d10-2 2 1.0 tie\n")
    paths = [*paths, mixed]
    want = run_names(paths, [read_run(p) for p in paths])
    assert evaluate_files(qrels, paths, ["AP"], batch_lines=1).runs == want
    assert want[-1] == "tie"             # topic "10" < "2"; among equal scores, doc desc
    assert first_run_id(read_run_table(mixed)) == "tie"


def test_ranking_from_file_order_equals_the_sorted_frames(tmp_path):
    """Tables in file order (topics 1, 2, ..., 10 and ties unsorted; a run whose topics are
    interleaved) rank exactly as read_run's Arrow-sorted frames."""
    qrels, paths = synthetic(tmp_path, n_runs=3)
    lines = paths[0].read_text().splitlines()
    rng = np.random.default_rng(1)
    shuffled = write(tmp_path, "shuffled.run", "\n".join(rng.permutation(lines)) + "\n")
    q = read_qrels(qrels)
    for path in [*paths, shuffled]:
        for depth in (None, 5):
            a = ranked_lists(read_run(path), q, depth=depth, docs=True)
            b = ranked_lists(read_run_table(path), q, depth=depth, docs=True)
            for field in ("relevance", "judged", "lengths", "doc_ids", "query_ids",
                          "recall_base", "nonrelevant_base", "ideal"):
                np.testing.assert_array_equal(getattr(a, field), getattr(b, field), field)


def test_ranking_by_stretches_equals_ranking_by_sort(tmp_path, monkeypatch):
    """Runs written topic by topic are ranked stretch by stretch; every other layout by a
    sort.  Both give the same lists, whatever the layout: topics in file order or
    interleaved, a topic in two stretches, unsorted or tied scores, topics without qrels,
    a cut-off, several runs ranked together, empty frames among them."""
    qrels, paths = synthetic(tmp_path, n_runs=3)
    lines = paths[0].read_text().splitlines()
    rng = np.random.default_rng(5)
    split = lines[:40] + lines[200:260] + lines[40:200] + lines[260:]     # topic 1 twice
    unsorted = [line for t in range(1, 13) for line in
                rng.permutation([x for x in lines if x.split()[0] == str(t)])]
    tables = [read_run_table(p) for p in paths] + [
        read_run_table(write(tmp_path, name, "\n".join(text) + "\n")) for name, text in
        (("split", split), ("unsorted", unsorted), ("shuffled", rng.permutation(lines)),
         ("one", lines[:1]))]
    tables.insert(2, tables[0].slice(0, 0))
    q = read_qrels(qrels)
    names = [f"r{i}" for i in range(len(tables))]
    for depth in (None, 3):
        fast = ranked_lists(dict(zip(names, tables, strict=True)), q, depth=depth, docs=True)
        with monkeypatch.context() as m:
            m.setattr(lists_module, "_stretch_starts", lambda *a: None)
            slow = ranked_lists(dict(zip(names, tables, strict=True)), q, depth=depth,
                                docs=True)
        for field in ("run_ids", "query_ids", "relevance", "judged", "lengths", "doc_ids"):
            np.testing.assert_array_equal(getattr(fast, field), getattr(slow, field), field)
        for i, table in enumerate(tables):                      # and one run at a time
            alone = ranked_lists(table, q, depth=depth, docs=True)
            rows = fast.run_ids == names[i]
            w = alone.relevance.shape[1]
            np.testing.assert_array_equal(fast.relevance[rows][:, :w], alone.relevance)
            np.testing.assert_array_equal(fast.doc_ids[rows][:, :w], alone.doc_ids)


def _same_means(got, want) -> None:
    """Means equal to pandas': bit for bit with pandas 3, to the last bit with pandas 2.2
    (whose grouped mean sums in another order)."""
    import pandas as pd

    if int(pd.__version__.split(".")[0]) >= 3:
        np.testing.assert_array_equal(got, want)
    else:
        np.testing.assert_allclose(got, want, rtol=1e-15, atol=0)


def test_means_equal_pandas_bit_for_bit():
    rng = np.random.default_rng(3)
    for trial in range(30):
        counts = rng.integers(1, 300, size=rng.integers(1, 6))
        run = np.repeat(np.arange(counts.size), counts)
        values = rng.random((3, run.size)) ** rng.integers(1, 6)
        if trial % 10 == 0:
            values[1, ::7] = np.nan                   # pandas skips NaN: the fallback
        ev = Evaluation([f"r{i}" for i in range(counts.size)], run,
                        np.asarray([str(t) for t in range(run.size)], dtype=object),
                        ["A", "B", "C"], values)
        want = aggregate(ev.to_frame())["value"].to_numpy().reshape(counts.size, 3).T
        _same_means(ev.means(), want)


def test_arrow_numpy_conversions_without_pandas():
    code = """
import sys, numpy as np, pyarrow as pa, pyarrow.compute as pc
from bayeschain.io.arrow import from_numpy, to_numpy
a = from_numpy(np.arange(10, dtype=np.int64))
s = pc.cast(a, pa.string())
idx = pc.index_in(s.slice(3), value_set=s.slice(0, 6))
assert to_numpy(idx, fill=-1).tolist() == [3, 4, 5, -1, -1, -1, -1]
assert to_numpy(pc.greater(a.slice(2), a.slice(1, 8))).all()
assert to_numpy(pc.cast(a, pa.float64()).slice(8)).tolist() == [8.0, 9.0]
print("pandas" in sys.modules)
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "False"
    chunked = pa.chunked_array([[1, None, 3], [4]], pa.int32())
    assert to_numpy(chunked, fill=0).tolist() == [1, 0, 3, 4]
    with pytest.raises(ValueError, match="nulls"):
        to_numpy(chunked)
    assert to_numpy(pa.chunked_array([], pa.bool_())).dtype == bool
    assert to_numpy(from_numpy(np.array([0.5, 2.0]))).tolist() == [0.5, 2.0]


HEAVY = ("pandas", "scipy", "numba", "xarray", "duckdb", "dask", "matplotlib", "pymc",
         "pyarrow.compute", "numpy.ma")


def test_eval_imports_nothing_it_does_not_use(tmp_path):
    """Text output of regular (single-separator) files: no pandas, SciPy, Numba... and
    neither pyarrow.compute's wrappers nor numpy.ma (20 and 10 ms to import), beyond what
    NumPy and Arrow load themselves (NumPy 1.x imports numpy.ma)."""
    qrels, paths = synthetic(tmp_path, n_runs=3)
    own = subprocess.run([sys.executable, "-c", "import sys, numpy, pyarrow; "
                          f"print([m for m in {HEAVY!r} if m in sys.modules])"],
                         capture_output=True, text=True, check=True).stdout.strip()
    code = ("import sys; from bayeschain.cli import main; "
            f"main(['eval', {str(qrels)!r}, *{[str(p) for p in paths]!r}, '-q']); "
            f"print([m for m in {HEAVY!r} if m in sys.modules], file=sys.stderr)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stderr.strip() == own
    assert out.stdout.startswith("runid")


def test_memory_mapped_reads_equal_copied_reads(tmp_path):
    """Plain files are memory-mapped; gzip, a byte-order mark, tiny and odd files are read
    as before; the tables are the same either way."""
    import gzip

    from bayeschain.io.arrow import map_bytes, read_bytes

    qrels, paths = synthetic(tmp_path, n_runs=1)
    text = paths[0].read_bytes()
    crlf = write(tmp_path, "crlf.run", text.decode().replace("\n", "\r\n"))
    bom = tmp_path / "bom.run"
    bom.write_bytes(b"\xef\xbb\xbf" + text)
    gz = tmp_path / "run.gz"
    gz.write_bytes(gzip.compress(text))
    tiny = write(tmp_path, "tiny.run", "1\n")
    assert not isinstance(map_bytes(paths[0]), bytes)
    for path in (crlf, bom, gz, tiny):
        assert bytes(map_bytes(path)) == read_bytes(path)
    want = read_run_table(paths[0])
    for path in (crlf, bom, gz):
        assert read_run_table(path).equals(want)
    with pytest.raises(FormatError, match="expected 6 fields"):
        read_run_table(tiny)
    with pytest.raises(FormatError, match="directory"):
        read_run_table(tmp_path)


def test_several_files_read_together_report_the_first_bad_one(tmp_path):
    from bayeschain.io.trec import read_run_tables

    _, paths = synthetic(tmp_path, n_runs=2)
    bad1 = write(tmp_path, "bad1.run", "1 Q0 a 1 1.0 r\n1 Q0 b 2 x r\n")
    bad2 = write(tmp_path, "bad2.run", "1 Q0 a 1 1.0 r\n1 Q0 b 2\n")
    with pytest.raises(FormatError) as info:
        read_run_tables([paths[0], bad1, paths[1], bad2])
    assert Path(info.value.file).name == "bad1.run" and info.value.line == 2
    tables = read_run_tables(paths)
    assert all(t.equals(read_run_table(p)) for t, p in zip(tables, paths, strict=True))


@pytest.mark.parametrize("grades", [[0, 1, 2, 3], [-2, 0, 1, 32767], [0, 1, 40000],
                                    [0.5, 1, 2]])
def test_grade_tables_of_every_kind_look_up_alike(grades, monkeypatch):
    """Whole grades below 2^15 are kept as int16, others as floats, a large qrels as
    sorted keys: the grades and judged flags are the same."""
    import pandas as pd

    rng = np.random.default_rng(0)
    qrels = pd.DataFrame({"query_id": [str(t) for t in range(3) for _ in range(8)],
                          "doc_id": [f"d{d}" for _ in range(3) for d in range(8)],
                          "relevance": rng.choice(grades, size=24)})
    run = pd.DataFrame({"query_id": [str(t) for t in range(3) for _ in range(12)],
                        "doc_id": [f"d{d}" for _ in range(3) for d in range(12)],
                        "score": np.tile(np.arange(12, 0, -1.0), 3), "run_id": "r"})
    dense = ranked_lists(run, qrels)
    monkeypatch.setattr(lists_module, "_DENSE_LOOKUP_LIMIT", 0)
    sparse = ranked_lists(run, qrels)
    np.testing.assert_array_equal(dense.relevance, sparse.relevance)
    np.testing.assert_array_equal(dense.judged, sparse.judged)
    assert dense.judged[:, :8].all() and not dense.judged[:, 8:].any()
    want = qrels["relevance"].to_numpy(dtype=float).reshape(3, 8)
    np.testing.assert_array_equal(dense.relevance[:, :8], want)


@pytest.mark.parametrize("options", [{}, {"complete": True, "depth": 9}, {"level": 2}])
def test_evaluate_runs_in_chunks_equals_one_matrix(tmp_path, monkeypatch, options):
    """evaluate_runs ranks and evaluates a chunk of runs at a time on matrices as wide as
    the longest list: the values are those of one matrix of all runs, bit for bit, for
    measures that sum over ranks too (graded RBP, DCG without a cut-off, finite RBP)."""
    from bayeschain.evaluation import evaluate_lists
    from bayeschain.io import batches

    qrels, paths = synthetic(tmp_path, n_runs=7, depth=200)
    measures = [*MEASURES, "RBP(p=0.95, gains='graded')", "DCG", "RBP(p=0.9, finite=True)"]
    frames = [read_run(p) for p in paths]
    runs = dict(zip(run_names(paths, frames), frames, strict=True))
    q = read_qrels(qrels)
    want = evaluate_lists(measures, ranked_lists(runs, q, **options))
    monkeypatch.setattr(batches, "RANK_CHUNK_LINES", 500)
    got = evaluate_runs(q, runs, measures, **options)
    assert got.equals(want)


@pytest.mark.parametrize(("reader", "text"), [
    (read_qrels, b"301 \x80 D1 0\n301 0 D2 1\n"),
    (read_run, b"301 Q0 D1 1 2.0 r\n301 \xff D2 2 1.0 r\n"),
    (read_run_table, b"301 Q0 D1 1 2.0 r\n301 \xff D2 2 1.0 r\n"),
])
def test_bytes_that_are_not_utf8_in_a_skipped_column_are_refused(tmp_path, reader, text):
    """Arrow's reader does not look at the columns it skips; the careful parser does and
    names the line, as for any other column (fuzzing found the difference)."""
    path = tmp_path / "f"
    path.write_bytes(text)
    with pytest.raises(FormatError, match="not UTF-8") as info:
        reader(path)
    assert info.value.line == (1 if b"\x80" in text else 2)
    path.write_bytes(text.replace(b"\x80", "é".encode()).replace(b"\xff", "é".encode()))
    assert len(reader(path)) == 2                      # UTF-8 beyond ASCII is fine
