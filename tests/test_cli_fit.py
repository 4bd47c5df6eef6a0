"""``bayeschain fit`` on the bundled TREC Session log (conjugate), output safety."""

from pathlib import Path

import pytest

from bayeschain.cli import main
from bayeschain.inference import Posterior

LOG = Path(__file__).resolve().parents[1] / "data" / "trec_session_2013" / \
    "sessiontrack2013.xml.gz"


def test_fit_writes_a_posterior_and_refuses_to_overwrite(tmp_path, capsys):
    pytest.importorskip("h5netcdf")
    out = tmp_path / "post.nc"
    figs = tmp_path / "figs"
    assert main(["fit", str(LOG), "-o", str(out), "--draws", "200", "--quiet",
                 "--figures", str(figs)]) == 0
    assert (figs / "ppc_backward.png").stat().st_size > 5_000
    text = capsys.readouterr().out
    assert "transition[1, forward]" in text and "backward share" in text
    post = Posterior.load(out)
    assert post.attrs["spec_name"] == "rwbm-conjugate"
    assert main(["fit", str(LOG), "-o", str(out), "--quiet"]) == 2
    assert "exists" in capsys.readouterr().err
    assert main(["fit", str(LOG), "--spec", "nope", "--quiet"]) == 2
    assert "built-in specs" in capsys.readouterr().err
