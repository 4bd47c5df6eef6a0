r"""Choosing a walk by PSIS-LOO, with one pointwise log-likelihood per page pattern.

**Pointwise log-likelihood.**  A page's log-likelihood under the walk is the sum of its
terms' log-probabilities (:class:`~bayeschain.inference.walk.data.PagePatterns`), so pages
with the same terms have the same value under every draw.  The fit keeps
``log_likelihood["pages"]`` ``(chain, draw, pattern)`` (ArviZ's ``log_likelihood``
group), the pages of each pattern (``constant_data["pattern_pages"]``) and the pattern
of each page (``constant_data["page_pattern"]``, by ``serp_id``): a log of millions of
pages with clicks per rank holds a few thousand patterns.

**How LOO treats the weighting.**  Leaving out one page of a pattern of ``k`` identical
pages gives the same importance ratios ``1 / p(y_u | theta_s)`` as leaving out any other
of them, so the Pareto-smoothed estimate (Vehtari, Gelman & Gabry, *Statistics and
Computing* 27, 2017) of each is the pattern's ``elpd_u``, and

.. math::  \widehat{elpd}_{loo} = \sum_u k_u \, elpd_u, \qquad
           SE = \sqrt{n \operatorname{Var}_{pages}(elpd_i)}

with the variance over the ``n`` pages (ArviZ's ``sqrt(n var)``, each pattern counted
``k_u`` times): exactly ArviZ's answer on the page-by-page log-likelihood, which is tested.
(The posterior itself was fitted to all ``k_u`` pages: LOO's approximation of leaving
one out is as good as for any page, and Pareto ``k`` reports where it is not.)
Differences between walks are paired page by page (``serp_id``), as ``az.compare`` pairs
observations.  ``az.loo(posterior.to_arviz())`` itself sees one observation per pattern
(unweighted): use :func:`page_loo` / :func:`compare_walks`, or expand the group with
``constant_data["page_pattern"]`` before handing it to ArviZ.  Draws are thinned to keep
at most :data:`LOG_LIKELIHOOD_VALUES` values.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from ...errors import ParameterError

if TYPE_CHECKING:
    import pandas as pd

#: at most this many pointwise values (draws x patterns) are kept in a posterior; beyond
#: it the draws are thinned evenly (the posterior's attr ``log_likelihood_draws`` says so)
LOG_LIKELIHOOD_VALUES = 20_000_000
#: Pareto k above which PSIS-LOO's estimate of a page is unreliable
PARETO_K_LIMIT = 0.7


def log_likelihood_groups(model, theta: np.ndarray) -> tuple[dict, dict]:
    """The ``log_likelihood`` and ``constant_data`` groups of a walk's posterior from the
    draws ``theta (chain, draw, ndim)`` of :class:`~bayeschain.inference.walk.model.
    WalkModel` ``model``, and their attrs."""
    import xarray as xr

    data = model.data
    patterns = data.patterns
    chains, draws = theta.shape[:2]
    step = max(1, -(-chains * draws * patterns.size // LOG_LIKELIHOOD_VALUES))
    kept = np.arange(0, draws, step)
    values = np.array([[model.pattern_log_likelihood(theta[c, d]) for d in kept]
                       for c in range(chains)])
    groups = {
        "log_likelihood": xr.Dataset({"pages": (("chain", "draw", "pattern"), values)},
                                     coords={"chain": np.arange(chains), "draw": kept}),
        "constant_data": xr.Dataset(
            {"pattern_pages": (("pattern",), patterns.pages),
             "page_pattern": (("page",), patterns.page_pattern)},
            coords={"serp_id": (("page",), data.page_ids)})}
    return groups, {"log_likelihood_draws": f"one draw in {step}" if step > 1 else "all"}


@dataclass(frozen=True)
class PageLoo:
    """PSIS-LOO of a walk's posterior over the pages of its log."""

    elpd: float                 # sum over pages of elpd_i
    se: float
    p_loo: float
    pages: int
    patterns: int
    high_k_pages: int           # pages whose Pareto k > PARETO_K_LIMIT
    serp_id: np.ndarray         # (P,)
    elpd_page: np.ndarray       # (P,) elpd_i of each page

    def as_dict(self) -> dict:
        return {"elpd_loo": self.elpd, "se": self.se, "p_loo": self.p_loo,
                "pages": self.pages, "patterns": self.patterns,
                "pareto_k_high": self.high_k_pages}


