"""NUTS (PyMC) against the exact conjugate posterior, and the pooled model's recovery."""

import warnings

import numpy as np
import pytest

from bayeschain.inference import fit, load_spec, parse_spec
from bayeschain.io import click_statistics
from bayeschain.simulate import simulate_click_log

pytest.importorskip("pymc")

SMALL = dict(n_ranks=5, forward=0.6, backward=0.15, reformulate=0.05, click=0.4,
             holding_rates=[0.05, 0.08, 0.1, 0.12, 0.15], examine_time=0.0, max_queries=20)


@pytest.fixture(scope="module")
def stats():
    return click_statistics(simulate_click_log(5_000, seed=21, **SMALL))


def small_spec(name, ranks=5):
    return parse_spec(load_spec(name).text.replace("ranks = 10", f"ranks = {ranks}"))


def test_nuts_agrees_with_the_conjugate_posterior(stats):
    """Posterior means within 0.1 posterior sd (Monte-Carlo error of 2 x 1000 NUTS draws
    is about sd / 40), for every transition probability and dwell rate; no divergences."""
    exact = fit(stats, small_spec("rwbm-conjugate"), draws=4000, chains=2)
    with warnings.catch_warnings():
        warnings.simplefilter("error")            # a diagnostics warning fails the test
        nuts = fit(stats, small_spec("rwbm-nuts"), draws=1000, chains=2)
    assert nuts.divergences() == 0
    for name in ("transition", "holding_rate"):
        a = exact.posterior[name]
        b = nuts.posterior[name]
        sd = a.std(("chain", "draw")).values
        gap = np.abs(a.mean(("chain", "draw")).values - b.mean(("chain", "draw")).values)
        mask = sd > 0                           # the structural zero has no spread
        if name == "transition":
            gap, sd, mask = gap.ravel(), sd.ravel(), mask.ravel()
            mask &= ~np.isclose(a.mean(("chain", "draw")).values.ravel(), 0)
        assert np.all(gap[mask] < 0.1 * sd[mask]), (name, (gap / np.where(sd > 0, sd, 1)).max())
