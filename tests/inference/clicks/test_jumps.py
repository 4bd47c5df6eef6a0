"""Jump models for Markov-Precision chains: free rows (conjugate) and a learned ID decay."""

import numpy as np
import pandas as pd
import pytest

from bayeschain.inference import fit, load_spec
from bayeschain.inference.clicks.jumps import decay_matrix
from bayeschain.io.clickstats_tables import ClickStats
from bayeschain.io.clickstats_tables import canonical as _finish
from bayeschain.measures.markov import transition_matrix


def stats_from_moves(moves: np.ndarray) -> ClickStats:
    """Click statistics holding only click-to-click moves (ranks are 1-based)."""
    i, j = np.nonzero(moves)
    empty = pd.DataFrame
    return _finish(ClickStats(
        transitions=pd.DataFrame({"from_rank": i + 1, "to_rank": j + 1, "count": moves[i, j]}),
        last_clicks=empty({"rank": [], "outcome": [], "count": []}),
        first_clicks=empty({"rank": [], "count": []}),
        dwell=empty({c: [] for c in ("rank", "n", "sum", "sum_log", "sum_log2", "censored",
                                     "nonpositive")}),
        pages=empty({"outcome": [], "clicked": [], "count": []})))


def sample_moves(p: np.ndarray, per_row: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return np.stack([rng.multinomial(per_row, row) for row in p]).astype(float)


def test_unit_exponent_is_the_papers_id_model():
    np.testing.assert_allclose(decay_matrix("ID", 1.0, 7), transition_matrix(7, "GL_AD_ID"),
                               atol=1e-15)
    np.testing.assert_allclose(decay_matrix("LID", 1.0, 7), transition_matrix(7, "GL_AD_LID"),
                               atol=1e-15)


def test_free_rows_recover_the_matrix():
    truth = decay_matrix("LID", 1.7, 6)
    post = fit(stats_from_moves(sample_moves(truth, 4000, 1)),
               load_spec("jumps-free").with_keys("model", ranks=6),
               draws=2000, chains=1)
    jump = post.posterior["jump"]
    lo = jump.quantile(0.0005, dim=("chain", "draw")).values
    hi = jump.quantile(0.9995, dim=("chain", "draw")).values
    off = ~np.eye(6, dtype=bool)
    assert np.all((lo <= truth)[off] & (truth <= hi)[off])
    np.testing.assert_array_equal(jump.values[..., np.arange(6), np.arange(6)], 0.0)


@pytest.mark.filterwarnings("ignore:NUTS diagnostics")   # 500 draws: the recovery is tested
def test_decay_exponent_is_recovered_by_nuts():
    pytest.importorskip("pymc")
    truth = decay_matrix("ID", 1.3, 8)
    post = fit(stats_from_moves(sample_moves(truth, 300, 2)),
               load_spec("jumps-id").with_keys("model", ranks=8),
               draws=500, tune=500, chains=2)
    g = post.posterior["jump_exponent"]
    lo, hi = g.quantile([0.005, 0.995], dim=("chain", "draw")).values
    assert lo <= 1.3 <= hi and hi - lo < 0.6
    assert post.divergences() == 0


@pytest.mark.parametrize(("cpus", "chains", "cores"), [(8, 4, 4), (2, 4, 2), (1, 4, 1)])
def test_pymc_chains_run_side_by_side_on_the_cores_this_process_may_use(monkeypatch, cpus,
                                                                        chains, cores):
    """PyMC samples as many chains at once as the process may use cores (no cap at 2): the
    cores of its CPU affinity (``chains.jit.usable_cores``, whose affinity is tested in
    tests/chains/test_jit.py), not the machine's count, which ``taskset`` or a
    container's CPU set may lower."""
    pm = pytest.importorskip("pymc")
    asked = {}

    class Stop(Exception):
        pass

    def sample(**options):
        asked.update(options)
        raise Stop

    monkeypatch.setattr(pm, "sample", sample)
    monkeypatch.setattr("bayeschain.chains.jit.usable_cores", lambda: cpus)
    monkeypatch.setattr("os.cpu_count", lambda: 64)            # the machine's: not asked
    with pytest.raises(Stop):
        fit(stats_from_moves(sample_moves(decay_matrix("ID", 1.3, 4), 50, 1)),
            load_spec("jumps-id").with_keys("model", ranks=4), draws=10, tune=10, chains=chains)
    assert asked["chains"] == chains and asked["cores"] == cores


def test_pytensors_missing_blas_warning_does_not_reach_the_user(monkeypatch):
    """PyTensor installed by pip warns at its first compile in a process that it "could not
    link to a BLAS installation" (here raised where PyTensor raises it, inside PyMC's
    sampling): these models' products gain nothing from BLAS, and a fit stays quiet."""
    import warnings

    pm = pytest.importorskip("pymc")

    class Stop(Exception):
        pass

    def sample(**options):
        warnings.warn("PyTensor could not link to a BLAS installation. Operations that "
                      "might benefit from BLAS will be severely degraded.", UserWarning,
                      stacklevel=2)
        warnings.warn("another warning passes", UserWarning, stacklevel=2)
        raise Stop

    monkeypatch.setattr(pm, "sample", sample)
    with warnings.catch_warnings(record=True) as caught, pytest.raises(Stop):
        warnings.simplefilter("always")
        fit(stats_from_moves(sample_moves(decay_matrix("ID", 1.3, 4), 50, 1)),
            load_spec("jumps-id").with_keys("model", ranks=4), draws=10, tune=10)
    assert [str(w.message) for w in caught] == ["another warning passes"]
