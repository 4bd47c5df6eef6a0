"""The path of a fit: ``bayeschain.fit(log)`` enters the dispatcher and the walk's fit once
each, and reads the log's click tables once for the fit and its checks."""

import sys
import warnings
from collections import Counter

import numpy as np
import pytest
import xarray as xr

import bayeschain.io.clickstats_pandas as clickstats_pandas
from bayeschain.inference import fit, predictive_walk_checks
from bayeschain.simulate import simulate_click_log


def _one_point_sampler(model, *, draws, chains, **_):
    """Every draw the prior's centre (the path, not the posterior, is under test)."""
    one = model.expand(model.initial_point(np.random.default_rng(0)))
    out = {k: np.broadcast_to(np.asarray(v), (chains, draws) + np.shape(v)).copy()
           for k, v in one.items()}
    return out, xr.Dataset({"diverging": (("chain", "draw"), np.zeros((chains, draws), bool))})


def _entries(run):
    """While ``run()`` runs: calls into each bayeschain module from another module, and
    calls of each (module, function) from anywhere (function calls only; module bodies,
    i.e. imports, excluded)."""
    seen = Counter()

    def profile(frame, event, arg):
        if event != "call" or frame.f_code.co_name == "<module>":
            return
        module = frame.f_globals.get("__name__", "")
        if not module.startswith("bayeschain"):
            return
        seen[module, frame.f_code.co_name] += 1
        caller = frame.f_back.f_globals.get("__name__", "") if frame.f_back else ""
        if module != caller:
            seen[module] += 1

    sys.setprofile(profile)
    try:
        run()
    finally:
        sys.setprofile(None)
    return seen


@pytest.mark.parametrize("spec", ["walk", "walk-reclick"])
def test_a_fit_and_its_checks_enter_each_step_once_and_read_the_log_once(spec):
    """Also for the walk that keeps the positions clicked so far: its checks read the
    pages its fit built."""
    log = simulate_click_log(200, seed=3)

    def run():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")          # one point: no convergence to speak of
            post = fit(log, spec, draws=20, chains=2, sampler=_one_point_sampler)
        predictive_walk_checks(post, log, max_draws=5, seed=0)

    seen = _entries(run)
    assert seen["bayeschain.inference.fit"] == 1
    assert seen["bayeschain.inference.walk.fit"] == 1
    assert seen[clickstats_pandas.__name__, "observations"] == 1          # one pass
    assert seen["bayeschain.inference.walk.data", "_page_data"] == 1      # pages built once
