r"""Attractiveness per document at a cost linear in the documents: the documents
integrated out of the walk's density by a Laplace approximation about their mode, NUTS on
the rest, each draw's documents from their Laplace approximation given the draw.

With one attractiveness per (query, document) pair the walk's density has up to hundreds
of thousands of coordinates, and NUTS on all of them is slow (10^4 simulated pairs: 483 s,
8.9 GB): its trajectories lengthen and the draws its diagnostics need grow with the
dimension while each gradient costs the same.  (On CLARA2, 41,073 pairs, neither full
NUTS (807 s, R-hat 1.013) nor this route (over 25 minutes) is fast; with the default
threshold, 9,375 pairs of their own, the density this route samples bends up at its
point, :attr:`DocumentsAtMode.bends_up`, and the fit samples the documents with the rest
instead.)  The route here,
``documents = "mode"`` (``[examination]``, spec ``walk-document-mode``; ``"sampled"``
keeps full NUTS over every coordinate; the default, ``"auto"``, takes this route where the
log's pages show at least
:data:`~bayeschain.inference.walk.fit.AUTO_LAPLACE_IMPRESSIONS` impressions per document
of its own, WSCD but not CLARA2, for walks whose moves do not depend on the click):

1. the point the approximation is taken about (:func:`posterior_mode`): the documents'
   mode given the rest (Newton steps on their block-diagonal Hessian) and the other
   coordinates at the maximum of their approximate marginal density, found in rounds as
   INLA finds its mode (the joint mode of every coordinate is not that point: a
   hierarchical model's joint mode shrinks the documents' spread towards 0), then, where
   the rounds stopped short of a peak, Newton steps on the exact Laplace marginal
   (:func:`~bayeschain.inference.walk.laplace.newton_step`); a density that still bends up
   there (:attr:`DocumentsAtMode.bends_up`) is not sampled: the fit samples the documents
   with the rest;
2. the documents integrated out at second order (:mod:`~bayeschain.inference.walk.laplace`):
   NUTS samples the moves, the repeats, the population's trend (intercept, slope in log
   rank, spread), kappa and the click offsets by rank where the walk has them
   (``walk-reclick``) and, with ``min_impressions > 1``, the rarer pairs' click chance per
   rank (pseudo-documents every query shares, which would join every query's block)
   from the Laplace approximation of their marginal density, the documents
   at their mode given each point (``z_hat + R delta``, the linear response measured at
   the point) and the log-determinant of their precision to second order along the
   trend (to first order in the moves alone).  Every document is parametrised by its
   standardised deviation ``z`` (its logit ``a + b log rank + sd z``);
3. each draw's documents from their Laplace approximation: ``z_hat + R delta + V
   Lambda^{-1/2} e``, ``e ~ N(0, I)`` (the mode following the draw, the covariance the
   point's), with ``A_q = V Lambda V^T`` the block of the documents' precision
   (likelihood and prior) of each query, correlations within a query kept.  The noise
   of a draw is a function of the draw (seeded by its coordinates), so the stored
   attractiveness and the pointwise log-likelihood of a draw use the same documents.

The derivatives are measured at the point (and at six points beside it along the trend,
for the determinant's curvature), from differences of the exact gradient
(a few hundred to a few thousand gradients, growing with the most documents a query
has: :mod:`~bayeschain.inference.walk.laplace`).  On a log simulated from a known walk
(10^5 sessions, 9,993 (query, document) pairs; ``benchmarks/RESULTS.md``) it recovers
every forward and backward move inside its 99% interval and the trend, the moves'
means within 0.003 of full NUTS's and their 90% bounds within 0.004, in 84 s against
483 s; the documents' spread comes out a few percent low (0.98 against full NUTS's 1.015;
at 10^5 pairs 0.965 for a true 1.0), as Laplace approximations of models with binary
outcomes bias variance components (Breslow & Lin, Biometrika 1995).  Without step 2's
corrections (the documents fixed at the joint mode, the spread held), the conditional posterior was
too narrow (the trend's intercept 4 times) and biased at the deep ranks the documents say
little about.  On 30 simulated documents of about 2,400 impressions each
(``tests/inference/walk/test_documents_at_mode.py``) the documents' intervals hold their
true values as full NUTS's do.  The pointwise log-likelihood of a draw (PSIS-LOO,
``bayeschain choose``) reads its drawn documents.  The posterior's attr
``document_effects`` says which route made it.
"""

