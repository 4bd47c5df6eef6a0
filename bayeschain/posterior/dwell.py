r"""The dwell parameters scoring reads from a posterior: exponential holding rates per rank
(MPcont), and the dwell model's log mean per click (rank, query and document effects),
its family and its draws of dwell times.  The model they come from (its likelihood and
PyMC graph) is :mod:`bayeschain.inference.dwell.model`; this module holds no PyMC."""

from __future__ import annotations

import numpy as np

from ..errors import ParameterError
from .draws import draws_of


def holding_rates(posterior, ranks: int | None = None) -> np.ndarray:
    """Exponential dwell rates ``mu`` per rank, ``(draws, ranks)`` (MPcont)."""
    from ..browsing.base import extend_ranks

    if "holding_rate" not in posterior.posterior:
        raise ParameterError(f"the posterior (spec {posterior.metadata.spec_name!r}) has "
                             f"no holding rates; fit a spec with a [holding] section (e.g. "
                             f"'walk')")
    mu = draws_of(posterior, "holding_rate")
    return mu if ranks is None else extend_ranks(mu, ranks)


FAMILIES = ("exponential", "lognormal", "gamma", "weibull")


#: the posterior variables of the observation model
VARIABLES = ("holding_rate", "dwell_rank_log_mean", "dwell_last_shift", "dwell_last_share",
             "dwell_shape", "examination_rate", "writing_rate", "dwell_query_sd",
             "dwell_document_sd", "dwell_query_effect", "dwell_document_effect")


# ------------------------------------------------------------------ posterior side
def log_means(posterior, ranks: np.ndarray, queries=None, docs=None, *, seed=0) -> np.ndarray:
    """``eta = log mean dwell`` of documents at ``ranks`` (1-based, any shape ``S``) under
    every draw, ``(draws,) + S``: the rank effect, plus the query's and (query,
    document)'s effects when the posterior has them and ``queries`` / ``docs`` (same shape)
    are given.  A query or document the log never showed gets a new effect from its
    population ``Normal(0, tau)``, as the hierarchical model says: ``tau z`` with ``z`` a
    standard normal keyed on the (query, document) and the draw's index among all the
    posterior's draws (:func:`population_normals`), so that a score does not depend on
    which other lists are scored with it or on how the draws are blocked.  ``seed`` salts
    those normals (an int; a Generator gives one)."""
    import pandas as pd


    post = posterior.posterior
    rate = draws_of(posterior, "holding_rate")                      # (draws, R)
    n_draws, n_ranks = rate.shape
    r = np.clip(np.asarray(ranks, dtype=np.int64), 1, n_ranks) - 1
    eta = -np.log(rate)[:, r]
    if queries is None or "dwell_document_effect" not in post:
        return eta
    salt = int(seed.integers(2**62)) if isinstance(seed, np.random.Generator) else int(seed)
    draw = posterior.metadata.draw_offset + np.arange(n_draws)
    q = np.asarray(queries, dtype=object).astype(str)
    keys_d = np.char.add(np.char.add(q, "\x1f"), np.asarray(docs, dtype=object).astype(str))
    for name, keys, coord, sd in (("dwell_query_effect", q, "dwell_query", "dwell_query_sd"),
                                  ("dwell_document_effect", keys_d, "dwell_document",
                                   "dwell_document_sd")):
        effects = draws_of(posterior, name)                          # (draws, K)
        pos = pd.Index(post[coord].values.astype(str)).get_indexer(keys)   # -1: unseen
        hit = pos >= 0
        add = np.where(hit, effects[:, pos], 0.0)
        if not hit.all():
            unseen, slot = np.unique(keys[~hit], return_inverse=True)
            z = population_normals([f"{name}\x1f{k}" for k in unseen], draw, salt)
            add[:, ~hit] = (z * draws_of(posterior, sd)[:, None])[:, slot]
        eta = eta + add
    return eta


def click_log_means(posterior, clicks, *, seed=0) -> np.ndarray:
    """``(draws, clicks)``: the log mean dwell of each click of a
    :class:`~bayeschain.inference.dwell.data.DwellObservations` table: its rank, query and
    document (:func:`log_means`, which gives a rank's mixture over its share of sessions'
    last clicks), then the click's own kind of click: ``+ delta`` for a session's last
    click, ``+ 0`` for the others."""

    ranks = clicks["rank"].to_numpy()
    eta = log_means(posterior, ranks, clicks["query_id"].to_numpy(),
                    clicks["doc_id"].to_numpy(), seed=seed)
    if "dwell_last_shift" not in posterior.posterior:
        return eta
    delta = draws_of(posterior, "dwell_last_shift")[:, None]
    share = draws_of(posterior, "dwell_last_share")
    s = share[:, np.clip(ranks, 1, share.shape[1]) - 1]
    return eta - np.log((1 - s) + s * np.exp(delta)) + delta * clicks["last"].to_numpy(float)


