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
#: parameters diagnosed together: the arrays of a block stay small (41,073 parameters of
#: 2 x 1,200 draws all at once took 33 s, by blocks of 512 13.5-14.8 s)
CHUNK = 512


def _as_draws(x) -> np.ndarray:
    """``(chain, draw, ...)`` -> ``(chain, draw, parameter)`` float array."""
    x = np.asarray(x, dtype=float)
    if x.ndim < 2:
        raise ValueError("draws must be shaped (chain, draw, ...)")
    return x.reshape(x.shape[0], x.shape[1], -1)


def _split(x: np.ndarray) -> np.ndarray:
    half = x.shape[1] // 2
    return np.concatenate([x[:, :half], x[:, x.shape[1] - half:]], axis=0)


def _average_ranks(flat: np.ndarray) -> np.ndarray:
    """Ranks ``1..N`` of each column of ``flat`` ``(N, P)``, ties given the mean of their
    ranks (SciPy's ``rankdata(method="average")``): one sort per column; in sorted order
    a run of equal values at positions ``a..b`` gets ``(a + b) / 2 + 1``.  (The folded
    draws always tie: two draws lie equally far from an even count's median.)  A NaN
    gets a rank of its own at the top, where ``rankdata`` makes the column NaN: the
    diagnostics of a column with a non-finite draw are NaN either way."""
    columns = np.ascontiguousarray(flat.T)          # each parameter's draws contiguous
    p, n = columns.shape
    order = np.argsort(columns, axis=1)
    ordered = np.take_along_axis(columns, order, axis=1)
    same = ordered[:, 1:] == ordered[:, :-1]
    position = np.broadcast_to(np.arange(n, dtype=float), (p, n))
    if same.any():
        first = np.ones((p, n), dtype=bool)
        first[:, 1:] = ~same
        last = np.ones((p, n), dtype=bool)
        last[:, :-1] = ~same
        start = np.maximum.accumulate(np.where(first, position, 0.0), axis=1)
        end = np.minimum.accumulate(np.where(last, position, n)[:, ::-1], axis=1)[:, ::-1]
        position = (start + end) / 2.0
    ranks = np.empty((p, n))
    np.put_along_axis(ranks, order, position + 1.0, axis=1)
    return ranks.T


def _scores(x: np.ndarray) -> np.ndarray:
    """Normal scores of the average ranks of ``x`` (``(chain, draw, P)``) per parameter."""
    from scipy.special import ndtri

    flat = x.reshape(-1, x.shape[2])
    ranks = _average_ranks(flat)
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
    return _diagnose(draws, rhat=True, ess=False)[0]


def rhat_and_ess(draws) -> tuple[np.ndarray, np.ndarray]:
    """:func:`rank_rhat` and :func:`bulk_ess` of each parameter at once: both read the
    normal scores of the split chains, computed once here (a sampler checking its draws
    while it samples, and a posterior's report, want both)."""
    return _diagnose(draws, rhat=True, ess=True)


def _diagnose(draws, *, rhat: bool, ess: bool) -> tuple[np.ndarray, np.ndarray]:
    """R-hat and ESS (each NaN where not asked), by blocks of :data:`CHUNK` parameters."""
    x = _as_draws(draws)
    shape = np.shape(draws)[2:]
    p = x.shape[2]
    out_rhat, out_ess = np.full(p, np.nan), np.full(p, np.nan)
    if x.shape[1] >= 4:
        for lo in range(0, p, CHUNK):
            part = x[:, :, lo:lo + CHUNK]
            split = _split(part)
            z = _scores(split)
            if ess:
                out_ess[lo:lo + CHUNK] = _bulk_ess(part, z)
            if rhat and x.shape[0] >= 2:
                out_rhat[lo:lo + CHUNK] = _rank_rhat(part, split, z)
    return out_rhat.reshape(shape), out_ess.reshape(shape)


def _rank_rhat(x: np.ndarray, split: np.ndarray, z: np.ndarray) -> np.ndarray:
    bulk = _basic_rhat(z)
    with np.errstate(invalid="ignore"):        # an infinite median: the column is NaN
        folded = np.abs(split - np.median(split.reshape(-1, split.shape[2]), axis=0))
    tail = _basic_rhat(_scores(folded))
    out = np.fmax(bulk, tail)
    out[np.isnan(bulk) | np.isnan(tail)] = np.nan
    out[~np.isfinite(x).all(axis=(0, 1))] = np.nan
    return out


