"""``bayeschain score --stream``: runs scored a block of files at a time and appended to
the netCDF file as they come hold the same scores, names and printed lines as the runs
scored at once; the topics are the qrels' (a topic a run lacks has no score, NaN, as at
once, also in a block where no run has it)."""

import re
import shutil

import numpy as np
import pytest
import xarray as xr

from bayeschain.cli import main

from .test_compare import TREC


def test_streamed_scores_equal_the_scores_computed_at_once(tmp_path, capsys):
    from tests.faults.helpers import tiny_posterior

    pytest.importorskip("h5netcdf")
    post = tiny_posterior(tmp_path / "post.nc", draws=80)
    runs = []
    for k in range(5):                       # five runs, two (one block) without topic 303
        path = tmp_path / f"run{k}.test"
        lines = (TREC / "results.test").read_text().splitlines()
        lines = [re.sub(r"STANDARD$", f"R{k}", x) for x in lines if k not in (2, 3) or
                 x.split()[0] != "303"]
        rng = np.random.default_rng(k)
        order = rng.permutation(len(lines))   # another ranking: scores shuffled
        fields = [x.split() for x in lines]
        scores = [fields[i][4] for i in order]
        path.write_text("".join(" ".join(f[:4] + [s] + f[5:]) + "\n"
                                for f, s in zip(fields, scores, strict=True)))
        runs.append(str(path))
    base = ["score", str(TREC / "qrels.test"), *runs, "--posterior", str(post)]
    assert main([*base, "-o", str(tmp_path / "once.nc")]) == 0
    once_text = capsys.readouterr().out
    # two runs at a time: three blocks
    assert main([*base, "--stream", "--block", "2", "-o", str(tmp_path / "streamed.nc")]) == 0
    text = capsys.readouterr().out
    assert "scored 2 at a time" in text
    header = [x for x in once_text.splitlines() if x.startswith("PatH")]
    assert header and text.splitlines()[0].startswith(header[0] + "; 5 runs")
    lines = lambda t: sorted(x for x in t.splitlines() if x.startswith("  R"))  # noqa: E731
    assert lines(text) == lines(once_text) and len(lines(text)) == 5
    once = xr.open_dataarray(tmp_path / "once.nc", engine="h5netcdf").load()
    streamed = xr.open_dataarray(tmp_path / "streamed.nc", engine="h5netcdf").load()
    assert list(streamed["topic"].values) == ["301", "302", "303"]
    assert sorted(streamed["run"].values) == sorted(once["run"].values)
    got = streamed.transpose("chain", "draw", "run", "topic").sel(
        run=once["run"].values, topic=once["topic"].values)
    # the same scores; the last bits as BLAS blocks rows of another count
    np.testing.assert_allclose(got.values, once.values, rtol=1e-13, atol=0)
    missing = np.isnan(got.values).all(axis=(0, 1))
    assert missing.tolist() == [[False, False, r in ("R2", "R3")] for r in once["run"].values]
    assert np.isfinite(got.values[:, :, ~missing]).all()

    # a run id given twice: the names scoring at once gives, whatever the blocks
    shutil.copy(runs[0], tmp_path / "again.test")
    both = [*runs, str(tmp_path / "again.test")]
    assert main(["score", str(TREC / "qrels.test"), *both, "--posterior", str(post)]) == 0
    at_once = lines(capsys.readouterr().out)
    for block in ("1", "4"):
        assert main(["score", str(TREC / "qrels.test"), *both, "--posterior", str(post),
                     "--stream", "--block", block]) == 0
        assert lines(capsys.readouterr().out) == at_once
    assert any(x.startswith("  R0:again.test: ") for x in at_once)
    assert main(["score", str(TREC / "qrels.test"), runs[0], "--posterior", str(post),
                 "--block", "2"]) == 2
    assert "add --stream" in capsys.readouterr().err
