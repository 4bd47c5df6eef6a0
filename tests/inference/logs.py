"""Small click logs written out event by event (test helpers)."""

import numpy as np
import xarray as xr

from bayeschain.inference import Posterior
from bayeschain.io.clicklog import ClickLog, make_events


def click_log(sessions, dwell=None):
    """One page per session (query 'q', documents d1..dN at their ranks); ``sessions``
    lists the clicked ranks.  ``dwell`` (same nesting) gives each click's dwell time,
    recorded as its end time; without it clicks are 10 s apart and the last is censored."""
    cols = ("session_id", "query_id", "serp_id", "event", "rank", "doc_id", "time",
            "end_time", "seq")
    rows = {c: [] for c in cols}
    seq = 0

    def add(*values):
        nonlocal seq
        for c, v in zip(cols, values + (seq,), strict=True):
            rows[c].append(v)
        seq += 1

    for s, clicks in enumerate(sessions):
        add(f"s{s}", "q", s, "query", None, None, 0.0, np.nan)
        t = 0.0
        for k, r in enumerate(clicks):
            gap = 10.0 if dwell is None else float(dwell[s][k])
            t += 1.0
            add(f"s{s}", "q", s, "click", r, f"d{r}", t,
                np.nan if dwell is None else t + gap)
            t += gap
    return ClickLog(make_events(rows))


def simulate_pages(rng, pages, theta, width, first=None):
    """Click sequences of the click-transition model: the first click on ``first`` (a
    pmf over ranks, default uniform), then after a click on rank i forward / backward /
    stop with ``theta[i]`` (rank 1's backward and rank ``width``'s forward become stop),
    landing uniformly on the deeper (higher) ranks."""
    first = np.full(width, 1 / width) if first is None else np.asarray(first)
    out = []
    for _ in range(pages):
        r = int(rng.choice(width, p=first)) + 1
        clicks = [r]
        while True:
            f, b = theta[r - 1][0], theta[r - 1][1]
            f = f if r < width else 0.0
            b = b if r > 1 else 0.0
            u = rng.random()
            if u < f:
                r = int(rng.integers(r + 1, width + 1))
            elif u < f + b:
                r = int(rng.integers(1, r))
            else:
                break
            clicks.append(r)
        out.append(clicks)
    return out


def transition_posterior(theta, draws=1, categories=("forward", "backward", "stop")):
    """A posterior whose every draw is ``theta`` (ranks, categories)."""
    t = np.broadcast_to(np.asarray(theta, float), (1, draws) + np.shape(theta))
    da = xr.DataArray(t, dims=("chain", "draw", "rank", "category"),
                      coords={"rank": np.arange(1, t.shape[2] + 1),
                              "category": list(categories)})
    return Posterior(xr.DataTree.from_dict({"posterior": xr.Dataset({"transition": da})}))