def _autocov(z: np.ndarray) -> np.ndarray:
    """Autocovariances of each chain along the draw axis (FFT, biased: divided by n)."""
    from scipy.fft import next_fast_len

    n = z.shape[1]
    m = next_fast_len(2 * n)
    centred = z - z.mean(axis=1, keepdims=True)
    f = np.fft.rfft(centred, n=m, axis=1)
    return np.fft.irfft(f * np.conjugate(f), n=m, axis=1)[:, :n] / n


def _taus(rho: np.ndarray, n: int) -> np.ndarray:
    """Geyer's initial positive monotone sequence estimate of the integrated time of each
    column of ``rho`` ``(n, P)``, ArviZ's rules lag by lag with every column at once:

    * pairs ``(rho_0 = 1, rho_1), (rho_2, rho_3), ...`` are read while the previous pair's
      sum is positive (and lags remain, ``t < n - 3``); a pair is kept when its sum is
      not negative; the even lag of the pair that ended the run is kept if positive;
    * then each pair's sum is made no larger than the previous pair's (their mean);
    * ``tau = -1 + 2 sum_{t <= last} rho_t + rho_{last + 1}``.

    The rules are those of the loop it replaces, column by column; the sums are taken in
    another order (to rounding, 1e-15).
    """
    p = rho.shape[1]
    kept = np.zeros((n, p))
    kept[0] = 1.0
    kept[1] = rho[1]
    even, odd = np.ones(p), rho[1].copy()
    t_end = np.ones(p, dtype=np.int64)          # each column's t when its run ended
    running = np.ones(p, dtype=bool)
    t = 1
    while t < n - 3:
        running &= even + odd > 0.0
        if not running.any():
            break
        e, o = rho[t + 1], rho[t + 2]
        even = np.where(running, e, even)
        odd = np.where(running, o, odd)
        keep = running & (e + o >= 0.0)
        kept[t + 1] = np.where(keep, e, kept[t + 1])
        kept[t + 2] = np.where(keep, o, kept[t + 2])
        t_end[running] = t + 2
        t += 2
    last = t_end - 2
    cols = np.arange(p)
    kept[last + 1, cols] = np.where(even > 0.0, even, kept[last + 1, cols])
    for t in range(1, int(last.max(initial=-1)) - 1, 2):      # monotone pair sums
        shrink = (t <= last - 2) & (kept[t + 1] + kept[t + 2] > kept[t - 1] + kept[t])
        mean = (kept[t - 1] + kept[t]) / 2.0
        kept[t + 1] = np.where(shrink, mean, kept[t + 1])
        kept[t + 2] = np.where(shrink, mean, kept[t + 2])
    lags = np.arange(n)[:, None]
    inside = np.where(lags <= last, kept, 0.0).sum(axis=0)
    after = np.where(last + 1 < n, kept[np.minimum(last + 1, n - 1), cols], 0.0)
    return -1.0 + 2.0 * inside + after


def bulk_ess(draws) -> np.ndarray:
    """Bulk effective sample size of each parameter (shape ``draws.shape[2:]``): the ESS
    of the split chains' normal scores.  NaN with fewer than 4 draws or non-finite draws;
    the number of draws for a constant parameter (ArviZ's convention)."""
    return _diagnose(draws, rhat=False, ess=True)[1]


def _bulk_ess(x: np.ndarray, z: np.ndarray) -> np.ndarray:
    m, n, p = z.shape
    acov = _autocov(z)
    mean_var = acov[:, 0].mean(axis=0) * n / (n - 1.0)
    var_plus = mean_var * (n - 1.0) / n
    if m > 1:
        var_plus = var_plus + z.mean(axis=1).var(axis=0, ddof=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        rho = 1.0 - (mean_var - acov.mean(axis=0)) / var_plus       # (n, P)
    total = m * n
    finite = np.isfinite(x).all(axis=(0, 1))
    constant = np.ptp(z, axis=(0, 1)) < np.finfo(float).resolution
    tau = np.maximum(_taus(rho, n), 1.0 / np.log10(total))
    return np.where(~finite, np.nan, np.where(constant, float(total), total / tau))
