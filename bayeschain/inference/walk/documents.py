r"""Attractiveness per document at a cost linear in the documents: their effects at the
posterior mode, the rest of the walk sampled given them.

With one attractiveness per (query, document) pair the walk's density has tens of
thousands of coordinates (CLARA2: 41,073 pairs), and NUTS on all of them is slow (CLARA2:
807 s, R-hat 1.013): its trajectories lengthen with the dimension while each gradient
costs the same.  The route here, ``documents = "mode"`` (``[examination]``; the default,
``"sampled"``, keeps full NUTS over every coordinate):

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
   and slope are sampled.

This is an empirical-Bayes plug-in for the documents: their own uncertainty is not
propagated to the walk, and a document's attractiveness varies across draws only with
the trend's intercept and slope, so its interval is not a credible interval for that
document (on 30 simulated documents, 57% of the true values fell inside the 99%
intervals, against 90% or more under full NUTS).  What it changes in the walk's
parameters and in P@H scores, against full NUTS on a subset of a log, is measured by
``benchmarks/bench_document_effects.py`` (``RESULTS.md``).  The posterior's attr
``document_effects`` says which route made it.
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

    def __init__(self, model: WalkModel, mode: np.ndarray):
        start, n_docs = document_coordinates(model)
        fixed = np.zeros(model.ndim, dtype=bool)
        fixed[start + 2:start + 3 + n_docs] = True          # log sd and every z
        self.model = model
        self.data = model.data
        self.mode = np.array(mode, dtype=float)
        self.free = np.flatnonzero(~fixed)
        self.ndim = int(self.free.size)

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

    def expand(self, theta: np.ndarray) -> dict[str, np.ndarray]:
        return self.model.expand(self.full(theta))

    def pattern_log_likelihood(self, theta: np.ndarray) -> np.ndarray:
        return self.model.pattern_log_likelihood(self.full(theta))


def document_coordinates(model: WalkModel) -> tuple[int, int]:
    """``(start, n)``: the click family's first coordinate (its intercept; then slope,
    log sd and the ``n`` documents' z)."""
    return model.click_coordinates()                # the click family comes last


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
    diagonal of the Hessian, from one extra gradient with every ``z`` moved by ``eps``:
    documents on one page interact little), its unshrunk deviation
    ``delta_d (I_d + 1 / tau^2) / I_d``, and ``tau`` maximising
    ``sum_d log N(unshrunk_d; 0, tau^2 + 1 / I_d)``; then the mode again with ``tau``
    held, :data:`SPREAD_ROUNDS` times.  A mode that is not finite is a ParameterError."""
    from scipy.optimize import minimize_scalar

    from ...errors import ParameterError

    begin, n_docs = document_coordinates(model)
    docs = slice(begin + 3, begin + 3 + n_docs)
    theta = model.initial_point(np.random.default_rng(seed))
    theta, calls, ok, message, lp = _mode(model, theta)
    held = np.zeros(model.ndim, dtype=bool)
    held[begin + 2] = True
    spreads = []
    for _ in range(SPREAD_ROUNDS if n_docs > 1 else 0):
        sd = float(np.exp(theta[begin + 2]))
        eps = 1e-4
        _, g0 = model.logp(theta)
        moved = theta.copy()
        moved[docs] += eps
        _, g1 = model.logp(moved)
        calls += 2
        # d2 logL / dz2 (the prior's -1 removed), in deviation units: / sd^2
        info = np.maximum(-((g1[docs] - g0[docs]) / eps + 1.0) / sd**2, 1e-8)
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
