"""TREC readers: the quirks of real files, trec_eval's ranking, clear errors."""

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from bayeschain.errors import FormatError
from bayeschain.io import ranked_lists, read_qrels, read_run
from bayeschain.io.write import atomic_write_text

DATA = Path(__file__).resolve().parents[2] / "data" / "trec_eval"


def write(tmp_path, name, text):
    p = tmp_path / name
    p.write_bytes(text.encode())
    return p


def test_quirky_run_file(tmp_path):
    p = write(tmp_path, "run", "301\tQ0\tD1\t1\t  2.5\tR\n"          # tab + leading spaces
                              "301   Q0  D#2  2   2.5 R extra junk\n"  # runs of spaces, extra
                              "# a comment line\n"
                              "302 Q0 D3 1 1e-3 R")                    # no final newline
    run = read_run(p)
    assert list(run["doc_id"]) == ["D1", "D#2", "D3"]
    assert run["score"].tolist() == [2.5, 2.5, 0.001]


def test_qrels_with_comments_and_hash_in_ids(tmp_path):
    p = write(tmp_path, "qrels", "# header\n1 0 CR#93E-1860 1\n1 0 D2 -2\n2 Q0 D3 3")
    q = read_qrels(p)
    assert q["doc_id"].tolist() == ["CR#93E-1860", "D2", "D3"]
    assert q["relevance"].tolist() == [1, -2, 3]


@pytest.mark.parametrize(("reader", "text", "line", "message"), [
    (read_qrels, "1 0 D1 1\n1 0 D2\n", 2, "expected 4 fields"),
    (read_qrels, "1 0 D1 1\n1 0 D2 high\n", 2, "relevance must be an integer"),
    (read_qrels, "1 0 D1 1 extra\n", 1, "expected 4 fields"),
    (read_run, "1 Q0 D1 1 0.5 R\n1 Q0 D2 2 abc R\n", 2, "score must be a number"),
    (read_run, "1 Q0 D1 1 0.5\n", 1, "expected 6 fields"),
    (read_run, "1 Q0 D1 1 nan R\n", 1, "finite"),
    (read_run, "1 Q0 D1 1 0.5 R\n1 Q0 D2 2 0.4 R\n1 Q0 D1 3 0.3 R\n", 3, "appears twice"),
])
def test_malformed_lines_name_file_and_line(tmp_path, reader, text, line, message):
    p = write(tmp_path, "f.txt", text)
    with pytest.raises(FormatError, match=message) as info:
        reader(p)
    assert info.value.line == line and info.value.file == str(p)
    assert str(info.value).startswith(f"{p}:{line}: ")


def test_skip_mode_counts(tmp_path):
    p = write(tmp_path, "run", "1 Q0 D1 1 0.5 R\n1 Q0 D2 2 abc R\n1 Q0 D1 3 0.3 R\n")
    run = read_run(p, errors="skip")
    assert run["doc_id"].tolist() == ["D1"] and run.attrs["skipped"] == 2


def test_not_utf8_and_directory(tmp_path):
    p = tmp_path / "bin"
    p.write_bytes(b"1 0 D\xff 1\n1 0")
    with pytest.raises(FormatError, match="UTF-8"):
        read_qrels(p)
    with pytest.raises(FormatError, match="directory"):
        read_run(tmp_path)


def test_ranking_follows_trec_eval(tmp_path):
    """Score descending, ties by doc id descending; the rank column is ignored."""
    run = read_run(write(tmp_path, "run", "1 Q0 A 1 1.0 R\n1 Q0 C 2 2.0 R\n1 Q0 B 3 2.0 R\n"
                                          "1 Q0 D 4 3.0 R\n9 Q0 X 1 1.0 R\n"))
    qrels = read_qrels(write(tmp_path, "qrels", "1 0 A 1\n1 0 B 2\n1 0 C 3\n1 0 D 0\n1 0 E 4\n"))
    lists = ranked_lists(run, qrels)
    assert lists.query_ids.tolist() == ["1"]            # topic 9 has no qrels: not evaluated
    np.testing.assert_array_equal(lists.relevance[0], [0, 3, 2, 1])   # D, C, B, A
    assert lists.recall_base.tolist() == [4]
    np.testing.assert_array_equal(lists.ideal[0], [4, 3, 2, 1])


