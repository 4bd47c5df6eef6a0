"""The posterior's vocabulary: what a fit writes uses its names and dims."""

import numpy as np

from bayeschain.inference import fit
from bayeschain.posterior import posterior_from_parameters
from bayeschain.posterior.vocabulary import CLASSES, DIMS, MOVES
from bayeschain.simulate import simulate_click_log


def _check(post):
    for name, da in post.posterior.data_vars.items():
        if name not in DIMS:
            continue
        dims = da.dims[2:]
        if name == "walk" and dims[:1] == ("relevance",):
            assert list(da["relevance"].values) == list(CLASSES)
            dims = dims[1:]
        assert da.dims[:2] == ("chain", "draw") and dims == DIMS[name], name
        if "move" in da.dims:
            assert tuple(da["move"].values) == MOVES


def test_fits_and_constructed_posteriors_use_the_vocabulary():
    rng = np.random.default_rng(0)
    walk = rng.dirichlet([5, 1, 1, 2], size=(6, 4))
    walk[:, 0, 1] = 0
    walk /= walk.sum(-1, keepdims=True)
    _check(posterior_from_parameters({"walk": walk, "click": rng.uniform(0.2, 0.4, (6, 4))}))
    log = simulate_click_log(300, seed=2)
    for spec in ("clicks-conjugate", "jumps-free"):
        _check(fit(log, spec, draws=20, chains=1))
