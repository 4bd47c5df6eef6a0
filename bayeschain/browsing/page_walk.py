r"""Users walking result pages with clicks: the examination walk, simulated.

Each page starts with an arrival at rank 1.  On every arrival at rank ``i`` the user
clicks with the position's click probability (and after a click clicks the same result
again at once with the repeat probability), then moves forward, backward, or leaves the
page (next query or end of session) with the position's moves (after a click, the moves
after a click, for walks whose moves depend on it); the page's last rank
follows the walk's boundary rule (:func:`boundary`,
the same rule the likelihood uses).  This is what the log of the fitted model looks like:
the posterior predictive checks replay it, and :func:`~bayeschain.simulate.simulate_click_log`
builds synthetic logs from it.  The loop is compiled by Numba when it is installed.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..chains.jit import jit, jit_globals


def boundary(n, f, b, r, s, rescale):
    """Apply the boundary rule at position ``n - 1`` in place; returns the moves before."""
    k = n - 1
    fl, bl, rl, sl = f[k], b[k], r[k], s[k]
    if rescale:
        rest = bl + rl + sl
        b[k], r[k], s[k] = bl / rest, rl / rest, sl / rest
    else:
        scale = (rl + sl + fl) / (rl + sl)
        r[k], s[k] = rl * scale, sl * scale
    f[k] = 0.0
    return fl, bl, rl, sl


def page_rows(g, move_index, click_index, moves, click, rescale, f, b, r, s, c):
    """Rows of page (configuration) ``g`` from the tables, the boundary rule applied: the
    walk of one page as the simulators and the click predictions use it.  Returns its
    length."""
    n = 0
    while n < move_index.shape[1] and move_index[g, n] >= 0:
        n += 1
    for i in range(n):
        m = move_index[g, i]
        f[i] = moves[m, 0]
        b[i] = moves[m, 1] if i > 0 else 0.0
        r[i] = moves[m, 2]
        s[i] = moves[m, 3]
        c[i] = click[click_index[g, i]]
    boundary(n, f, b, r, s, rescale)
    return n


_KERNELS: dict = {}


def compiled(name: str):
    """:func:`boundary` or :func:`page_rows` compiled by Numba (cached on disk; the callee
    bound first), or the same Python function without Numba: the one compile helper of
    the page kernels, which the likelihood's and the predictions' kernels call."""
    if not _KERNELS:
        _KERNELS.update(jit_globals(globals(), ("boundary", "page_rows"), nogil=True,
                                    error_model="numpy"))
    return _KERNELS[name]


def _walk_pages(move_index, click_index, moves, moves_click, click, repeat, reclick, second,
                rescale, rng, max_steps, c_page, c_rank, c_step, p_steps, p_outcome):
    """Walk every page; clicks go to ``c_*`` (grown by the caller when full: the return
    value is the number of clicks, or ``-needed`` when the buffers are too small)."""
    n_pages, width = move_index.shape
    f = np.empty(width)
    b = np.empty(width)
    r = np.empty(width)
    s = np.empty(width)
    c = np.empty(width)
    fc = np.empty(width)
    bc = np.empty(width)
    rc = np.empty(width)
    sc = np.empty(width)
    done = np.zeros(width, dtype=np.bool_)     # positions clicked so far on the page
    seen = np.zeros(width, dtype=np.bool_)     # positions examined so far
    k = 0
    cap = c_page.size
    for pg in range(n_pages):
        page_rows(pg, move_index, click_index, moves_click, click, rescale, fc, bc, rc, sc, c)
        page_rows(pg, move_index, click_index, moves, click, rescale, f, b, r, s, c)
        done[:] = False
        seen[:] = False
        i = 0
        steps = 0
        outcome = -1
        while steps < max_steps:
            steps += 1
            chance = c[i] * reclick if done[i] else c[i]
            clicked = rng.random() < (chance * second if seen[i] else chance)
            seen[i] = True
            if clicked:
                done[i] = True
                while True:                    # a click, then maybe the same result again
                    if k < cap:
                        c_page[k] = pg
                        c_rank[k] = i + 1
                        c_step[k] = steps
                    k += 1
                    if not rng.random() < repeat[move_index[pg, i]]:
                        break
            u = rng.random()
            fi, bi, ri = (fc[i], bc[i], rc[i]) if clicked else (f[i], b[i], r[i])
            if u < fi:
                i += 1
            elif u < fi + bi:
                i -= 1
            else:
                outcome = 0 if u < fi + bi + ri else 1
                break
        p_steps[pg] = steps
        p_outcome[pg] = outcome
    return k if k <= cap else -k


_COMPILED = None


def _kernel():
    global _COMPILED
    if _COMPILED is None:
        compiled("page_rows")
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
               moves_click=None, reclick: float = 1.0, second_look: float = 1.0,
               boundary: str = "leave", seed: int = 0,
               max_steps: int = 100_000) -> WalkedPages:
    """Simulate one user on each page.

    Parameters
    ----------
    lengths : (P,) page lengths
    move_index, click_index : (P, N) row of ``moves`` and entry of ``click`` at each
        position (as in :class:`~bayeschain.inference.walk.data.PageData`)
    moves : (M, 4) forward, backward, reformulate, stop probabilities
    click : (C,) click probabilities
    repeat : (M,) probability of clicking the result again right after a click, indexed
        like ``moves`` (0 when None)
    moves_click : (M, 4) the moves after a click (``moves`` when None)
    reclick : a result clicked before on the page clicks at a later arrival with ``reclick``
        times its probability (1: every arrival a fresh click chance)
    second_look : a result examined before on the page (clicked or not) clicks at a later
        arrival with ``second_look`` times its probability (spec ``walk-once``)
    boundary : ``"leave"`` or ``"rescale"`` (the walk's rule at the last rank)
    """
    lengths = np.ascontiguousarray(lengths, dtype=np.int64)
    inside = np.arange(np.shape(move_index)[1])[None, :] < lengths[:, None]
    move_index = np.ascontiguousarray(np.where(inside, move_index, -1), dtype=np.int64)
    click_index = np.ascontiguousarray(np.where(inside, click_index, -1), dtype=np.int64)
    moves = np.ascontiguousarray(moves, dtype=np.float64)
    moves_click = moves if moves_click is None else \
        np.ascontiguousarray(moves_click, dtype=np.float64)
    click = np.ascontiguousarray(click, dtype=np.float64)
    repeat = np.zeros(moves.shape[0]) if repeat is None else \
        np.ascontiguousarray(repeat, dtype=np.float64)
    n_pages = lengths.size
    steps = np.zeros(n_pages, dtype=np.int64)
    outcome = np.zeros(n_pages, dtype=np.int64)
    cap = max(16, 4 * n_pages)
    while True:
        buffers = [np.empty(cap, dtype=np.int64) for _ in range(3)]
        k = _kernel()(move_index, click_index, moves, moves_click, click, repeat,
                      float(reclick), float(second_look), boundary == "rescale",
                      np.random.default_rng(seed), int(max_steps), *buffers, steps, outcome)
        if k >= 0:
            return WalkedPages(*(buf[:k] for buf in buffers), steps, outcome)
        cap = -k


def click_combinations(click_index: np.ndarray, offsets: bool, n_click: int):
    """``(index (G, N), click (K,), offset (K,))``: the distinct click probabilities of the
    positions of pages whose click parameters are ``click_index`` (``-1`` beyond a page):
    without offsets the ``n_click`` entries of the click table themselves; with offsets by
    rank every (entry, rank) pair shown, ``click`` its entry and ``offset`` the rank's
    offset (``-1`` at rank 1, whose offset is 0), ``index`` the pair at each position."""
    index = np.ascontiguousarray(click_index, dtype=np.int64)
    if not offsets:
        return index, np.arange(n_click, dtype=np.int64), np.full(n_click, -1, dtype=np.int64)
    width = index.shape[1]
    inside = index >= 0
    key = index * width + np.arange(width)[None, :]
    uniq, inverse = np.unique(key[inside], return_inverse=True)
    combos = np.full(index.shape, -1, dtype=np.int64)
    combos[inside] = inverse.ravel()
    return combos, (uniq // width).astype(np.int64), (uniq % width - 1).astype(np.int64)