def test_complete_and_depth(tmp_path):
    run = read_run(write(tmp_path, "run", "1 Q0 A 1 3 R\n1 Q0 B 2 2 R\n1 Q0 C 3 1 R\n"))
    qrels = read_qrels(write(tmp_path, "qrels", "1 0 C 1\n2 0 Z 1\n"))
    lists = ranked_lists(run, qrels, complete=True, depth=2)
    assert lists.query_ids.tolist() == ["1", "2"]
    assert lists.lengths.tolist() == [2, 0]
    np.testing.assert_array_equal(lists.relevance, [[0, 0], [0, 0]])


def test_many_runs_at_once_equal_one_at_a_time(tmp_path):
    rng = np.random.default_rng(0)
    qrels = read_qrels(write(tmp_path, "q", "".join(f"{t} 0 D{d} {rng.integers(0, 3)}\n"
                                                    for t in range(3) for d in range(20))))
    runs = {}
    for r in range(3):
        lines = "".join(f"{t} Q0 D{d} 0 {rng.integers(0, 5)} R{r}\n"
                        for t in range(3) for d in rng.permutation(25)[:15])
        runs[f"R{r}"] = read_run(write(tmp_path, f"r{r}", lines))
    together = ranked_lists(runs, qrels)
    for i, name in enumerate(runs):
        alone = ranked_lists(runs[name], qrels)
        rows = together.run_ids == name
        np.testing.assert_array_equal(together.relevance[rows][:, :alone.relevance.shape[1]],
                                      alone.relevance)
        assert i == list(runs).index(name)


def test_atomic_write_refuses_to_overwrite(tmp_path):
    target = tmp_path / "out.txt"
    atomic_write_text(target, "one")
    with pytest.raises(Exception, match="exists"):
        atomic_write_text(target, "two")
    assert target.read_text() == "one"
    atomic_write_text(target, "two", force=True)
    assert target.read_text() == "two"
    with pytest.raises(Exception, match="input file"):
        atomic_write_text(target, "x", force=True, protected=[target])
    assert not list(tmp_path.glob(".*tmp"))


def test_outputs_are_atomic_respect_the_umask_and_never_overwrite(tmp_path):
    """atomic_output: the one writer. A failed write leaves nothing; a new file gets the
    umask's permissions (not mkstemp's 0600); without force an existing file, or one that
    appears while writing, is never replaced."""
    import os
    import stat

    from bayeschain.errors import BayeschainError
    from bayeschain.io.write import atomic_output

    target = tmp_path / "out.csv"
    with pytest.raises(RuntimeError), atomic_output(target) as tmp:
        tmp.write_text("partial")
        raise RuntimeError("interrupted")
    assert list(tmp_path.iterdir()) == []
    old = os.umask(0o022)
    try:
        with atomic_output(target) as tmp:
            tmp.write_text("a")
    finally:
        os.umask(old)
    assert target.read_text() == "a"
    assert stat.S_IMODE(target.stat().st_mode) == 0o644
    with pytest.raises(BayeschainError, match="exists"):
        with atomic_output(target) as tmp:
            tmp.write_text("b")
    other = tmp_path / "race.csv"
    with pytest.raises(BayeschainError, match="appeared while writing"):
        with atomic_output(other) as tmp:
            tmp.write_text("mine")
            other.write_text("theirs")                  # another run got there first
    assert other.read_text() == "theirs"
    with atomic_output(target, force=True) as tmp:
        tmp.write_text("c")
    assert target.read_text() == "c"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.csv", "race.csv"]


# --- issue 16: the readers' defects -------------------------------------------------------

