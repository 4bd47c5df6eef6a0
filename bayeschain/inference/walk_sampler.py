"""NUTS (nutpie) on the examination walk's exact log density
(:class:`~bayeschain.inference.examination.WalkModel`).

nutpie draws the model's unconstrained vector ``theta``, calling the compiled density as a
C function (:mod:`~bayeschain.inference.nuts_c`; a Python callback on a nutpie without its
lower-level classes); the named quantities (moves, clicks, repeats) are computed from each
draw afterwards.  With ``min_ess > 0`` the draws are checked while they come and sampling
stops once every quantity has rank R-hat <= ``max_rhat`` and bulk ESS >= ``min_ess``
(:mod:`~bayeschain.inference.diagnostics`).
"""

from __future__ import annotations

import numpy as np

from .examination import WalkModel

#: seconds between two looks at the draws when sampling stops on its diagnostics
CHECK_EVERY = 0.5
#: the fewest draws per chain looked at
FIRST_CHECK = 100


def sample(model: WalkModel, *, draws: int = 1000, tune: int = 500, chains: int = 2,
           seed: int = 2026, progress: bool = False, low_rank: bool = True,
           target_accept: float = 0.8, min_ess: int = 0, max_rhat: float = 1.01,
           report=None):
    """NUTS (nutpie) on the model's exact log density.

    nutpie draws the unconstrained vector ``theta``, calling the compiled density through
    a C callback (:mod:`~bayeschain.inference.nuts_c`; a Python callback on a nutpie
    without it); the named quantities are computed from each draw afterwards
    (:meth:`WalkModel.expand`).

    ``min_ess = 0``: ``draws`` per chain.  ``min_ess > 0``: ``draws`` is the most per chain;
    every ``CHECK_EVERY`` seconds a copy of the draws so far (the same number in every
    chain) is taken while the chains run on, and once there are as many as the last check
    said are needed, they are checked: sampling stops as soon as every named quantity has
    rank R-hat <= ``max_rhat`` and bulk ESS >= ``min_ess``
    (:mod:`~bayeschain.inference.diagnostics`), and the draws returned are exactly those
    checked.  ``report(done, total)`` is called with the draws per chain so far.

    Returns ``(draws, sample_stats)``: a dict name -> ``(chain, draw, ...)`` array of the
    expanded quantities and the sampler's statistics (an ``xarray.Dataset`` with
    ``diverging``).
    """
    import nutpie

    def init(s):
        return model.initial_point(np.random.default_rng(s))

    try:
        from .nuts_c import c_model
    except ImportError:                          # no Numba
        compiled = None
    else:
        compiled = c_model(model, init)
    if compiled is None:
        from nutpie.compiled_pyfunc import from_pyfunc

        compiled = from_pyfunc(
            model.ndim, lambda: (lambda x, **_: model.logp(x)),
            lambda seed1, seed2, chain: (lambda x, **_: {"theta": np.array(x, dtype=float)}),
            [np.dtype("float64")], [(model.ndim,)], ["theta"], make_initial_point_fn=init)
    options = dict(draws=draws, tune=tune, chains=chains, cores=min(chains, 2), seed=seed,
                   progress_bar=progress, low_rank_modified_mass_matrix=low_rank,
                   target_accept=target_accept, save_warmup=False, return_raw_trace=True)
    expanded = _Expansions(model)
    if min_ess <= 0:
        theta, stats = _raw_draws(nutpie.sample(compiled, **options))
    else:
        theta, stats = _sample_until(nutpie.sample(compiled, blocking=False, **options),
                                     expanded, draws, min_ess, max_rhat, report)
    return expanded.of(theta), stats


