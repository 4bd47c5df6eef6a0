r"""P@H: precision at the stopping time of a browsing chain (Ferrante & Ferro, ICTIR 2020).

``P@H(r) = (1 / f(H)) sum_{n<=H} g(k(n), r[X_n])`` (Eq. 2), with ``X`` the browsing chain,
``H`` its stopping time, ``k(n)`` the number of visits to ``X_n`` so far, ``g`` the document
utility and ``f`` the effort.  It is a random variable; runs are ordered by

* order 1: ``E[P@H]`` (Eq. 3), exact by the forward recursion of
  :func:`bayeschain.chains.expected_ratio` when ``g`` does not depend on ``k``;
* order 2: ``E[sum g] / E[f(H)]`` (Eq. 4), exact in closed form, also under the geometric
  utility loss ``g(k, y) = w(y) (1 - lambda)^(k-1)``;
* order 3: the whole law of ``P@H`` (Eq. 5, stochastic dominance), exact for integer gains
  through the joint law of ``(T(H), H)``.

With a utility loss on a model that revisits ranks, the reward depends on the visit counts
(the process is no longer Markov in the rank alone): orders 1 and 3 are then estimated by
simulating ``users`` users, and the result says so (``exact=False``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np

from .. import chains
from ..browsing import get_model
from ..browsing.base import number
from ..chains.checks import MAX_STEPS, float_array, plain
from ..chains.simulation import simulate_users
from ..errors import ParameterError
from .classical import ranked
from .registry import MAX_USERS, Param

Effort = str | Callable[[np.ndarray], np.ndarray]


def apply_gains(relevance, gains: Mapping | None = None) -> np.ndarray:
    """Document gains ``w(y)``: the grade itself (negatives as 0) or a ``{grade: weight}`` map.

    Grades missing from the map have weight 0.
    """
    rel = float_array(relevance, "relevance", error=ParameterError)
    if gains is None:
        return np.clip(rel, 0.0, None)
    _GAINS.check(gains, "gains")
    out = np.zeros_like(rel)
    for grade, weight in dict(gains).items():
        out[rel == float(grade)] = float(weight)
    return out


_GAINS = Param.gains()


def _check_loss(loss) -> float:
    return number(loss, "utility loss", low=0.0, high=1.0)


def _check_common(order, users, seed) -> None:
    Param.integer(1, 1, 3).check(order, "order")
    Param.integer(1, 1, MAX_USERS).check(users, "users")
    if not isinstance(seed, np.random.Generator):
        Param.integer(None, 0).check(seed, "seed")


def _revisits(chain: chains.Tridiagonal) -> bool:
    """True when a user can visit a rank twice (some backward or staying move)."""
    return bool(np.any(chain.lower > 0) or np.any(chain.diag > 0))


def list_chain(relevance: np.ndarray, model: str, params: Mapping,
           lengths=None) -> chains.Tridiagonal:
    """The browsing chain of each list; with ``lengths``, rows padded beyond their list's
    end get their forward move at the last real rank turned into stopping mass."""
    chain = get_model(model).chain(relevance.shape[-1], relevance, **dict(params))
    if lengths is None:
        return chain
    n = float_array(lengths, "list lengths", low=0.0, high=float(relevance.shape[-1]),
                    error=ParameterError)
    if np.any(n != np.round(n)):
        raise ParameterError(f"list lengths must be integers; got {plain(n)}")
    try:
        np.broadcast_shapes(n.shape, relevance.shape[:-1])
    except ValueError:
        raise ParameterError(f"list lengths of shape {n.shape} do not match the "
                             f"{relevance.shape[:-1]} lists") from None
    ranks = np.arange(relevance.shape[-1])
    inside = ranks < np.maximum(n, 1)[..., None] - 1          # forward moves kept
    lower, diag, upper = np.broadcast_arrays(chain.lower, chain.diag, chain.upper)
    return chains.Tridiagonal(lower, diag, np.where(inside, upper, 0.0))


def expected_effort(chain, effort: Effort = "h", *, tol: float = 1e-13) -> np.ndarray:
    """``E[f(H)]``: ``E[H]`` for ``f(h) = h``, 1 for ``f = 1``, else summed over the pmf of H."""
    if effort == "h":
        return chains.expected_stopping_time(chain)
    if effort == "1":
        return np.ones(chain.batch_shape)
    block = chains.as_block(chain)
    exit_p = np.clip(1.0 - block.row_sums(), 0.0, None)
    a = np.broadcast_to(np.eye(block.n_states)[0], block.batch_shape + (block.n_states,)).copy()
    total = np.zeros(block.batch_shape)
    for n in range(1, MAX_STEPS + 1):
        f_n = chains.effort_values(effort, np.array(float(n)))
        total += np.sum(a * exit_p, axis=-1) * f_n
        a = block.rmatvec(a)
        alive = a.sum(axis=-1)
        if np.all(alive * chains.effort_values(effort, np.array(float(n + 1))) <= tol):
            return total
    raise ParameterError(f"E[f(H)] did not converge to tol={plain(tol)} within {MAX_STEPS:,} "
                         f"steps (the walk stops too rarely for this effort function)")


def path_expectation(relevance, model: str = "sfbm", *, order: int = 1, gains=None,
                     loss: float = 0.0, effort: Effort = "h", users: int = 100_000,
                     seed=None, tol: float = 1e-12, lengths=None, **params) -> np.ndarray:
    """Order-1 or order-2 value of P@H for each row of ``relevance``.

    Parameters
    ----------
    relevance : array (..., N)
        Grades of the ranked documents.
    model : str
        Registered browsing model (``dfbm``, ``sfbm``, ``rwbm``, ``dcg``, ``ap``, ``err``).
    order : 1 or 2
        ``E[T(H)/f(H)]`` or ``E[T(H)] / E[f(H)]``.
    gains : mapping grade -> weight, optional
    loss : float
        Geometric utility loss lambda: the k-th visit of a document yields
        ``w(y) (1 - lambda)^(k-1)``.
    effort : "h", "1" or callable
    users, seed
        Monte-Carlo size for order 1 with ``loss > 0`` on a model with revisits.
    lengths : int array, optional
        Length of each list when the rows of ``relevance`` are zero-padded: the walk then
        ends at each list's last rank instead of the padding's.
    params
        The browsing model's parameters (``p``, ``q``, ...), scalars or per-rank arrays
        with optional leading draw axes.
    """
    rel = ranked(relevance)
    _check_common(order, users, seed)
    w = apply_gains(rel, gains)
    loss = _check_loss(loss)
    chain = list_chain(rel, model, params, lengths)
    revisits = _revisits(chain)
    if order == 2:
        top = chains.geometric_loss_reward(chain, w, loss) if (loss and revisits) else \
            chains.expected_reward(chain, w)
        return top / expected_effort(chain, effort)
    if order != 1:
        raise ParameterError(f"order must be 1 or 2 for an expectation (3 is the law), got {order}")
    if loss and revisits:
        return _simulated_mean(chain, w, loss, effort, users, seed)
    return chains.expected_ratio(chain, w, effort, tol=tol)


def _simulated_mean(chain, w, loss, effort, users, seed) -> np.ndarray:
    lower, diag, upper, w = np.broadcast_arrays(chain.lower, chain.diag, chain.upper, w)
    out = np.empty(lower.shape[:-1])
    rng = np.random.default_rng(seed)
    for idx in np.ndindex(out.shape):
        one = chains.Tridiagonal(lower[idx], diag[idx], upper[idx])
        sim = simulate_users(one, users, rewards=w[idx], loss=loss, seed=rng)
        out[idx] = sim.precision(effort).mean()
    return out


@dataclass(frozen=True)
class PathDistribution:
    """The law of P@H for one ranked list: sorted support ``values`` and ``probabilities``.

    ``exact`` is False when the law was estimated from simulated users (utility loss with
    revisits), in which case ``users`` says how many.
    """

    values: np.ndarray
    probabilities: np.ndarray
    exact: bool = True
    users: int | None = None

    def cdf(self, x) -> np.ndarray:
        """``F(x) = P(P@H <= x)``."""
        cum = np.cumsum(self.probabilities)
        idx = np.searchsorted(self.values, np.asarray(x, dtype=float), side="right")
        return np.where(idx > 0, cum[np.maximum(idx - 1, 0)], 0.0)

    def mean(self) -> float:
        return float(self.values @ self.probabilities)


def path_distribution(relevance, model: str = "sfbm", *, gains=None, loss: float = 0.0,
                      effort: Effort = "h", users: int = 100_000, seed=None,
                      tol: float = 1e-12, **params) -> PathDistribution:
    """Order 3: the law of P@H for one ranked list (``relevance`` of shape ``(N,)``).

    Exact for integer gains without utility loss (or with loss on a forward-only model);
    otherwise estimated from ``users`` simulated users.
    """
    rel = ranked(relevance)
    if rel.ndim != 1:
        raise ParameterError("path_distribution takes one ranked list (a 1-D relevance vector)")
    _check_common(1, users, seed)
    w = apply_gains(rel, gains)
    loss = _check_loss(loss)
    chain = list_chain(rel, model, params)
    if chain.batch_shape:
        raise ParameterError("path_distribution takes scalar or per-rank parameters, not draws")
    integer = np.all(w == np.round(w))
    if (loss and _revisits(chain)) or not integer:
        sim = simulate_users(chain, users, rewards=w, loss=loss or None, seed=seed)
        vals, counts = np.unique(np.round(sim.precision(effort), 12), return_counts=True)
        return PathDistribution(vals, counts / users, exact=False, users=int(users))
    joint = chains.joint_distribution(chain, w.astype(int), tol=tol)
    values, probs = chains.ratio_distribution(joint, effort)
    return PathDistribution(values, probs / probs.sum(), exact=True)