NULLS = ["nan", "NaN", "NA", "N/A", "null", "NULL", "#N/A"]
SEPARATORS = {"space": " ", "tab": "\t", "double space": "  "}


@pytest.mark.parametrize("sep", SEPARATORS.values(), ids=SEPARATORS.keys())
@pytest.mark.parametrize("token", [*NULLS, "inf", "-Infinity", "1e400"])
def test_null_tokens_in_run_scores(tmp_path, token, sep):
    """Arrow's default null spellings made the document drop to the bottom (single space or
    tab) while the double-space file was refused: every layout refuses, naming the line."""
    fields = ["1", "Q0", "B", "2", token, "R"]
    p = write(tmp_path, "run", sep.join(["1", "Q0", "A", "1", "2.0", "R"]) + "\n"
              + sep.join(fields) + "\n")
    with pytest.raises(FormatError, match=r"score must be (finite|a number)") as info:
        read_run(p)
    assert (info.value.file, info.value.line) == (str(p), 2)
    assert token in str(info.value)


@pytest.mark.parametrize("sep", SEPARATORS.values(), ids=SEPARATORS.keys())
@pytest.mark.parametrize("token", NULLS)
def test_null_tokens_in_qrels_grades(tmp_path, token, sep):
    """A null spelling as a grade gave NaN topic scores; now a FormatError naming the line."""
    p = write(tmp_path, "qrels", sep.join(["1", "0", "A", "1"]) + "\n"
              + sep.join(["1", "0", "B", token]) + "\n")
    with pytest.raises(FormatError, match="relevance must be an integer") as info:
        read_qrels(p)
    assert (info.value.file, info.value.line) == (str(p), 2)


@pytest.mark.parametrize("sep", SEPARATORS.values(), ids=SEPARATORS.keys())
@pytest.mark.parametrize(("reader", "fields", "message"), [
    (read_qrels, ["1", "0", "B", "1_000"], "relevance must be an integer, found '1_000'"),
    (read_qrels, ["1", "0", "B", "0x10"], "relevance must be an integer"),  # Arrow: 16
    (read_qrels, ["1", "0", "B", "1e5"], "relevance must be an integer"),   # pandas: 100000
    (read_qrels, ["1", "0", "B", "1.0"], "relevance must be an integer"),
    (read_qrels, ["1", "0", "B", "\u0661"], "relevance must be an integer"),  # Arabic one
    (read_run, ["1", "Q0", "B", "2", "1_000", "R"], "score must be a number, found '1_000'"),
    (read_run, ["1", "Q0", "B", "2", "0x1p3", "R"], "score must be a number"),
])
def test_underscores_and_other_spellings_are_refused(tmp_path, sep, reader,
                                                                fields, message):
    """Python's int/float read ``1_000`` as 1000 where trec_eval's atol/atof read 1: such
    fields are refused (documented in bayeschain.io.trec), on every parser alike."""
    first = ["1", "0", "A", "1"] if reader is read_qrels else ["1", "Q0", "A", "1", "2", "R"]
    p = write(tmp_path, "f", sep.join(first) + "\n" + sep.join(fields) + "\n")
    with pytest.raises(FormatError, match=message) as info:
        reader(p)
    assert info.value.line == 2


@pytest.mark.parametrize("sep", SEPARATORS.values(), ids=SEPARATORS.keys())
def test_plain_signs_and_forms_read_alike(tmp_path, sep):
    """What every parser accepts reads the same whatever the separators: ``+1`` and ``-0``
    grades, ``1.``, ``.5``, ``1E+2`` scores."""
    q = read_qrels(write(tmp_path, "q", sep.join(["1", "0", "A", "+1"]) + "\n"
                         + sep.join(["1", "0", "B", "-0"]) + "\n"))
    assert q["relevance"].tolist() == [1, 0]
    r = read_run(write(tmp_path, "r", "".join(sep.join(["1", "Q0", d, "1", s, "R"]) + "\n"
                                              for d, s in [("A", "1."), ("B", ".5"),
                                                           ("C", "1E+2")])))
    assert r["score"].tolist() == [100.0, 1.0, 0.5]