def _pointwise(result, name: str) -> np.ndarray:
    """A pointwise array of ArviZ's LOO result: ``elpd_i`` (ArviZ 1.x) or ``loo_i``
    (0.x), ``pareto_k``."""
    if name == "elpd_i":
        value = getattr(result, "elpd_i", None)
        if value is None:
            value = result["loo_i"]
    else:
        value = getattr(result, name)
    return np.asarray(value, dtype=float).ravel()


def page_loo(posterior) -> PageLoo:
    """PSIS-LOO (``az.loo``) over the pages of the log the walk was fitted to, from the
    posterior's pointwise log-likelihood per pattern (see the module docstring)."""
    import warnings

    import arviz as az
    import xarray as xr
    from scipy.special import logsumexp

    tree = posterior.tree
    if "log_likelihood" not in tree.children or "constant_data" not in tree.children:
        raise ParameterError("this posterior keeps no pointwise log-likelihood (refit the "
                             "walk with this release)")
    ll = tree["log_likelihood"].to_dataset()
    const = tree["constant_data"].to_dataset()
    weights = const["pattern_pages"].values.astype(float)
    page_pattern = const["page_pattern"].values
    sub = xr.DataTree.from_dict({"posterior": xr.Dataset(
        {"dummy": (("chain", "draw"), np.zeros(ll["pages"].shape[:2]))},
        coords={"chain": ll["chain"].values, "draw": ll["draw"].values}),
        "log_likelihood": ll})
    data = sub if int(az.__version__.split(".")[0]) >= 1 else az.InferenceData(
        posterior=sub["posterior"].to_dataset(), log_likelihood=ll)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")         # Pareto k warnings: counted below
        result = az.loo(data, pointwise=True)
    elpd_u = _pointwise(result, "elpd_i")
    k_u = _pointwise(result, "pareto_k")
    values = ll["pages"].values.reshape(-1, weights.size)
    lpd_u = logsumexp(values, axis=0) - np.log(values.shape[0])
    n = weights.sum()
    elpd = float(weights @ elpd_u)
    mean = elpd / n
    se = float(np.sqrt(weights @ (elpd_u - mean) ** 2))        # sqrt(n Var over pages)
    return PageLoo(elpd, se, float(weights @ (lpd_u - elpd_u)), int(n), int(weights.size),
                   int(weights[k_u > PARETO_K_LIMIT].sum()),
                   const["serp_id"].values, elpd_u[page_pattern])


def compare_walks(posteriors: dict) -> pd.DataFrame:
    """The walks ``{name: posterior}`` fitted to the same log, ranked by PSIS-LOO:
    ``elpd_loo, se, p_loo, elpd_diff, se_diff`` (to the best, paired over the pages they
    share by ``serp_id``), ``pages, patterns, pareto_k_high``."""
    import pandas as pd

    loos = {name: page_loo(post) for name, post in posteriors.items()}
    if not loos:
        raise ParameterError("no posterior to compare")
    order = sorted(loos, key=lambda k: -loos[k].elpd)
    best = loos[order[0]]
    best_page = pd.Series(best.elpd_page, index=best.serp_id)
    rows = []
    for name in order:
        loo = loos[name]
        mine = pd.Series(loo.elpd_page, index=loo.serp_id)
        shared = best_page.index.intersection(mine.index)
        if shared.size != best_page.size or shared.size != mine.size:
            raise ParameterError(f"{name!r} was fitted to other pages than {order[0]!r}: "
                                 f"LOO compares walks on the same log")
        diff = (best_page - mine.reindex(best_page.index)).to_numpy()
        rows.append({"model": name, **loo.as_dict(), "elpd_diff": float(diff.sum()),
                     "se_diff": float(np.sqrt(diff.size * diff.var()))})
    return pd.DataFrame(rows).set_index("model")

