r"""The documents integrated out of the walk's density at second order (Laplace), from
derivatives measured about their mode.

Write ``theta`` for the coordinates NUTS samples (the moves, the repeats, the trend's
intercept, slope and spread, kappa and the click offsets by rank where the walk has them,
and the rarer pairs' click chances per rank where a threshold pools them), ``z`` for the
documents' standardised deviations, ``(theta_hat, z_hat)`` for the point the
approximation is taken about (``z_hat`` the
documents' mode given ``theta_hat``: :func:`documents_mode`) and ``A = -d2 log p``
there, in blocks ``A_zz``, ``A_zt``.  The Laplace approximation of the marginal
density of ``theta`` is

.. math::  \log p(\theta \mid y) \approx \log p(y, \hat z(\theta), \theta)
           - \tfrac12 \log\det A_{zz}(\theta, \hat z(\theta)) + \text{const},

with ``z_hat(theta)`` the documents' mode given ``theta`` (Tierney & Kadane, JASA 1986; Rue,
Martino & Chopin, JRSS B 2009).  Fixing the documents at ``z_hat`` instead samples the
conditional ``p(theta | y, z_hat)``: narrower than the marginal (its precision ``A_tt``
against the Schur complement ``A_tt - A_tz A_zz^{-1} A_zt``; the trend's intercept, which
every document's logit shares, by a factor of about 4 on a simulated log) and shifted by
the missing determinant.  Here, to first order in ``delta = theta - theta_hat``:

* ``z_hat(theta) = z_hat + R delta``, ``R = -A_zz^{-1} A_zt`` (the documents follow the
  walk), so the density is read at ``(theta, z_hat + R delta)``: exactly
  ``log p(y, z_hat(theta), theta)`` up to terms of third order in ``delta``, and its
  gradient is ``g_theta + R^T g_z``, exact for that density;
* ``log det A_zz(theta, z_hat(theta)) = const + t^T delta + delta^T T delta / 2``,
  with ``t`` its total derivative at the point, ``t = t_theta + R^T t_z``, and ``T`` its
  second derivatives along the trend of attractiveness (intercept, slope, log spread:
  :func:`logdet_curvature`, central differences of ``t``; 6 second-order measurements).
  Without ``T`` the spread's marginal was 1.2 times too wide.  Its second derivatives in
  the moves are left out (a column costs 2 measurements; all of them, 130 on CLARA2).
  With a few hundred documents they barely change the moves' marginal (WSCD's 654: the
  second differences of the exact Laplace marginal and of this density agree to 0.02
  along the two weakest directions), but they grow with the documents: on CLARA2's 9,375
  the exact marginal bends down along the moves' spreads at its maximum (-11.7) where
  the density without them bends up (+30.3), and NUTS runs off
  (``benchmarks/bench_laplace_point.py``;
  :attr:`~bayeschain.inference.walk.documents.DocumentsAtMode.bends_up`).

``A_zz`` is block diagonal: a document's logit enters only the pages of its query, so
documents of different queries do not interact.  Every measurement moves one document of
every query at once (its place among its query's documents, :func:`document_colors`).
From differences of the exact gradient:

* the blocks ``A_q`` from one step per place (each step's response within a query is a
  column of that query's block), and ``A_zt`` from one step per sampled coordinate;
* ``t`` from the directional third derivatives ``d/dphi (u^T A u)`` along the columns
  ``u`` of ``V_q Lambda_q^{-1/2}`` (``A_q = V_q Lambda_q V_q^T``), whose sum is
  ``tr(A^{-1} dA/dphi) = d log det A / dphi``, each a central second difference of the
  gradient along ``u`` (the place-``j`` columns of every query in one direction).

Each draw's documents are then ``z_hat + R delta + V Lambda^{-1/2} e``, ``e ~ N(0, I)``:
their mode follows the draw, their covariance ``A_zz^{-1}`` is the one at the point,
correlations within a query kept.  Cost: ``1 + 3 P + (sampled coordinates)`` gradients
for :func:`second_order` and 6 times that (plus the documents' Newton steps at each
point) for :func:`logdet_curvature`, each linear in
the pages' configurations, with ``P`` the most documents a query has (places); memory
``documents x (sampled coordinates + P)``, and an eigendecomposition of each query's
block (``O(P^3)``): a log with a query of thousands of documents makes it slow.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import sparse

from ...errors import ParameterError

#: one-sided step of the first differences (the Hessian's blocks)
HESSIAN_STEP = 1e-4
#: step of the central second differences along ``u`` (the determinant's derivative)
DETERMINANT_STEP = 1e-2
#: smallest eigenvalue kept in a block (the N(0, 1) prior alone gives 1)
FLOOR = 1e-6


@dataclass
class SecondOrder:
    """What :func:`second_order` measures at the mode (see the module docstring)."""

    #: ``R``, ``(documents, sampled)``: how the documents' mode follows the sampled
    #: coordinates
    response: np.ndarray
    #: ``t``, ``(sampled,)``: the total derivative of ``log det A_zz``
    logdet_slope: np.ndarray
    #: ``V Lambda^{-1/2}`` of every query's block, as one sparse ``(documents,
    #: documents)`` matrix: a draw's noise is ``noise @ e``, ``noise @ noise.T =
    #: A_zz^{-1}``
    noise: object
    #: each document's conditional standard deviation, ``sqrt((A_zz^{-1})_dd)``
    z_sd: np.ndarray
    #: ``A_tt - A_tz A_zz^{-1} A_zt = A_tt + A_tz R``, ``(sampled, sampled)``: the
    #: precision of ``log p(y, z_hat(theta), theta)`` in the sampled coordinates at the
    #: point (the Schur complement), without the determinant's curvature
    schur: np.ndarray
    #: ``A_zz^{-1} g_z``: the Newton step from the documents' point to their mode given
    #: the sampled coordinates there (an optimiser stops short of it)
    newton: np.ndarray
    #: eigenvalues raised to :data:`FLOOR` (0 at a proper mode)
    floored: int
    #: gradients taken
    evaluations: int


def _gradient(model, theta: np.ndarray) -> np.ndarray | None:
    lp, grad = model.logp(theta)
    return grad if np.isfinite(lp) and np.all(np.isfinite(grad)) else None


def _column(model, theta, g0, where, step) -> np.ndarray:
    """``-(g(theta + step e_where) - g0) / step`` (``e_where`` a sum of unit vectors),
    the step taken the other way when the density is not finite there."""
    for s in (step, -step):
        moved = np.array(theta, dtype=float)
        moved[where] += s
        g1 = _gradient(model, moved)
        if g1 is not None:
            return -(g1 - g0) / s
    raise ParameterError("the walk's log density is not finite next to the documents' "
                         "mode: their curvature cannot be measured")


@dataclass
class Layout:
    """Where the documents lie: ``index`` (their coordinates in ``theta``), ``places``
    (each one's place among its query's documents), ``order`` (the documents grouped by
    query, by place) and ``starts`` (each query's first entry in ``order``)."""

    index: np.ndarray
    places: np.ndarray
    order: np.ndarray
    starts: np.ndarray

    @classmethod
    def of(cls, documents: slice, places: np.ndarray, queries: np.ndarray) -> Layout:
        n_docs = documents.stop - documents.start
        sizes = np.bincount(queries, minlength=int(queries.max()) + 1 if n_docs else 0)
        return cls(index=np.arange(documents.start, documents.stop),
                   places=np.asarray(places), order=np.lexsort((places, queries)),
                   starts=np.r_[0, np.cumsum(sizes)])

    @property
    def n_places(self) -> int:
        return int(self.places.max()) + 1 if self.index.size else 0

    def blocks(self, model, theta, g0) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
        """Each query's block of ``A_zz`` at ``theta`` (one gradient per place): its
        documents (in ``order``), eigenvalues and eigenvectors."""
        columns = np.empty((self.index.size, self.n_places))
        for j in range(self.n_places):
            columns[:, j] = _column(model, theta, g0, self.index[self.places == j],
                                    HESSIAN_STEP)[self.index][self.order]
        out = []
        for q in range(self.starts.size - 1):
            lo, hi = self.starts[q], self.starts[q + 1]
            block = columns[lo:hi, :hi - lo]
            vals, vecs = np.linalg.eigh(0.5 * (block + block.T))
            out.append((self.order[lo:hi], vals, vecs))
        return out


#: the Newton decrement ``g_z^T A_zz^{-1} g_z`` (nats, twice the rise a Newton step
#: promises) below which the documents are at their mode, measured on blocks taken at the
#: point.  On WSCD's training split (621 documents, |log p| about 1.8e5) ``max |g_z|``
#: stalls at about 2e-6, the gradient's rounding floor, above any fixed tolerance of 1e-6,
#: while the decrement falls to 1e-14: with the gradient's tolerance alone three of the 31
#: searches ran to their cap of 30 steps (2,500-2,700 gradients each: 7,900 of the 17,300
#: gradients of the point and its derivatives)
MODE_DECREMENT = 1e-12
#: a fresh decrement at least this share of the last fresh one, below
#: :data:`MODE_STALL`, is the rounding floor of a log whose floor lies above
#: :data:`MODE_DECREMENT` (the floor of the decrement grows with the documents): Newton
#: steps no longer shrink it
MODE_STALL_RATE = 0.5
MODE_STALL = 1e-4
#: a Newton step on the blocks measured at an earlier point (the chord method) must
#: bring the decrement to at most this share of the one before, or the blocks are
#: measured afresh
CHORD_RATE = 0.1


def _block_solve(blocks, gz: np.ndarray) -> np.ndarray:
    """``A_zz^{-1} g_z`` from the blocks' factors, each eigenvalue at least the prior's 1
    (a Newton step; :func:`second_order`'s ``newton`` floors them at :data:`FLOOR`
    instead: there it is the step the approximation takes, here a search's)."""
    step = np.empty(gz.size)
    for rows, vals, vecs in blocks:
        step[rows] = vecs @ ((vecs.T @ gz[rows]) / np.maximum(vals, 1.0))
    return step


def documents_mode(model, theta: np.ndarray, layout: Layout, *, steps: int = 30,
                   tol: float = 1e-6) -> tuple[np.ndarray, int]:
    """The documents' mode given the other coordinates of ``theta``, by Newton steps on
    their block-diagonal Hessian (eigenvalues at least the prior's 1), halved until the
    density rises; returns ``(theta with the documents there, gradients taken)``.

    It stops when ``max |g_z| < tol``, when the Newton decrement on blocks measured at the
    point is below :data:`MODE_DECREMENT` (or its bound ``|g_z|^2``, those eigenvalues
    being at least 1), or when the decrement stalls at the gradient's rounding floor
    (:data:`MODE_STALL_RATE`).  The blocks cost a gradient per place
    (:meth:`Layout.blocks`), a step one: a step reuses the blocks of the step before (the
    chord method: Kelley, *Solving Nonlinear Equations with Newton's Method*, SIAM 2003,
    chapter 2) while its decrement falls to at most :data:`CHORD_RATE` of the last one,
    and they are measured afresh when it does not, when a decrement on them is small
    enough to stop (it is confirmed on fresh ones), or when no halving of a step on them
    rises."""
    theta = np.array(theta, dtype=float)
    lp, g = model.logp(theta)
    calls, blocks, last, last_fresh = 1, None, np.inf, np.inf
    for _ in range(steps):
        gz = g[layout.index]
        if np.max(np.abs(gz), initial=0.0) < tol or float(gz @ gz) < MODE_DECREMENT:
            break
        fresh = blocks is None
        if fresh:
            blocks = layout.blocks(model, theta, g)
            calls += layout.n_places
        step = _block_solve(blocks, gz)
        decrement = float(gz @ step)
        if not fresh and (decrement < MODE_DECREMENT or decrement > CHORD_RATE * last):
            blocks = layout.blocks(model, theta, g)     # confirm, or converge faster
            calls += layout.n_places
            step = _block_solve(blocks, gz)
            decrement, fresh = float(gz @ step), True
        if fresh:
            if decrement < MODE_DECREMENT or (
                    decrement < MODE_STALL and decrement >= MODE_STALL_RATE * last_fresh):
                break
            last_fresh = decrement
        for _halving in range(30):
            moved = theta.copy()
            moved[layout.index] += step
            lp1, g1 = model.logp(moved)
            calls += 1
            if np.isfinite(lp1) and lp1 >= lp:
                break
            step *= 0.5
        else:
            if fresh:
                break                               # no rise along the step: at the mode
            blocks, last = None, np.inf             # old blocks: measure them afresh
            continue
        theta, lp, g, last = moved, lp1, g1, decrement
    return theta, calls


def marginal(model, theta: np.ndarray, layout: Layout) -> tuple[float, np.ndarray, int]:
    """The Laplace marginal of the sampled coordinates of ``theta`` from its definition,
    ``F = log p(y, z_hat, theta) - 1/2 log det A_zz`` with the documents at their mode
    given the rest (:func:`documents_mode`) and ``A_zz``'s blocks measured there; returns
    ``(F, theta with the documents there, gradients taken)``, ``F = -inf`` where the
    density is not finite."""
    theta, calls = documents_mode(model, theta, layout)
    lp, g0 = model.logp(theta)
    if not (np.isfinite(lp) and np.all(np.isfinite(g0))):
        return -np.inf, theta, calls + 1
    blocks = layout.blocks(model, theta, g0)
    logdet = sum(float(np.sum(np.log(np.maximum(vals, FLOOR)))) for _, vals, _ in blocks)
    return lp - 0.5 * logdet, theta, calls + 1 + layout.n_places


#: the largest step of :func:`newton_step` on any sampled coordinate, and its halvings
NEWTON_REACH = 1.0
NEWTON_HALVINGS = 12


def newton_step(model, theta: np.ndarray, value: float, layout: Layout, free: np.ndarray,
                at: SecondOrder | None = None):
    """One Newton step on the exact Laplace marginal ``F`` (:func:`marginal`) from
    ``theta`` (the documents at their mode there, ``F = value``): the gradient
    ``g_theta + R^T g_z - t / 2``, the Schur complement ``S`` for the Hessian (the
    determinant's curvature left out), divided by the absolute values of its eigenvalues
    (a negative one would step downhill; Dauphin et al., NeurIPS 2014), at most
    :data:`NEWTON_REACH` on any coordinate, halved until ``F`` rises.  Returns ``(theta,
    value, second_order at the start, the Newton decrement ``grad . step`` of the step
    before it is cut to the reach, gradients taken)``, ``theta`` unchanged when no
    halving rises;
    ``at``: :func:`second_order` at ``theta``, when measured already."""
    calls = 1
    if at is None:
        at = second_order(model, theta, layout, free)
        calls += at.evaluations
    g = model.logp(theta)[1]
    grad = g[free] + at.response.T @ g[layout.index] - 0.5 * at.logdet_slope
    vals, vecs = np.linalg.eigh(at.schur)
    step = vecs @ ((vecs.T @ grad) / np.maximum(np.abs(vals), 1e-3 * np.abs(vals).max()))
    decrement = float(grad @ step)               # before the step is cut to the reach
    step /= max(1.0, np.abs(step).max() / NEWTON_REACH)
    scale = 1.0
    for _ in range(NEWTON_HALVINGS):
        moved = np.array(theta, dtype=float)
        moved[free] += scale * step
        moved[layout.index] += scale * (at.response @ step)
        if np.isfinite(model.logp(moved)[0]):
            new, moved, more = marginal(model, moved, layout)
            calls += more + 1
            if new > value:
                return moved, new, at, decrement, calls
        else:
            calls += 1
        scale /= 2
    return theta, value, at, decrement, calls


def second_order(model, theta: np.ndarray, layout: Layout,
                 free: np.ndarray) -> SecondOrder:
    """Measure ``R``, ``t`` and the blocks' factors at ``theta`` (module docstring; the
    documents at, or a Newton step from, their mode given the rest).  ``layout``: where
    the documents lie; ``free``: the sampled coordinates' indices."""
    g0 = _gradient(model, theta)
    if g0 is None:
        raise ParameterError("the walk's log density is not finite at the documents' mode")
    index, n_places = layout.index, layout.n_places
    n_docs = index.size
    blocks = layout.blocks(model, theta, g0)
    a_zt = np.empty((n_docs, free.size))
    a_tt = np.empty((free.size, free.size))
    for k, coordinate in enumerate(free):
        column = _column(model, theta, g0, [coordinate], HESSIAN_STEP)
        a_zt[:, k], a_tt[:, k] = column[index], column[free]
    response = np.empty((n_docs, free.size))
    z_sd = np.empty(n_docs)
    directions = np.zeros((n_docs, n_places))
    data, rows_at, cols_at, floored = [], [], [], 0
    for rows, vals, vecs in blocks:
        n = rows.size
        floored += int(np.sum(vals < FLOOR))
        noise = vecs / np.sqrt(np.maximum(vals, FLOOR))   # noise @ noise.T = A_q^-1
        response[rows] = -noise @ (noise.T @ a_zt[rows])
        z_sd[rows] = np.sqrt(np.sum(noise**2, axis=1))
        directions[rows, :n] = noise
        data.append(noise.ravel())
        rows_at.append(np.repeat(rows, n))
        cols_at.append(np.tile(rows, n))
    slope = np.zeros(theta.size)
    for j in range(n_places):
        g = []
        for s in (DETERMINANT_STEP, -DETERMINANT_STEP):
            moved = np.array(theta, dtype=float)
            moved[index] += s * directions[:, j]
            g.append(_gradient(model, moved))
            if g[-1] is None:
                raise ParameterError("the walk's log density is not finite next to the "
                                     "documents' mode: the Laplace determinant's slope "
                                     "cannot be measured")
        slope -= (g[0] - 2.0 * g0 + g[1]) / DETERMINANT_STEP**2   # d(u^T A u) / d phi
    logdet_slope = slope[free] + response.T @ slope[index]
    flat = (np.concatenate(x) if x else np.zeros(0) for x in (data, rows_at, cols_at))
    values, r, c = flat
    noise = sparse.csr_matrix((values, (r.astype(np.int64), c.astype(np.int64))),
                              shape=(n_docs, n_docs))
    newton = noise @ (noise.T @ g0[index])       # A_zz^-1 g_z
    schur = a_tt + a_zt.T @ response
    return SecondOrder(response=response, logdet_slope=logdet_slope, noise=noise,
                       schur=0.5 * (schur + schur.T), newton=newton,
                       z_sd=z_sd, floored=floored,
                       evaluations=1 + n_places + free.size + 2 * n_places)


#: step of the central differences of ``t`` along the trend's coordinates
CURVATURE_STEP = 2e-2


def logdet_curvature(model, theta: np.ndarray, layout: Layout, free: np.ndarray,
                     response: np.ndarray, along: np.ndarray) -> tuple[np.ndarray, int]:
    """The second derivatives of ``log det A_zz(theta, z_hat(theta))`` in the sampled
    coordinates that ``along`` lists (positions in ``free``: the trend of attractiveness,
    along which it curves most), by central differences of its slope ``t``
    (:func:`second_order`) at points moved by :data:`CURVATURE_STEP`, the documents at
    their mode there; returns the symmetric ``(free, free)`` matrix (zero outside the rows
    and columns of ``along``) and the gradients taken.  Left out, the spread's marginal
    was about 1.2 times too wide on a simulated log of 240 documents."""
    columns = np.zeros((free.size, along.size))
    calls = 0
    for j, k in enumerate(along):
        slopes = []
        for s in (CURVATURE_STEP, -CURVATURE_STEP):
            moved = np.array(theta, dtype=float)
            moved[free[k]] += s
            moved[layout.index] += s * response[:, k]
            moved, more = documents_mode(model, moved, layout)
            there = second_order(model, moved, layout, free)
            calls += more + there.evaluations
            slopes.append(there.logdet_slope)
        columns[:, j] = (slopes[0] - slopes[1]) / (2 * CURVATURE_STEP)
    out = np.zeros((free.size, free.size))
    out[:, along] = columns
    out[along, :] = columns.T
    block = columns[along]
    out[np.ix_(along, along)] = 0.5 * (block + block.T)
    return out, calls