from __future__ import annotations

import numpy as np

from .model import WalkModel

#: L-BFGS's limits for the sampled coordinates' maximum
MODE_ITERATIONS = 5_000
MODE_MEMORY = 20


class DocumentsAtMode:
    """The walk's density with its documents integrated out about their mode (see the
    module docstring): the model a sampler draws, whose draws :meth:`full` expands back to
    the walk's coordinates."""

    #: expanded quantities that are not draws of the chain (the documents: their mode
    #: given the draw plus independent Laplace noise; the rarer pairs' chances per rank,
    #: which are, are checked as ``pooled_click``), left out of the sampler's checks: with 10^5
    #: documents their checks cost more than the sampling, and the largest R-hat of 10^5
    #: independent quantities needs thousands of draws to reach 1.01
    unchecked = ("click",)

    def __init__(self, model: WalkModel, mode: np.ndarray, *, curvature: bool = True,
                 measured=None):
        """``measured``: :func:`~bayeschain.inference.walk.laplace.second_order` at
        ``mode`` when :func:`posterior_mode` measured it already (its gradients counted
        there, not in :attr:`evaluations`)."""
        from .laplace import logdet_curvature, second_order

        self.documents = document_slice(model)
        self.layout = document_layout(model)
        #: the rarer pairs' pseudo-documents (one per rank), sampled with the walk
        self.pooled = np.flatnonzero(model.data.documents["pooled_rank"].to_numpy() > 0)
        self.model = model
        self.data = model.data
        self.mode = np.array(mode, dtype=float)
        self.free = sampled_coordinates(model)       # every z out (the spread is sampled)
        self.ndim = int(self.free.size)
        self.laplace = measured if measured is not None else \
            second_order(model, self.mode, self.layout, self.free)
        self.mode[self.documents] += self.laplace.newton
        self.evaluations = 0 if measured is not None else self.laplace.evaluations
        self.z_sd = self.laplace.z_sd
        self.curvature = np.zeros((self.ndim, self.ndim))
        if curvature:
            start = document_coordinates(model)[0]       # the trend: intercept, slope, sd
            along = np.searchsorted(self.free, [start, start + 1, start + 2])
            self.curvature, more = logdet_curvature(
                model, self.mode, self.layout, self.free, self.laplace.response, along)
            self.evaluations += more

    @property
    def bends_up(self) -> int:
        """In how many directions the density :meth:`logp` samples bends up at its point:
        the eigenvalues of its precision there, the Schur complement
        ``A_tt + A_tz R`` plus half the determinant's curvature along the trend, that are
        not positive.  Such a density is not the peak the Laplace marginal has at a
        maximum, and NUTS runs off along those directions.  On CLARA2 (9,375 documents
        in 929 queries) the determinant's curvature along the moves' spreads, which
        :meth:`logp` leaves out, outweighs the rest: at the marginal's maximum, along
        the weakest direction, the exact Laplace marginal bends down (second difference
        -11.7) where the Schur complement bends up (+30.3; the direction lies on the
        backward moves, off the trend along which this density keeps the determinant's
        curvature), ``benchmarks/bench_laplace_point.py``."""
        return int(np.sum(np.linalg.eigvalsh(self.precision) <= 0.0))

    @property
    def precision(self) -> np.ndarray:
        """The precision of the density :meth:`logp` samples, at its point: the Schur
        complement ``A_tt + A_tz R`` plus half the determinant's curvature along the
        trend."""
        return self.laplace.schur + 0.5 * self.curvature

    def full(self, theta: np.ndarray) -> np.ndarray:
        """The walk's coordinates (``(..., model.ndim)``) of draws ``(..., ndim)``, the
        documents at their mode given the draw, ``z_hat + R (theta - theta_hat)``."""
        theta = np.asarray(theta, dtype=float)
        out = np.broadcast_to(self.mode, theta.shape[:-1] + self.mode.shape).copy()
        out[..., self.free] = theta
        delta = theta - self.mode[self.free]
        out[..., self.documents] += np.einsum("dk,...k->...d", self.laplace.response, delta)
        return out

    def logp(self, theta: np.ndarray) -> tuple[float, np.ndarray]:
        """The Laplace approximation of the walk's marginal density (documents integrated
        out, :mod:`~bayeschain.inference.walk.laplace`): the density at the documents'
        mode given ``theta`` minus half the log-determinant of their precision to second
        order about the point (:mod:`~bayeschain.inference.walk.laplace`); its exact
        gradient.  The products with ``R`` are einsums, not BLAS:
        threaded BLAS under two chains that share the GIL made a fit of 10^4 documents
        2.4 times slower."""
        theta = np.asarray(theta, dtype=float)
        delta = theta - self.mode[self.free]
        lp, grad = self.model.logp(self.full(theta))
        t = self.laplace.logdet_slope
        bend = np.einsum("kl,l->k", self.curvature, delta)
        g = (grad[self.free] + np.einsum("dk,d->k", self.laplace.response,
                                         grad[self.documents]) - 0.5 * t - 0.5 * bend)
        return lp - 0.5 * float(t @ delta) - 0.25 * float(delta @ bend), g

    def initial_point(self, rng) -> np.ndarray:
        """The mode's free coordinates, jittered."""
        return self.mode[self.free] + rng.normal(0.0, 0.05, self.ndim)

    def whitened(self) -> Whitened:
        """This density in coordinates whitened by its precision at the point
        (:class:`Whitened`), for the sampler."""
        return Whitened(self, self.mode[self.free], self.precision)

    def drawn(self, theta: np.ndarray) -> np.ndarray:
        """The walk's coordinates of one draw ``(ndim,)`` with its documents drawn from
        their Laplace approximation, ``z_hat + R delta + V Lambda^{-1/2} e`` (step 3 of
        the module docstring): the noise ``e`` is seeded by the draw's coordinates (their
        bytes, little-endian), so the same draw gives the same documents on any
        machine.  Two draws of a chain with the same coordinates (a
        trajectory that stayed at its start) share their documents too."""
        theta = np.ascontiguousarray(theta, dtype="<f8")
        if theta.ndim != 1:
            raise ValueError(f"one draw at a time: got coordinates of shape {theta.shape}")
        out = self.full(theta)
        rng = np.random.default_rng(theta.view("<u4"))
        out[self.documents] += self.laplace.noise @ rng.standard_normal(self.z_sd.size)
        return out

    def expand(self, theta: np.ndarray) -> dict[str, np.ndarray]:
        """The walk's quantities of a draw; ``pooled_click``, the rarer pairs' chances
        per rank (coordinates of the chain, unlike the documents), for the sampler's
        checks."""
        out = self.model.expand(self.drawn(theta))
        if self.pooled.size:
            out["pooled_click"] = out["click"][self.pooled]
        return out

    def pattern_log_likelihood(self, theta: np.ndarray) -> np.ndarray:
        return self.model.pattern_log_likelihood(self.drawn(theta))