def _raw_draws(trace, keep: int | None = None):
    """``theta (chain, draw, ndim)`` and the statistics (``diverging``, ``n_steps``) of the
    draws after tuning in a raw nutpie trace, the first ``keep`` of each chain (all by
    default; chains still running may have different lengths: the shortest is taken).
    Read from nutpie's Arrow batches, without ArviZ."""
    import pyarrow as pa
    import xarray as xr

    draw_batches, stat_batches = trace.get_arrow_trace()
    thetas, diverging, steps = [], [], []
    for draw, stat in zip(draw_batches, stat_batches, strict=True):
        after = ~pa.array(stat.column("tuning")).to_numpy(zero_copy_only=False).astype(bool)
        values = pa.array(draw.column("theta")).flatten().to_numpy(zero_copy_only=False)
        thetas.append(values.reshape(draw.num_rows, -1)[after])
        diverging.append(pa.array(stat.column("diverging")).to_numpy(
            zero_copy_only=False).astype(bool)[after])
        steps.append(pa.array(stat.column("n_steps")).to_numpy(zero_copy_only=False)[after])
    n = min(len(t) for t in thetas)
    if keep is not None:
        n = min(n, keep)
    theta = np.stack([t[:n] for t in thetas])
    stats = xr.Dataset({"diverging": (("chain", "draw"), np.stack([d[:n] for d in diverging])),
                        "n_steps": (("chain", "draw"), np.stack([k[:n] for k in steps]))})
    return theta, stats


class _Expansions:
    """The named quantities of draws of ``theta``, computed once per draw (the checks
    while sampling see the same draws again, with more after them)."""

    def __init__(self, model: WalkModel):
        self.model = model
        self.done: list[list[dict]] = []

    def of(self, theta: np.ndarray) -> dict[str, np.ndarray]:
        """``theta (chain, draw, ndim)`` -> name -> ``(chain, draw, ...)``."""
        chains, n = theta.shape[:2]
        while len(self.done) < chains:
            self.done.append([])
        for c in range(chains):
            have = self.done[c]
            for d in range(len(have), n):
                have.append(self.model.expand(theta[c, d]))
        names = self.done[0][0].keys() if n else self.model.expand(
            np.zeros(self.model.ndim)).keys()
        return {k: np.array([[self.done[c][d][k] for d in range(n)] for c in range(chains)])
                for k in names}


def _sample_until(sampler, expanded: _Expansions, draws, min_ess, max_rhat, report):
    """Run a background nutpie sampler until the diagnostics of its draws so far pass
    (see :func:`sample`); returns ``(theta, stats)`` of the draws checked.  The chains run
    on while a copy of their draws is checked; once it passes, sampling stops and the
    draws kept are exactly the checked ones (the first ``done`` of every chain).  After a
    check that fails, the next waits for the draws the ESS so far says are needed (ESS
    grows about linearly with the draws), at least 20% more."""
    import time

    next_check = FIRST_CHECK
    try:
        while not _finished(sampler):
            time.sleep(CHECK_EVERY)
            if _finished(sampler):
                break
            theta, _ = _raw_draws(sampler.inspect())
            done = theta.shape[1]
            if report is not None:
                report(done, draws)
            if done < next_check:
                continue
            ess, rhat = _worst(expanded.of(theta))
            if ess >= min_ess and rhat <= max_rhat:
                return _raw_draws(sampler.abort(), keep=done)
            grow = min_ess / ess if ess > 0 else 2.0
            next_check = int(done * min(max(grow, 1.2), 3.0))
        return _raw_draws(sampler.wait())
    except BaseException:
        sampler.cancel()
        raise


def _finished(sampler) -> bool:
    """Whether a background nutpie sampler is done (nutpie 0.16 answers "not yet" by
    raising ``TimeoutError``)."""
    try:
        return bool(sampler.is_finished)
    except TimeoutError:
        return False


def _worst(quantities: dict[str, np.ndarray]) -> tuple[float, float]:
    """The smallest bulk ESS and the largest rank R-hat over every quantity (constant
    quantities, e.g. structural zeros, have no R-hat; non-finite draws give ESS 0)."""
    from .diagnostics import bulk_ess, rank_rhat

    ess, rhat = np.inf, 0.0
    for x in quantities.values():
        e, r = bulk_ess(x), rank_rhat(x)
        ess = 0.0 if np.isnan(e).any() else min(ess, float(np.min(e, initial=np.inf)))
        rhat = max(rhat, float(np.nanmax(r, initial=0.0)))
    return ess, rhat
