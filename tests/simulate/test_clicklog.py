"""simulate_click_log against the walk's exact laws, computed with dense matrices by the
independent reference (tests/reference/walk_clicks.py), not by bayeschain."""

import numpy as np
from scipy import stats

from bayeschain.simulate import simulate_click_log

from ..reference.walk_clicks import _dense


def test_first_clicks_and_clickless_pages_follow_the_walk():
    """P(first click at j) = [M]_{1j} c_j with M = (I - diag(1 - c) P)^{-1}; the rest of the
    mass is the click-less page.  Chi-square over the 10 ranks + no click."""
    n = 10
    p = np.linspace(0.75, 0.55, n)
    q = np.full(n, 0.1)
    r = np.full(n, 0.05)
    c = np.linspace(0.45, 0.15, n)
    log = simulate_click_log(20_000, n_ranks=n, forward=p, backward=q, reformulate=r,
                             click=c, seed=3)
    f = p.copy()
    f[-1] = 0.0                                   # no forward move from the last rank
    b = q.copy()
    b[0] = 0.0
    _, _, M = _dense(f, b, r, 1 - f - b - r, c, n)
    first = M[0] * c
    expected = np.append(first, 1 - first.sum())
    ev = log.events
    pages = ev[ev["event"] == "query"][["session_id", "serp_id"]]
    clicks = ev[ev["event"] == "click"].sort_values(["serp_id", "seq"])
    first_rank = clicks.groupby("serp_id")["rank"].first()
    counts = np.bincount(first_rank.astype(int).to_numpy() - 1, minlength=n).astype(float)
    observed = np.append(counts, len(pages) - counts.sum())
    chi2 = np.sum((observed - expected * observed.sum()) ** 2 / (expected * observed.sum()))
    assert stats.chi2.sf(chi2, df=n) > 1e-3, (observed / observed.sum(), expected)