#: the most halvings of :meth:`Whitened.initial_point`'s draw towards the point
INITIAL_HALVINGS = 10


class Whitened:
    """A density of ``theta`` (``target``: its ``logp``, ``expand``,
    ``pattern_log_likelihood``, ``initial_point``, ``data`` and ``unchecked``) in the
    coordinates ``u`` with ``theta = center + L u``, ``L L^T`` the inverse of
    ``precision`` (positive definite): the density's own precision at ``center`` for
    :class:`DocumentsAtMode`, so that ``u`` is about standard normal there.

    NUTS adapts its mass matrix from the draws and gradients of its first tuning steps;
    before that, nutpie's is a diagonal set from the gradient at the initial point, which
    sees neither the precision's correlations nor most of its scales. In ``theta`` the
    Laplace density's precision spans 0.38 to 9,400 on WSCD's training split (its
    eigenvalues), and the first 100 tuning steps took 92 gradients each; in ``u``, 44 (per
    chain, 500 tuning steps: 20,166 and 14,904 gradients against 12,511 and 8,308; the
    400 draws after them 15 gradients each either way; nutpie's low-rank adaptation, seed
    1; ``benchmarks/bench_laplace_costs.py``).  The draws are the
    same density's, read through ``theta = center + L u``: :meth:`expand` and
    :meth:`pattern_log_likelihood` take ``u``.  The chains start from a draw of the
    Gaussian approximation (:meth:`initial_point`).  The products with ``L`` are einsums,
    as in :meth:`DocumentsAtMode.logp`."""

    def __init__(self, target, center: np.ndarray, precision: np.ndarray):
        vals, vecs = np.linalg.eigh(0.5 * (precision + precision.T))
        if vals.min() <= 0.0:
            raise ValueError("the precision to whiten by is not positive definite")
        self.target = target
        self.center = np.asarray(center, dtype=float)
        self.scale = vecs / np.sqrt(vals)            # L: theta = center + L u
        self.inverse = (vecs * np.sqrt(vals)).T      # L^-1
        self.ndim = int(self.center.size)
        self.data = target.data
        self.unchecked = getattr(target, "unchecked", ())

    def theta(self, u: np.ndarray) -> np.ndarray:
        """``center + L u`` (``u`` of shape ``(..., ndim)``)."""
        return self.center + np.einsum("ij,...j->...i", self.scale, np.asarray(u, float))

    def logp(self, u: np.ndarray) -> tuple[float, np.ndarray]:
        lp, grad = self.target.logp(self.theta(u))
        return lp, np.einsum("ij,i->j", self.scale, grad)

    def initial_point(self, rng) -> np.ndarray:
        """A draw of ``u`` from the standard normal, the Gaussian approximation about
        ``center`` that the whitening is made from (shrunk towards ``center`` where the
        density is not finite there, at most :data:`INITIAL_HALVINGS` times): the chains
        start in its typical set, dispersed about as the posterior is, as R-hat presumes
        (Gelman & Rubin 1992; Vehtari et al. 2021), rather than at ``center`` jittered, where the
        gradient is about 0 and nutpie's first mass matrix, set from it, is far off.  On
        WSCD's training split, from the jittered point one chain's first 25 tuning steps
        took 338 gradients each (12,055 in its 250 tuning steps; the other chain 5,387);
        from this draw, 54 and 31 (4,932 and 4,706 in all; 2026-12-01, seed 2026, ad hoc,
        ``benchmarks/RESULTS.md``)."""
        u = rng.standard_normal(self.ndim)
        for _ in range(INITIAL_HALVINGS):
            if np.isfinite(self.logp(u)[0]):
                break
            u = 0.5 * u
        return u

    def expand(self, u: np.ndarray) -> dict[str, np.ndarray]:
        return self.target.expand(self.theta(u))

    def pattern_log_likelihood(self, u: np.ndarray) -> np.ndarray:
        return self.target.pattern_log_likelihood(self.theta(u))


