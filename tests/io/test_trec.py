"""TREC readers: the quirks of real files, trec_eval's ranking, clear errors."""

import numpy as np
import pytest

from bayeschain.errors import FormatError
from bayeschain.io import ranked_lists, read_qrels, read_run
from bayeschain.io.write import atomic_write_text


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
