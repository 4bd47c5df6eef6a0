r"""Attractiveness per document at a cost linear in the documents: their effects at the
posterior mode, the rest of the walk sampled given them, each draw's documents from their
Laplace approximation there.

With one attractiveness per (query, document) pair the walk's density has tens of
thousands of coordinates (CLARA2: 41,073 pairs), and NUTS on all of them is slow (CLARA2:
807 s, R-hat 1.013): its trajectories lengthen with the dimension while each gradient
costs the same.  The route here, ``documents = "mode"`` (``[examination]``, spec
``walk-document-mode``; the default, ``"sampled"``, keeps full NUTS over every
coordinate):

1. the joint posterior mode of every coordinate by L-BFGS on the exact log density and its
   gradient (each evaluation linear in the pages' configurations, hence in the documents;
   a few hundred evaluations: CLARA2 3.4 s, WSCD 1.0 s);
2. the document coordinates fixed at that mode, NUTS on the others: the moves, the
   repeats and the population's trend of attractiveness (intercept, slope in log rank,
   spread), i.e. the conditional posterior ``p(walk, trend | clicks, documents = mode)``.
   Every document is parametrised by its standardised deviation ``z`` (its logit
   ``a + b log rank + sd z``): centred (the logit itself, as full NUTS has well-observed
   documents) the joint mode shrinks the spread ``sd`` towards 0 and every document with
   it, the degenerate mode of a hierarchical model.  The spread is set by empirical
   Bayes instead (:func:`posterior_mode`) and held with the ``z``; the trend's intercept
   and slope are sampled;
3. each draw's documents: ``z_d = zhat_d + e_d / sqrt(h_d)``, ``e_d ~ N(0, 1)``, where
   ``h_d = -d2 log p / dz_d^2`` at the mode (the diagonal of the Hessian, likelihood and
   prior, :func:`z_precision`), i.e. the Laplace approximation of each document's
   conditional posterior, its correlations with the other documents of its query left
   out, drawn independently of the walk's draw.  The noise of a draw is a function
   of the draw (seeded by its coordinates), so the stored attractiveness and the pointwise
   log-likelihood of a draw use the same documents.

This is an empirical-Bayes plug-in for the documents: their uncertainty is drawn around
the mode but not propagated to the walk (the walk is sampled given the mode), the spread
is a point estimate, and ``1 / h_d`` is a conditional variance (given the walk and the
other documents), smaller than the marginal one.  On 30 simulated documents of about
2,400 impressions each (``tests/inference/walk/test_documents_at_mode.py``) 29 of 30 fell
inside their 90% intervals and 30 inside their 99% intervals, as under full NUTS;
without step 3 (a document varying only with the trend's intercept and slope), 57% were
inside their 99% intervals.  The pointwise log-likelihood of a draw (PSIS-LOO, ``bayeschain
choose``) reads its drawn documents.  On logs simulated from a known walk the route's
walk is biased at the deep ranks the documents say little about (``benchmarks/
RESULTS.md``: at 10^5 sessions, 2 of 9 forward moves outside their 99% intervals, none
under full NUTS): what fixing the documents drops is the Laplace marginal's
``-1/2 sum_d log h_d(walk)``.  What the route changes in the walk's parameters and in P@H
scores on a real log, against full NUTS on a subset, is measured by
``benchmarks/bench_document_effects.py``.  The posterior's attr ``document_effects`` says
which route made it.
"""

from __future__ import annotations

import numpy as np

from .model import WalkModel

#: L-BFGS's limits for the mode
MODE_ITERATIONS = 5_000
MODE_MEMORY = 20