def document_coordinates(model: WalkModel) -> tuple[int, int]:
    """``(start, n)``: the click family's first coordinate (its intercept; then slope,
    log sd and the ``n`` click coordinates: the documents' z, then the rarer pairs'
    pseudo-documents, one per rank)."""
    return model.click_coordinates()


def _own_documents(model: WalkModel):
    """The documents table's rows of pairs with an attractiveness of their own: the
    first rows (the pseudo-documents of the rarer pairs, one per rank, come after them)."""
    docs = model.data.documents
    own = docs["pooled_rank"].to_numpy() == 0
    if not own[:own.sum()].all():
        raise ValueError("the documents table must list the pairs with an attractiveness "
                         "of their own before the rarer pairs' pseudo-documents")
    return docs[own]


def document_slice(model: WalkModel) -> slice:
    """Where the ``z`` of the documents integrated out lie in ``theta`` (after the click
    family's intercept, slope and log sd): the pairs with an attractiveness of their own.
    The pseudo-documents of the rarer pairs (one per rank, shared across queries: they
    would join every query's block) follow them and are sampled with the walk."""
    start = document_coordinates(model)[0]
    return slice(start + 3, start + 3 + len(_own_documents(model)))


def sampled_coordinates(model: WalkModel) -> np.ndarray:
    """The coordinates of ``theta`` the route samples: all but the documents integrated
    out (:func:`document_slice`)."""
    return np.delete(np.arange(model.ndim), document_slice(model))