def population_normals(keys, draws: np.ndarray, salt: int = 0) -> np.ndarray:
    """Standard normals ``(len(draws), len(keys))``, a fixed function of each key's text,
    the draw index and ``salt``: a SplitMix64 hash of (BLAKE2 of the key, draw, salt) gives
    a uniform in (0, 1), its normal quantile the value."""
    import hashlib

    from scipy.special import ndtri

    k = np.array([int.from_bytes(hashlib.blake2b(key.encode(), digest_size=8).digest(),
                                 "little") for key in keys], dtype=np.uint64)
    with np.errstate(over="ignore"):
        x = k[None, :] ^ (np.asarray(draws, dtype=np.uint64)[:, None]
                          * np.uint64(0x9E3779B97F4A7C15)) ^ np.uint64(salt % 2**64)
        for shift, mult in ((30, 0xBF58476D1CE4E5B9), (27, 0x94D049BB133111EB)):
            x = (x ^ (x >> np.uint64(shift))) * np.uint64(mult)
        x = x ^ (x >> np.uint64(31))
    u = ((x >> np.uint64(11)).astype(np.float64) + 0.5) / 2.0**53
    return ndtri(u)


def per_document(posterior) -> bool:
    """Whether the posterior has holding rates per (query, document)."""
    return "dwell_document_effect" in posterior.posterior


def document_rates(posterior, lists):
    """The rates ``rates(rows, cols) -> (draws, K)`` of the documents of ranked ``lists``
    (:class:`~bayeschain.io.lists.RankedLists` with ``doc_ids``) at those positions:
    ``1 / exp(eta)`` of :func:`log_means` (rank effect + query effect + document effect;
    queries and documents the log never showed get population draws keyed on the document
    and the draw, so the same document gets the same draws in every list and call)."""

    def rates(rows, cols):
        queries = lists.query_ids[rows].astype(str)
        docs = lists.doc_ids[rows, cols].astype(str)
        return np.exp(-log_means(posterior, cols + 1, queries, docs))

    return rates


def unseen_documents(posterior, lists, cutoff: int | None = None) -> tuple[int, int]:
    """``(unseen, relevant)``: how many relevant (list, rank) entries of ``lists`` (within
    the measure's ``cutoff``) hold a (query, document) the fitted log never showed (their
    holding rate is a draw from the population of their rank and query)."""
    depth = lists.lengths if cutoff is None else np.minimum(lists.lengths, cutoff)
    rows, cols = np.nonzero(lists.binary * (np.arange(lists.relevance.shape[1])
                                            < depth[:, None]))
    pairs = np.char.add(np.char.add(lists.query_ids[rows].astype(str), "\x1f"),
                        lists.doc_ids[rows, cols].astype(str))
    known = posterior.posterior["dwell_document"].values.astype(str)
    return int((~np.isin(pairs, known)).sum()), int(pairs.size)


def missing_rate(posterior, rate: str, kind: str, count: int) -> None:
    """Refuse to judge ``count`` observations of ``kind`` with a posterior fitted to a log
    that had none (it learned no ``rate``)."""
    if rate not in posterior.posterior:
        what = "gaps to the next click" if kind == "gap" else "gaps to the next query"
        raise ParameterError(f"this log has {count} {what}, but the log the posterior was "
                             f"fitted to had none: it learned no {rate.replace('_', ' ')} "
                             f"to judge them with")


def family_of(posterior) -> str:
    """The dwell family the posterior was fitted with (``exponential`` for posteriors of
    the per-rank sufficient statistics)."""
    return posterior.metadata.dwell_family or "exponential"


def sample_dwell(family: str, log_mean: np.ndarray, shape, rng) -> np.ndarray:
    """Dwell times with the given log means (``shape`` broadcasts), for predictive checks:
    draws of the same SciPy law the held-out likelihood uses (:func:`dwell_law`)."""
    return dwell_law(family, np.asarray(log_mean, dtype=float), shape).rvs(random_state=rng)


def dwell_law(family: str, eta, shape):
    from scipy import stats
    from scipy.special import gammaln

    mean = np.exp(eta)
    if family == "exponential":
        return stats.expon(scale=mean)
    if family == "lognormal":
        return stats.lognorm(shape, scale=np.exp(eta - shape**2 / 2))
    if family == "gamma":
        return stats.gamma(shape, scale=mean / shape)
    if family == "weibull":
        return stats.weibull_min(shape, scale=mean / np.exp(gammaln(1 + 1 / shape)))
    raise ParameterError(f"dwell family must be one of {', '.join(FAMILIES)}; got {family!r}")