class DocumentsAtMode:
    """The walk's density with its document coordinates (and the spread of the
    population's trend) fixed (see the module docstring): the model a sampler draws,
    whose draws :meth:`full` expands back to the walk's."""

    #: expanded quantities that are not draws of the chain (the documents: the trend's
    #: draws plus independent Laplace noise), left out of the sampler's checks: with 10^5
    #: documents their checks cost more than the sampling, and the largest R-hat of 10^5
    #: independent quantities needs thousands of draws to reach 1.01
    unchecked = ("click",)

    def __init__(self, model: WalkModel, mode: np.ndarray):
        self.documents = document_slice(model)
        fixed = np.zeros(model.ndim, dtype=bool)
        fixed[self.documents.start - 1:self.documents.stop] = True    # log sd and every z
        self.model = model
        self.data = model.data
        self.mode = np.array(mode, dtype=float)
        self.free = np.flatnonzero(~fixed)
        self.ndim = int(self.free.size)
        precision, self.evaluations = z_precision(model, self.mode, self.documents)
        self.z_sd = 1.0 / np.sqrt(precision)

    def full(self, theta: np.ndarray) -> np.ndarray:
        """The walk's coordinates (``(..., model.ndim)``) of draws ``(..., ndim)``."""
        theta = np.asarray(theta, dtype=float)
        out = np.broadcast_to(self.mode, theta.shape[:-1] + self.mode.shape).copy()
        out[..., self.free] = theta
        return out

    def logp(self, theta: np.ndarray) -> tuple[float, np.ndarray]:
        lp, grad = self.model.logp(self.full(theta))
        return lp, grad[self.free]

    def initial_point(self, rng) -> np.ndarray:
        """The mode's free coordinates, jittered."""
        return self.mode[self.free] + rng.normal(0.0, 0.05, self.ndim)

    def drawn(self, theta: np.ndarray) -> np.ndarray:
        """The walk's coordinates of one draw ``(ndim,)`` with its documents drawn from
        their Laplace approximation (step 3 of the module docstring): the noise is seeded
        by the draw's coordinates (their bytes, little-endian), so the same draw gives the
        same documents on any machine.  Two draws of a chain with the same coordinates (a
        trajectory that stayed at its start) share their documents too."""
        theta = np.ascontiguousarray(theta, dtype="<f8")
        if theta.ndim != 1:
            raise ValueError(f"one draw at a time: got coordinates of shape {theta.shape}")
        out = self.full(theta)
        rng = np.random.default_rng(theta.view("<u4"))
        out[self.documents] += self.z_sd * rng.standard_normal(self.z_sd.size)
        return out

    def expand(self, theta: np.ndarray) -> dict[str, np.ndarray]:
        return self.model.expand(self.drawn(theta))

    def pattern_log_likelihood(self, theta: np.ndarray) -> np.ndarray:
        return self.model.pattern_log_likelihood(self.drawn(theta))


def document_coordinates(model: WalkModel) -> tuple[int, int]:
    """``(start, n)``: the click family's first coordinate (its intercept; then slope,
    log sd and the ``n`` documents' z)."""
    return model.click_coordinates()                # the click family comes last


def document_slice(model: WalkModel) -> slice:
    """Where the documents' ``z`` lie in ``theta`` (after the click family's intercept,
    slope and log sd)."""
    start, n_docs = document_coordinates(model)
    return slice(start + 3, start + 3 + n_docs)


def document_colors(model: WalkModel) -> np.ndarray:
    """Each document's place among its query's documents (0, 1, ...): documents of one
    colour share no page."""
    queries = model.data.documents["query_id"]
    return queries.groupby(queries, sort=False).cumcount().to_numpy()


def z_precision(model: WalkModel, theta: np.ndarray, documents: slice,
                eps: float = 1e-4) -> tuple[np.ndarray, int]:
    """``-d2 log p / dz_d^2`` of every document's ``z`` at ``theta`` (likelihood and its
    N(0, 1) prior) and the gradients it took: the diagonal of the Hessian by one-sided
    differences of the gradient.  A document's logit enters only the pages of its query,
    so the documents of different queries do not interact: each difference moves one
    document of every query at once (as many gradients as the most documents a query
    has, plus one).  Moving every document at once is not enough: on a page, the cross
    terms of documents the log says little about are as large as their own curvature.
    At least the prior's 1 (the likelihood adds a non-negative information).  A step
    whose density is not finite is taken the other way; both not finite is a
    ParameterError."""
    from ...errors import ParameterError

    lp0, g0 = model.logp(theta)
    if not np.isfinite(lp0):
        raise ParameterError("the walk's log density is not finite at the documents' mode")
    color = document_colors(model)
    index = np.arange(documents.start, documents.stop)
    out = np.empty(index.size)
    calls = 1
    for c in range(int(color.max()) + 1 if color.size else 0):
        moved_docs = index[color == c]
        for step in (eps, -eps):
            moved = np.array(theta, dtype=float)
            moved[moved_docs] += step
            lp1, g1 = model.logp(moved)
            calls += 1
            if np.isfinite(lp1):
                out[color == c] = -(g1[moved_docs] - g0[moved_docs]) / step
                break
        else:
            raise ParameterError("the walk's log density is not finite next to the "
                                 "documents' mode: their curvature cannot be measured")
    return np.maximum(out, 1.0), calls