def document_colors(model: WalkModel) -> np.ndarray:
    """Each document's place among its query's documents (0, 1, ...): documents of one
    colour share no page."""
    queries = _own_documents(model)["query_id"]
    return queries.groupby(queries, sort=False).cumcount().to_numpy()


def document_layout(model: WalkModel):
    """Where the documents lie in ``theta``, each one's place among its query's documents
    and its query (:class:`~bayeschain.inference.walk.laplace.Layout`)."""
    import pandas as pd

    from .laplace import Layout

    queries = pd.factorize(_own_documents(model)["query_id"])[0]
    return Layout.of(document_slice(model), document_colors(model), queries)


#: the most rounds of :func:`posterior_mode`, the rise of the approximate marginal log
#: density (nats) below which a round ends them, and the most halvings of a round's step
MODE_ROUNDS = 20
MODE_GAIN = 0.05
MODE_HALVINGS = 6


def posterior_mode(model: WalkModel, *, seed: int = 0) -> tuple[np.ndarray, dict]:
    """The point the Laplace approximation is taken about: the sampled coordinates at the
    maximum of their Laplace-approximate marginal density, the documents at their mode
    given them; returns ``(theta, info)``.

    The joint mode of every coordinate is not that point (a hierarchical model's joint
    mode shrinks the documents' spread towards 0), and L-BFGS over 10^5 documents stops
    short of it.  So, in rounds as INLA finds its mode (Rue, Martino & Chopin 2009):
    the documents' mode given the rest (:func:`~bayeschain.inference.walk.laplace.documents_mode`,
    Newton steps on their block-diagonal Hessian), the second-order terms there, and the
    maximum of the approximate marginal density over the sampled coordinates (L-BFGS on a
    few tens of them), until a round raises that density by less than :data:`MODE_GAIN`
    (that last step is taken whole).  Each round before it steps to that maximum,
    halved until the exact Laplace marginal
    (:func:`~bayeschain.inference.walk.laplace.marginal`) rises, and ends the rounds
    where no halving does: so the rounds cannot cycle (they cycled between two points on
    10% of WSCD's sessions), nor creep as the fixed damping that kept them from cycling
    made them (from seed 2 on the whole of WSCD, along a flat direction, the last rank's
    forward deviation, 20 rounds stopped short of the point: the fit warned and took
    67 s; the marginal takes those steps whole, and 14 rounds reach the point).  Then
    Newton steps on the exact Laplace marginal while the point is not a peak, or the
    rounds stopped short of it (:func:`_to_a_peak`; ``info["peak_steps"]``); ``info``
    says whether the point is the marginal's maximum (``converged``, by the rounds or by
    those steps) and how the rounds ended (``rounds``).  A point that is not finite is a
    ParameterError."""
    from scipy.optimize import minimize

    from ...errors import ParameterError
    from .laplace import documents_mode, marginal

    layout = document_layout(model)
    theta = model.initial_point(np.random.default_rng(seed))
    calls, gains, message, value = 0, [], "rounds exhausted", None
    for _ in range(MODE_ROUNDS):
        theta, more = documents_mode(model, theta, layout)
        at = DocumentsAtMode(model, theta, curvature=False)
        calls += more + at.evaluations

        def negative(x, at=at):
            lp, grad = at.logp(x)
            return (-lp, -grad) if np.isfinite(lp) else (1e300, np.zeros_like(x))

        found = minimize(negative, at.mode[at.free], jac=True, method="L-BFGS-B",
                         options={"maxiter": MODE_ITERATIONS, "maxcor": MODE_MEMORY})
        calls += int(found.nfev)
        gains.append(float(negative(at.mode[at.free])[0] - found.fun))
        if gains[-1] < MODE_GAIN:                # a last step of less than MODE_GAIN
            theta = at.full(found.x)
            message = "converged"
            break
        if value is None:
            value, theta, more = marginal(model, theta, layout)
            calls += more
        # the step to the linearised maximum, halved until the exact marginal rises
        start = at.mode[at.free]
        for halving in range(MODE_HALVINGS + 1):
            risen, moved, more = marginal(
                model, at.full(start + 0.5 ** halving * (found.x - start)), layout)
            calls += more
            if risen > value:
                theta, value = moved, risen
                break
        else:
            message = "no rise of the exact Laplace marginal along the rounds' step"
            break
    theta, more = documents_mode(model, theta, layout)
    calls += more
    lp = model.logp(theta)[0]
    if not np.all(np.isfinite(theta)) or not np.isfinite(lp):
        raise ParameterError("the walk's posterior mode could not be found (the log density "
                             "is not finite along the way)")
    rounds = message == "converged"
    theta, peak_steps, measured, more, at_maximum = _to_a_peak(model, theta, layout,
                                                               rounds)
    calls += more
    return theta, {"evaluations": calls, "log_density": float(model.logp(theta)[0]),
                   "converged": rounds or at_maximum, "rounds": message,
                   "message": "converged" if rounds or at_maximum else message,
                   "gains": gains, "peak_steps": peak_steps, "second_order": measured}


