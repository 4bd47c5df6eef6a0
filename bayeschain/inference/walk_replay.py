r"""Users walking result pages with clicks: the examination walk, simulated.

Each page starts with an arrival at rank 1.  On every arrival at rank ``i`` the user
clicks with the position's click probability (and after a click clicks the same result
again at once with the repeat probability), then moves forward, backward, or leaves the
page (next query or end of session) with the position's moves; the page's last rank
follows the walk's boundary rule (:func:`bayeschain.inference.walk_likelihood._boundary`,
the same rule the likelihood uses).  This is what the log of the fitted model looks like:
the posterior predictive checks replay it, and :func:`~bayeschain.simulate.simulate_click_log`
builds synthetic logs from it.  The loop is compiled by Numba when it is installed.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..chains.jit import jit
from . import walk_likelihood


def _walk_pages(move_index, click_index, moves, click, repeat, rescale, rng, max_steps,
                c_page, c_rank, c_step, p_steps, p_outcome):
    """Walk every page; clicks go to ``c_*`` (grown by the caller when full: the return
    value is the number of clicks, or ``-needed`` when the buffers are too small)."""
    n_pages, width = move_index.shape
    f = np.empty(width)
    b = np.empty(width)
    r = np.empty(width)
    s = np.empty(width)
    c = np.empty(width)
    k = 0
    cap = c_page.size
    for pg in range(n_pages):
        walk_likelihood._page_rows(pg, move_index, click_index, moves, click, rescale, f, b,
                                   r, s, c)
        i = 0
        steps = 0
        outcome = -1
        while steps < max_steps:
            steps += 1
            if rng.random() < c[i]:
                while True:                    # a click, then maybe the same result again
                    if k < cap:
                        c_page[k] = pg
                        c_rank[k] = i + 1
                        c_step[k] = steps
                    k += 1
                    if not rng.random() < repeat[move_index[pg, i]]:
                        break
            u = rng.random()
            if u < f[i]:
                i += 1
            elif u < f[i] + b[i]:
                i -= 1
            else:
                outcome = 0 if u < f[i] + b[i] + r[i] else 1
                break
        p_steps[pg] = steps
        p_outcome[pg] = outcome
    return k if k <= cap else -k


_COMPILED = None


def _kernel():
    global _COMPILED
    if _COMPILED is None:
        walk_likelihood.compiled("_page_rows")
        _COMPILED = jit(_walk_pages, nogil=True)
    return _COMPILED


@dataclass(frozen=True)
class WalkedPages:
    """What the simulated users did.

    ``click_page``, ``click_rank`` (1-based), ``click_step`` (the examination, counted from
    1, at which the click happened) per click in order; ``steps`` (examinations) and
    ``outcome`` (0 next query, 1 end of session, -1 still walking after ``max_steps``) per
    page.
    """

    click_page: np.ndarray
    click_rank: np.ndarray
    click_step: np.ndarray
    steps: np.ndarray
    outcome: np.ndarray


def walk_pages(lengths, move_index, click_index, moves, click, *, repeat=None,
               boundary: str = "leave", seed: int = 0,
               max_steps: int = 100_000) -> WalkedPages:
    """Simulate one user on each page.

    Parameters
    ----------
    lengths : (P,) page lengths
    move_index, click_index : (P, N) row of ``moves`` and entry of ``click`` at each
        position (as in :class:`~bayeschain.inference.pages.PageData`)
    moves : (M, 4) forward, backward, reformulate, stop probabilities
    click : (C,) click probabilities
    repeat : (M,) probability of clicking the result again right after a click, indexed
        like ``moves`` (0 when None)
    boundary : ``"leave"`` or ``"rescale"`` (the walk's rule at the last rank)
    """
    lengths = np.ascontiguousarray(lengths, dtype=np.int64)
    inside = np.arange(np.shape(move_index)[1])[None, :] < lengths[:, None]
    move_index = np.ascontiguousarray(np.where(inside, move_index, -1), dtype=np.int64)
    click_index = np.ascontiguousarray(np.where(inside, click_index, -1), dtype=np.int64)
    moves = np.ascontiguousarray(moves, dtype=np.float64)
    click = np.ascontiguousarray(click, dtype=np.float64)
    repeat = np.zeros(moves.shape[0]) if repeat is None else \
        np.ascontiguousarray(repeat, dtype=np.float64)
    n_pages = lengths.size
    steps = np.zeros(n_pages, dtype=np.int64)
    outcome = np.zeros(n_pages, dtype=np.int64)
    cap = max(16, 4 * n_pages)
    while True:
        buffers = [np.empty(cap, dtype=np.int64) for _ in range(3)]
        k = _kernel()(move_index, click_index, moves, click, repeat, boundary == "rescale",
                      np.random.default_rng(seed), int(max_steps), *buffers, steps, outcome)
        if k >= 0:
            return WalkedPages(*(buf[:k] for buf in buffers), steps, outcome)
        cap = -k