def _mode(model: WalkModel, start: np.ndarray, keep: np.ndarray | None = None):
    """L-BFGS-B on ``-logp`` from ``start``, the coordinates ``keep`` (a mask) held."""
    from scipy.optimize import minimize

    calls = [0]
    move = np.ones(model.ndim, dtype=bool) if keep is None else ~keep

    def negative(x):
        calls[0] += 1
        theta = start.copy()
        theta[move] = x
        lp, grad = model.logp(theta)
        if not np.isfinite(lp):
            return 1e300, np.zeros_like(x)
        return -lp, -grad[move]

    result = minimize(negative, start[move], jac=True, method="L-BFGS-B",
                      options={"maxiter": MODE_ITERATIONS, "maxcor": MODE_MEMORY})
    theta = start.copy()
    theta[move] = result.x
    return theta, calls[0], bool(result.success), str(result.message), float(-result.fun)


#: rounds of the empirical-Bayes spread (each: the documents' information, the spread
#: that maximises the marginal likelihood of their deviations, the mode given it)
SPREAD_ROUNDS = 3


def posterior_mode(model: WalkModel, *, seed: int = 0) -> tuple[np.ndarray, dict]:
    """The documents' effects at their mode with the population's spread estimated by
    empirical Bayes; returns ``(theta, info)``.

    The joint mode over every coordinate shrinks the documents' deviations with the
    spread's prior (the mode of a hierarchical model is not where its mass is), so the
    spread ``tau`` is set as normal-normal empirical Bayes sets it: at the mode, each
    document's likelihood information ``I_d`` about its deviation ``delta_d`` (the
    diagonal of the Hessian, :func:`z_precision`), its unshrunk deviation
    ``delta_d (I_d + 1 / tau^2) / I_d``, and ``tau`` maximising
    ``sum_d log N(unshrunk_d; 0, tau^2 + 1 / I_d)``; then the mode again with ``tau``
    held, :data:`SPREAD_ROUNDS` times.  A mode that is not finite is a ParameterError."""
    from scipy.optimize import minimize_scalar

    from ...errors import ParameterError

    begin, n_docs = document_coordinates(model)
    docs = document_slice(model)
    theta = model.initial_point(np.random.default_rng(seed))
    theta, calls, ok, message, lp = _mode(model, theta)
    held = np.zeros(model.ndim, dtype=bool)
    held[begin + 2] = True
    spreads = []
    for _ in range(SPREAD_ROUNDS if n_docs > 1 else 0):
        sd = float(np.exp(theta[begin + 2]))
        precision, more = z_precision(model, theta, docs)
        calls += more
        # d2 logL / dz2 (the prior's 1 removed), in deviation units: / sd^2
        info = np.maximum((precision - 1.0) / sd**2, 1e-8)
        delta = sd * theta[docs]
        unshrunk = delta * (info + 1.0 / sd**2) / info

        def negative(log_tau, info=info, unshrunk=unshrunk):
            var = np.exp(2 * log_tau) + 1.0 / info
            return 0.5 * np.sum(np.log(var) + unshrunk**2 / var)

        tau = float(np.exp(minimize_scalar(negative, bounds=(np.log(1e-3), np.log(20.0)),
                                           method="bounded").x))
        spreads.append(tau)
        theta[docs] *= sd / tau                     # the same deviations under tau
        theta[begin + 2] = np.log(tau)
        theta, more, ok, message, lp = _mode(model, theta, keep=held)
        calls += more
    if not np.all(np.isfinite(theta)) or not np.isfinite(lp):
        raise ParameterError("the walk's posterior mode could not be found (the log density "
                             "is not finite along L-BFGS's path)")
    return theta, {"evaluations": calls, "log_density": lp, "converged": ok,
                   "message": message, "spreads": spreads}