def test_issue16_qrels_line_with_one_field_too_many_is_not_shifted(tmp_path):
    """pandas turned the first column into an index when every line had a 5th field, so
    ``1 0 D1 1 2`` was read as topic '0', document '1', grade 2."""
    p = write(tmp_path, "q", "1  0 D1 1 2\n1  0 D2 0 3\n")
    with pytest.raises(FormatError, match="expected 4 fields") as info:
        read_qrels(p)
    assert info.value.line == 1
    run = read_run(write(tmp_path, "r", "1  Q0 D1 1 0.5 R x\n1  Q0 D2 2 0.4 R y\n"))
    assert run["query_id"].tolist() == ["1", "1"] and run["doc_id"].tolist() == ["D1", "D2"]


def test_issue16_fields_are_split_as_trec_eval_splits_them(tmp_path):
    """C's isspace separates fields (vertical tab, form feed too); a no-break space does
    not (Python's str.split split on it)."""
    q = read_qrels(write(tmp_path, "q", "1\x0b0\x0cA 1\n1 0 B\u00a0x 2\n"))
    assert q["doc_id"].tolist() == ["A", "B\u00a0x"]


def gz(path, data: bytes):
    import gzip

    path.write_bytes(gzip.compress(data))
    return path


def test_truncated_gzip_is_a_format_error(tmp_path):
    import gzip

    for name, reader in (("qrels.test", read_qrels), ("results.test", read_run)):
        data = gzip.compress((DATA / name).read_bytes())
        for cut in (1, 10, len(data) // 2, len(data) - 1):
            p = tmp_path / f"{name}.{cut}.gz"
            p.write_bytes(data[:cut])
            with pytest.raises(FormatError, match="truncated gzip file") as info:
                reader(p)
            assert info.value.file == str(p)
    p = tmp_path / "plain.gz"
    p.write_text("1 0 A 1\n")
    with pytest.raises(FormatError, match="not a gzip file"):
        read_qrels(p)


def test_gzip_files_that_need_the_careful_parser(tmp_path):
    """A comment line sends a file to the careful parser, which read the compressed bytes
    and called them 'not UTF-8'."""
    for name, reader in (("qrels.test", read_qrels), ("results.test", read_run)):
        text = b"# a comment\n" + (DATA / name).read_bytes()
        plain = tmp_path / name
        plain.write_bytes(text)
        packed = gz(tmp_path / f"{name}.gz", text)
        pd.testing.assert_frame_equal(reader(packed), reader(plain), check_like=True)
        pd.testing.assert_frame_equal(reader(packed), reader(DATA / name))
    bad = gz(tmp_path / "bad.gz", b"# c\n1 0 A 1\n1 0 B x\n")
    with pytest.raises(FormatError, match="relevance must be an integer") as info:
        read_qrels(bad)
    assert info.value.line == 3


def test_text_encodings(tmp_path):
    """Latin-1, UTF-16 and NUL bytes are FormatErrors naming the line; a UTF-8 byte-order
    mark is dropped."""
    p = tmp_path / "latin1"
    p.write_bytes("1 0 A 1\n1 0 caf\u00e9 1\n".encode("latin-1"))
    with pytest.raises(FormatError, match="not UTF-8") as info:
        read_qrels(p)
    assert info.value.line == 2
    p.write_bytes("1 0 A 1\n".encode("utf-16"))
    with pytest.raises(FormatError, match="UTF-8|NUL"):
        read_qrels(p)
    p.write_bytes("1 0 A 1\n1 0 B 1\n".encode("utf-16-le"))
    with pytest.raises(FormatError, match="NUL byte") as info:
        read_qrels(p)
    assert info.value.line == 1
    p.write_bytes(b"\xef\xbb\xbf1 0 A 1\n")
    assert read_qrels(p)["query_id"].tolist() == ["1"]


@pytest.mark.parametrize("sep", [" ", "  "])
def test_duplicate_judgements_are_refused(tmp_path, sep):
    """trec_eval 10 aborts on a document judged twice for a topic (form_res_rels.c:
    "duplicate docs"); keeping the last judgement silently was not what it does."""
    p = write(tmp_path, "q", sep.join("1 0 A 1".split()) + "\n1 0 B 0\n"
              + sep.join("1 0 A 2".split()) + "\n")
    with pytest.raises(FormatError, match=r"judged twice .*lines 1 and 3") as info:
        read_qrels(p)
    assert (info.value.file, info.value.line) == (str(p), 3)
    kept = read_qrels(p, errors="skip")
    assert kept["relevance"].tolist() == [1, 0]
    assert kept.attrs["duplicates"] == 1 and kept.attrs["skipped"] == 1
    assert read_qrels(write(tmp_path, "ok", "1 0 A 1\n2 0 A 1\n")).attrs["duplicates"] == 0


def test_same_run_file_twice_is_refused(tmp_path):
    """The same run file given twice was merged into one run (run_names fell back to the
    path, twice the same); now a ParameterError naming it."""
    from bayeschain.errors import ParameterError
    from bayeschain.io import read_runs
    from bayeschain.io.trec import run_names

    run = DATA / "results.test"
    with pytest.raises(ParameterError, match="given twice"):
        read_runs([run, run])
    with pytest.raises(ParameterError, match="given twice") as info:
        read_runs([run, run.parent / ".." / run.parent.name / run.name])
    assert info.value.file is not None
    frame = read_run(run)
    with pytest.raises(ParameterError, match="given twice"):
        run_names([str(run), str(run)], [frame, frame])
    copy = tmp_path / "results.test"
    copy.write_bytes(run.read_bytes())
    names = run_names([str(run), str(copy)], [frame, frame])
    assert len(set(names)) == 2              # a copy is another run: told apart by path


def test_frames_in_memory_get_the_same_checks():
    """ranked_lists kept the last of two judgements and turned NaN grades or scores into
    NaN topic scores when the frames did not come from the readers (ir_measures, the
    Python API)."""
    from bayeschain.errors import ParameterError

    qrels = pd.DataFrame({"query_id": ["1", "1"], "doc_id": ["a", "b"], "relevance": [1, 2]})
    run = pd.DataFrame({"query_id": ["1", "1"], "doc_id": ["a", "b"], "score": [1.0, 0.5],
                        "run_id": "R"})
    np.testing.assert_array_equal(ranked_lists(run, qrels).relevance, [[1, 2]])
    with pytest.raises(ParameterError, match="twice for topic '1'"):
        ranked_lists(run, qrels.assign(doc_id=["a", "a"]))
    with pytest.raises(ParameterError, match="grades must be finite"):
        ranked_lists(run, qrels.assign(relevance=[1.0, np.nan]))
    with pytest.raises(ParameterError, match="scores must be finite"):
        ranked_lists(run.assign(score=[1.0, np.inf]), qrels)


@pytest.mark.parametrize("text", [
    "301  Q0  D1  1  2.5  R\n301  Q0  D2  2  1.5  R\n",               # aligned by spaces
    "301  Q0  D1  1  2.5  R  x\n301  Q0  D2  2  1.5  R  y\n",         # one field too many
    "301  Q0  D1  1  2.5  R\n301  Q0  D2  2  1.5  R  y\n",            # widths differ
])
def test_reading_aligned_runs_neither_warns_nor_touches_warning_filters(tmp_path, text):
    """pandas warns when given column names of another length than the data; a filter
    installed by the reader would silence the user's own warnings and races in threads."""
    import warnings

    before = list(warnings.filters)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        run = read_run(write(tmp_path, "run", text))
        filters_inside = list(warnings.filters)
    assert caught == [] and filters_inside[1:] == before
    assert run["doc_id"].tolist() == ["D1", "D2"] and run["score"].tolist() == [2.5, 1.5]
