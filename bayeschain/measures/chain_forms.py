r"""The classical measures computed through P@H chains (Ferrante & Ferro, ICTIR 2020, Sec. 6).

These are the "measures as chain instances" of the paper; they run the exact chain solvers
and are held against the direct formulas of :mod:`bayeschain.measures.classical` in the
tests.  Relevance rows are ``(..., D)``, padded with zeros.

* Precision ``P@k``: DFBM on the first ``k`` ranks, ``E[T(H)/H]`` with ``H = k``   (Sec. 6.1)
* AP: the dynamic ``ap`` chain, ``E[T(H)/H] * R_N / RB``                        (Sec. 6.2)
* RBP(p): SFBM with constant ``p``, ``E[T(H)] / K(p, inf)``; RBP(N): ``E[T]/E[H]`` (Sec. 6.3)
* DCG@k: the ``dcg`` walk with ``P(H >= i) = discount(i)``, ``E[T(H)]`` (``f = 1``)  (App. D)
* ERR@k: the ``err`` walk, ``E[1/H]`` (reward 1 at the first visit only), minus the mass
  the paper's ``R_N = 1`` convention adds at rank N: ``P(H = N) (1 - R_N) / N``   (Sec. 6.5)
"""

from __future__ import annotations

import numpy as np

from .. import chains
from ..browsing import build_chain, err_satisfaction, log_discount
from ..browsing.dynamic import top_grade
from .classical import cut


def precision_via_chain(binary, k: int) -> np.ndarray:
    r = cut(np.asarray(binary, dtype=float), k)
    return chains.expected_ratio(build_chain("dfbm", r.shape[-1]), r)


def average_precision_via_chain(binary, recall_base=None) -> np.ndarray:
    r = (np.asarray(binary, dtype=float) > 0).astype(float)
    retrieved = r.sum(axis=-1)
    value = chains.expected_ratio(build_chain("ap", r.shape[-1], r), r)
    rb = retrieved if recall_base is None else np.asarray(recall_base, dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(rb > 0, value * retrieved / np.where(rb > 0, rb, 1), 0.0)


def rbp_via_chain(gains, p) -> np.ndarray:
    g = np.asarray(gains, dtype=float)
    return chains.expected_reward(build_chain("sfbm", g.shape[-1], p=p), g) * (1 - np.asarray(p))


def rbp_finite_via_chain(gains, p) -> np.ndarray:
    g = np.asarray(gains, dtype=float)
    chain = build_chain("sfbm", g.shape[-1], p=p)
    return chains.expected_reward(chain, g) / chains.expected_stopping_time(chain)


def dcg_via_chain(gains, k: int | None = None, base: float = 2.0,
                  variant: str = "trec") -> np.ndarray:
    g = cut(np.asarray(gains, dtype=float), k)
    first = log_discount(np.array([1.0]), base, variant)[0]
    chain = build_chain("dcg", g.shape[-1], base=base, variant=variant)
    return chains.expected_reward(chain, g) * first


def err_via_chain(grades, k: int | None = None, max_grade=None) -> np.ndarray:
    g = cut(np.asarray(grades, dtype=float), k)
    n = g.shape[-1]
    if max_grade is None:  # fix g_max from the whole list, as the direct formula does
        max_grade = top_grade(g)
    sat = err_satisfaction(g, np.asarray(max_grade)[..., None] if np.ndim(max_grade) else
                           max_grade)
    chain = chains.Tridiagonal(np.zeros_like(sat), np.zeros_like(sat),
                               np.concatenate([1 - sat[..., :-1], np.zeros(sat.shape[:-1] + (1,))],
                                              axis=-1))
    first_only = np.zeros(n)
    first_only[0] = 1.0
    with_rn_one = chains.expected_ratio(chain, first_only)
    reach_last = np.prod(1 - sat[..., :-1], axis=-1)      # P(H = N) under R_N = 1
    return with_rn_one - reach_last * (1 - sat[..., -1]) / n