#: the most Newton steps :func:`posterior_mode` takes on the exact Laplace marginal (to a
#: point where the Schur complement is positive definite, or to the marginal's maximum
#: where the rounds stopped short of it), and the Newton decrement below which the point
#: is the marginal's maximum (more steps cannot make it a peak)
PEAK_STEPS = 8
PEAK_DECREMENT = 1e-2


def _to_a_peak(model: WalkModel, theta: np.ndarray, layout, converged: bool = True):
    """From the rounds' point, Newton steps on the exact Laplace marginal
    (:func:`~bayeschain.inference.walk.laplace.newton_step`) while the Schur complement
    ``A_tt + A_tz R`` there has an eigenvalue <= 0 (or, where the rounds did not
    converge, ``converged=False``, whatever its eigenvalues), at most
    :data:`PEAK_STEPS`, and until the marginal's maximum (:data:`PEAK_DECREMENT`): the
    rounds maximise the
    linearised marginal, and where they stop short (WSCD's training split: 20 rounds, one
    direction bending up, a rank's forward deviation) one step makes it a peak.  Where
    the Schur complement is indefinite at the maximum itself (CLARA2) the route cannot be
    a peak, and the fit samples the documents (:attr:`DocumentsAtMode.bends_up`, which
    adds the determinant's curvature along the trend: a point it still finds bending up
    is not stepped from here).  Returns ``(theta, steps taken, second_order at theta or
    None, gradients taken, whether theta is the marginal's maximum)``."""
    from .laplace import marginal, newton_step, second_order

    free = sampled_coordinates(model)
    at = second_order(model, theta, layout, free)
    measured_at = theta
    calls, steps, value, at_maximum = at.evaluations, 0, None, False
    while (not converged or np.linalg.eigvalsh(at.schur).min() <= 0.0) \
            and steps < PEAK_STEPS:
        if value is None:
            value, theta, more = marginal(model, theta, layout)   # re-moded: the same point
            measured_at = theta
            calls += more
        moved, value, _, decrement, more = newton_step(model, theta, value, layout, free,
                                                       at=at)
        calls += more
        at_maximum = decrement < PEAK_DECREMENT  # at the maximum: no peak to step to
        if moved is theta:                       # no rise along the step
            break
        theta, steps = moved, steps + 1
        if at_maximum:
            break
        at = second_order(model, theta, layout, free)
        measured_at = theta
        calls += at.evaluations
    return theta, steps, at if measured_at is theta else None, calls, at_maximum
