r"""Convergence diagnostics of MCMC draws, vectorised over parameters.

Rank-normalised split-:math:`\hat R` and bulk effective sample size of Vehtari, Gelman,
Simpson, Carpenter & Bürkner, *Rank-normalization, folding, and localization: an improved
R-hat for assessing convergence of MCMC*, Bayesian Analysis 16(2), 2021: the quantities
ArviZ computes as ``az.rhat(..., method="rank")`` and ``az.ess(..., method="bulk")``, with
the same conventions (Blom's offset 3/8 for the normal scores, average ranks for ties,
Geyer's initial monotone sequence on FFT autocovariances), equal to them to rounding
(``tests/posterior/test_diagnostics.py``).  ArviZ 0.x loops over parameters in Python
(about 2 ms each); a walk posterior has hundreds of them and the demo checks its draws
while sampling, so the arithmetic is done here on all parameters at once.

* split chains: each chain's first and last ``floor(n/2)`` draws become two chains;
* normal scores: ``z = Phi^{-1}((r - 3/8) / (N + 1/4))`` of the average rank ``r`` among
  all ``N`` split draws of a parameter;
* :math:`\hat R = \sqrt{(B/W + n - 1) / n}` with ``W`` the mean within-chain variance and
  ``B / n`` the variance of the chain means; the rank R-hat is the larger of those of ``z``
  and of the folded draws' scores (``|x - median|``);
* bulk ESS ``= m n / tau`` with ``tau = -1 + 2 sum rho_t`` over Geyer's initial positive,
  monotone sequence of the scores' autocorrelations ``rho_t`` (``tau >= 1 / log10(m n)``).
"""

from __future__ import annotations

import numpy as np

#: Blom's offset of the normal scores
BLOM = 3.0 / 8.0


def _as_draws(x) -> np.ndarray:
    """``(chain, draw, ...)`` -> ``(chain, draw, parameter)`` float array."""
    x = np.asarray(x, dtype=float)
    if x.ndim < 2:
        raise ValueError("draws must be shaped (chain, draw, ...)")
    return x.reshape(x.shape[0], x.shape[1], -1)


def _split(x: np.ndarray) -> np.ndarray:
    half = x.shape[1] // 2
    return np.concatenate([x[:, :half], x[:, x.shape[1] - half:]], axis=0)


def _scores(x: np.ndarray) -> np.ndarray:
    """Normal scores of the average ranks of ``x`` (``(chain, draw, P)``) per parameter."""
    from scipy.special import ndtri
    from scipy.stats import rankdata

    flat = x.reshape(-1, x.shape[2])
    ranks = rankdata(flat, method="average", axis=0)
    n = flat.shape[0]
    return ndtri((ranks - BLOM) / (n - 2 * BLOM + 1)).reshape(x.shape)


def _basic_rhat(z: np.ndarray) -> np.ndarray:
    n = z.shape[1]
    within = z.var(axis=1, ddof=1).mean(axis=0)
    between = n * z.mean(axis=1).var(axis=0, ddof=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.sqrt((between / within + n - 1) / n)


def rank_rhat(draws) -> np.ndarray:
    """Rank-normalised split-R-hat of each parameter (shape ``draws.shape[2:]``); NaN for a
    parameter with fewer than 2 chains or 4 draws, non-finite draws, or constant draws."""
    x = _as_draws(draws)
    shape = np.shape(draws)[2:]
    if x.shape[0] < 2 or x.shape[1] < 4:
        return np.full(shape, np.nan)
    split = _split(x)
    bulk = _basic_rhat(_scores(split))
    folded = np.abs(split - np.median(split.reshape(-1, split.shape[2]), axis=0))
    tail = _basic_rhat(_scores(folded))
    out = np.fmax(bulk, tail)
    out[np.isnan(bulk) | np.isnan(tail)] = np.nan
    out[~np.isfinite(x).all(axis=(0, 1))] = np.nan
    return out.reshape(shape)


def _autocov(z: np.ndarray) -> np.ndarray:
    """Autocovariances of each chain along the draw axis (FFT, biased: divided by n)."""
    from scipy.fft import next_fast_len

    n = z.shape[1]
    m = next_fast_len(2 * n)
    centred = z - z.mean(axis=1, keepdims=True)
    f = np.fft.rfft(centred, n=m, axis=1)
    return np.fft.irfft(f * np.conjugate(f), n=m, axis=1)[:, :n] / n


def _tau(rho: np.ndarray, n: int) -> float:
    """Geyer's initial positive monotone sequence estimate of the integrated time."""
    even, odd = 1.0, rho[1]
    kept = np.zeros(n)
    kept[0], kept[1] = even, odd
    t = 1
    while t < n - 3 and even + odd > 0.0:
        even, odd = rho[t + 1], rho[t + 2]
        if even + odd >= 0.0:
            kept[t + 1], kept[t + 2] = even, odd
        t += 2
    last = t - 2
    if even > 0.0:
        kept[last + 1] = even
    t = 1
    while t <= last - 2:                   # monotone: pair sums never increase
        if kept[t + 1] + kept[t + 2] > kept[t - 1] + kept[t]:
            kept[t + 1] = kept[t + 2] = (kept[t - 1] + kept[t]) / 2.0
        t += 2
    return -1.0 + 2.0 * kept[:last + 1].sum() + kept[last + 1:last + 2].sum()


def bulk_ess(draws) -> np.ndarray:
    """Bulk effective sample size of each parameter (shape ``draws.shape[2:]``): the ESS
    of the split chains' normal scores.  NaN with fewer than 4 draws or non-finite draws;
    the number of draws for a constant parameter (ArviZ's convention)."""
    x = _as_draws(draws)
    shape = np.shape(draws)[2:]
    if x.shape[1] < 4:
        return np.full(shape, np.nan)
    z = _scores(_split(x))
    m, n, p = z.shape
    acov = _autocov(z)
    mean_var = acov[:, 0].mean(axis=0) * n / (n - 1.0)
    var_plus = mean_var * (n - 1.0) / n
    if m > 1:
        var_plus = var_plus + z.mean(axis=1).var(axis=0, ddof=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        rho = 1.0 - (mean_var - acov.mean(axis=0)) / var_plus       # (n, P)
    out = np.empty(p)
    total = m * n
    finite = np.isfinite(x).all(axis=(0, 1))
    constant = np.ptp(z, axis=(0, 1)) < np.finfo(float).resolution
    for j in range(p):
        if not finite[j]:
            out[j] = np.nan
        elif constant[j]:
            out[j] = total
        else:
            tau = max(_tau(rho[:, j], n), 1.0 / np.log10(total))
            out[j] = total / tau
    return out.reshape(shape)
