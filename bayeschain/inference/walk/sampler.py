"""NUTS (nutpie) on the examination walk's exact log density
(:class:`~bayeschain.inference.walk.model.WalkModel`).

nutpie draws the model's unconstrained vector ``theta``, calling the compiled density as a
C function (:mod:`~bayeschain.inference.walk.bridge`; a Python callback on a nutpie without its
lower-level classes); the named quantities (moves, clicks, repeats) are computed from each
draw afterwards.  With ``min_ess > 0`` the draws are checked while they come and sampling
stops once every quantity has rank R-hat <= ``max_rhat`` and bulk ESS >= ``min_ess``
(:mod:`~bayeschain.posterior.diagnostics`).
"""

from __future__ import annotations

import numpy as np

from .model import WalkModel

#: seconds between two looks at the draws when sampling stops on its diagnostics, at
#: most, while the draws of the next check are not yet near (:func:`next_look`); a look
#: copies every draw so far, so the wait grows to :data:`LOOK_SHARE` times the last look's
#: cost (a model of 10^5 parameters: a copy of gigabytes)
CHECK_EVERY = 0.5
LOOK_SHARE = 10
#: seconds between two looks at least
SHORTEST_WAIT = 0.02
#: the fewest draws per chain looked at
FIRST_CHECK = 100
#: draws that diverged are sampled once more with this target acceptance rate (smaller
#: leapfrog steps), unless the caller already asked for at least as much
RETRY_TARGET_ACCEPT = 0.99


def sample(model: WalkModel, *, draws: int = 1000, tune: int = 500, chains: int = 2,
           seed: int = 2026, progress: bool = False, low_rank: bool = True,
           target_accept: float = 0.8, min_ess: int = 0, max_rhat: float = 1.01,
           report=None, path: str = "auto"):
    """NUTS (nutpie) on the model's exact log density.

    nutpie draws the unconstrained vector ``theta``, calling the compiled density through
    a C callback (:mod:`~bayeschain.inference.walk.bridge`) or, where that cannot run (another
    nutpie, no Numba, any failure of the bridge), a Python callback
    (:func:`compiled_model`; ``path`` forces one); the named quantities are computed from
    each draw afterwards (:meth:`WalkModel.expand`).  The statistics' attr
    ``nutpie_path`` says which path sampled.

    ``min_ess = 0``: ``draws`` per chain.  ``min_ess > 0``: ``draws`` is the most per chain;
    at looks timed to the draws the next check needs (:func:`next_look`) a copy of the
    draws so far (the same number in every chain) is taken while the chains run on, and
    the first ``k`` draws are checked once there are ``k``, for ``k`` a schedule set by
    the draws alone (``FIRST_CHECK``, then what the ESS so far says is needed): sampling
    stops as soon as every named quantity (but those the model's ``unchecked`` names:
    draws not of the chain, e.g. documents drawn around their mode) has rank R-hat <=
    ``max_rhat`` and bulk ESS >= ``min_ess`` (:mod:`~bayeschain.posterior.diagnostics`),
    and the draws returned are exactly those checked, the same for the same seed on any
    machine.  ``report(done, total)`` is called with the draws per chain so far.

    Returns ``(draws, sample_stats)``: a dict name -> ``(chain, draw, ...)`` array of the
    expanded quantities (and ``theta``, the draws of the unconstrained vector) and the
    sampler's statistics (an ``xarray.Dataset`` with ``diverging``).  When a draw diverged,
    the chains are sampled once more with ``target_accept`` :data:`RETRY_TARGET_ACCEPT`
    and the statistics' attr ``resampled`` says why.
    """
    import nutpie

    def init(s):
        return model.initial_point(np.random.default_rng(s))

    # every chain in its own thread (the OS shares the cores): with fewer threads nutpie
    # runs the first chains to their last draw before it starts the others, and the
    # stopping rule, which looks at the draws every chain has, waits for all of that
    # (4 chains on WSCD: 310 s instead of about 120 s, the first two chains run to the cap)
    options = dict(draws=draws, tune=tune, chains=chains, cores=chains, seed=seed,
                   progress_bar=progress, target_accept=target_accept, save_warmup=False,
                   return_raw_trace=True, **_mass_matrix(nutpie.sample, low_rank))
    expanded = Expansions(model, draws)
    compiled, path = compiled_model(model, init, path=path)
    resampled = None
    while True:
        try:
            if min_ess <= 0:
                theta, stats = _raw_draws(nutpie.sample(compiled, **options))
            else:
                theta, stats = _sample_until(nutpie.sample(compiled, blocking=False,
                                                           **options),
                                             expanded, draws, min_ess, max_rhat, report)
        except Exception as exc:        # noqa: BLE001 - the C bridge's failures of any kind
            if path != C_PATH:
                raise
            _failed_c_path(f"{type(exc).__name__}: {exc}")
            compiled, path = _python_model(model, init), PYTHON_PATH
            expanded = Expansions(model, draws)     # the failed run's draws are not these
            continue
        diverged = int(np.asarray(stats["diverging"]).sum())
        if not diverged or options["target_accept"] >= RETRY_TARGET_ACCEPT:
            break
        # smaller leapfrog steps: what divergences ask for (Betancourt, "A Conceptual
        # Introduction to Hamiltonian Monte Carlo", 2017)
        resampled = (f"{diverged} divergent transition{'s' if diverged > 1 else ''} at "
                     f"target_accept {options['target_accept']}: sampled again at "
                     f"{RETRY_TARGET_ACCEPT}")
        options["target_accept"] = RETRY_TARGET_ACCEPT
        expanded = Expansions(model, draws)
    stats.attrs["nutpie_path"] = path_description(path)
    if resampled:
        stats.attrs["resampled"] = resampled
    return {**expanded.of(theta), "theta": theta}, stats


#: regularisation of the low-rank mass matrix's eigenvalues (nutpie's default is 1e-5).
#: On the TREC Session walk (260 dimensions, 250 tuning steps, 2 x 1,000 draws, seeds
#: 1-4), nutpie 0.16.9-0.16.11 with 1e-5 spent 9-11 s (mostly adapting) for a smallest
#: bulk ESS of 137-308 and R-hat up to 1.018; with 1e-3, 3.7-5.2 s and ESS 459-797
#: (nutpie 0.16.8: 3.4-3.8 s and ESS 592-814 with 1e-5, 774-931 with 1e-3).
MASS_MATRIX_GAMMA = 1e-3


def _mass_matrix(sample, low_rank: bool) -> dict:
    """nutpie's options for the low-rank modified mass matrix: ``adaptation="low_rank"``
    where ``sample`` takes it (nutpie 0.16.9 and later, which deprecate the old name),
    ``low_rank_modified_mass_matrix`` before; regularised by :data:`MASS_MATRIX_GAMMA`."""
    import inspect

    if not low_rank:
        return {}
    if "adaptation" in inspect.signature(sample).parameters:
        return {"adaptation": "low_rank", "mass_matrix_gamma": MASS_MATRIX_GAMMA}
    return {"low_rank_modified_mass_matrix": True, "mass_matrix_gamma": MASS_MATRIX_GAMMA}


#: the two ways nutpie calls the density: a Numba C function (no Python per gradient) or
#: a Python callback through nutpie's public ``from_pyfunc``
C_PATH, PYTHON_PATH = "C callback", "Python callback"
#: the environment variable that forces a path (``c``, ``python``; ``auto`` by default)
PATH_VARIABLE = "BAYESCHAIN_NUTPIE_PATH"
#: per process: ``None`` (the C path not yet tried), ``""`` (verified) or why it failed
_C_PATH_STATE: dict[str, str | None] = {"state": None}


def path_description(path: str) -> str:
    """``"nutpie 0.16.11, C callback"``: the release and the path that sampled."""
    import nutpie

    return f"nutpie {nutpie.__version__}, {path}"


def compiled_model(model: WalkModel, init, *, path: str = "auto"):
    """nutpie's compiled model of ``model`` and the path it takes (:data:`C_PATH` or
    :data:`PYTHON_PATH`).  ``path="auto"``: the C bridge
    (:mod:`~bayeschain.inference.walk.bridge`) on the nutpie releases it was tested with,
    verified at its first use in the process (:func:`verify_c_model`); on any failure, now
    or earlier in the process, the Python callback, said once on standard error.
    ``"c"`` or ``"python"`` force one (``"c"`` raises where it cannot run), as does the
    environment variable :data:`PATH_VARIABLE` when ``path`` is ``"auto"``.  A density
    other than :func:`~.model.logp_kernel` (documents integrated out about their mode,
    the walk that decides once: no ``has_c_density``) takes the Python callback."""
    import os

    from ...errors import ParameterError

    source = "path"
    if path == "auto" and os.environ.get(PATH_VARIABLE):
        path, source = os.environ[PATH_VARIABLE], f"the environment variable {PATH_VARIABLE}"
    if path not in ("auto", "c", "python"):
        raise ParameterError(f"{source} must be 'auto', 'c' or 'python', not {path!r}")
    if not getattr(model, "has_c_density", False):
        if path == "c" and source == "path":
            raise ParameterError("this density has no C callback (only the walk's own "
                                 "logp_kernel does): use path 'python' or 'auto'")
        return _python_model(model, init), PYTHON_PATH
    if path == "python" or (path == "auto" and _C_PATH_STATE["state"]):
        return _python_model(model, init), PYTHON_PATH
    try:
        from .bridge import c_model

        compiled = c_model(model, init)
        if _C_PATH_STATE["state"] is None:
            verify_c_model(compiled, model)
            _C_PATH_STATE["state"] = ""
    except Exception as exc:            # noqa: BLE001 - no Numba, another nutpie, a mismatch
        if path == "c":
            raise
        _failed_c_path(f"{type(exc).__name__}: {exc}" if not _is_unavailable(exc)
                       else str(exc))
        return _python_model(model, init), PYTHON_PATH
    return compiled, C_PATH


def _is_unavailable(exc: Exception) -> bool:
    return type(exc).__name__ == "CPathUnavailable"


def _failed_c_path(reason: str) -> None:
    """Remember that the C path failed in this process and say so once on the terminal
    (standard error): the fit goes on through the Python callback, slower."""
    import sys

    first = not _C_PATH_STATE["state"]
    _C_PATH_STATE["state"] = reason or "failed"
    if first:
        print(f"bayeschain: nutpie samples the walk through a Python callback (slower): "
              f"the C callback cannot be used ({reason.splitlines()[0] if reason else ''})",
              file=sys.stderr, flush=True)


def _python_model(model: WalkModel, init):
    """The model through nutpie's public ``from_pyfunc`` (a Python call per gradient)."""
    from nutpie.compiled_pyfunc import from_pyfunc

    return from_pyfunc(
        model.ndim, lambda: (lambda x, **_: model.logp(x)),
        lambda seed1, seed2, chain: (lambda x, **_: {"theta": np.array(x, dtype=float)}),
        [np.dtype("float64")], [(model.ndim,)], ["theta"], make_initial_point_fn=lambda s:
        model.initial_point(np.random.default_rng(s)))


#: draws of the verification run (after as many tuning steps)
VERIFY_DRAWS = 5
#: the deepest tree of the verification run (at most ``2 ** VERIFY_DEPTH - 1`` leapfrog
#: steps a draw): it checks values, not mixing, and nutpie's first steps, before any
#: adaptation, run to its default depth 10 (1,023 gradients a draw): on the whole of
#: CLARA2 (per document) the run took 10.6 s, at depth 2 0.12 s (WSCD 3.0 s, 0.07 s)
VERIFY_DEPTH = 2


def verify_c_model(compiled, model: WalkModel) -> None:
    """A few draws through the C bridge, whose log density as nutpie records it must
    equal the model's own at the same points (relative 1e-9): the whole path
    (nutpie's classes, the address table, the compiled function) checked end to end.
    Raises ``RuntimeError`` when they differ."""
    import nutpie

    trace = nutpie.sample(compiled, draws=VERIFY_DRAWS, tune=VERIFY_DRAWS, chains=1, cores=1,
                          seed=0, progress_bar=False, save_warmup=True,
                          return_raw_trace=True, maxdepth=VERIFY_DEPTH)
    draw_batches, stat_batches = trace.get_arrow_trace()
    seen = 0
    for draw, stat in zip(draw_batches, stat_batches, strict=True):
        theta = _column(draw, "theta", flat=True).reshape(draw.num_rows, -1)
        logp = _column(stat, "logp")
        for x, lp in zip(theta, logp, strict=True):
            want, _ = model.logp(x)
            if not np.isclose(lp, want, rtol=1e-9, atol=1e-9):
                raise RuntimeError(f"the C callback's log density {lp!r} differs from the "
                                   f"model's {want!r}")
            seen += 1
    if seen == 0:
        raise RuntimeError("the C callback's verification run returned no draws")


def _column(batch, name: str, flat: bool = False) -> np.ndarray:
    """A column of one of nutpie's Arrow record batches as NumPy (``flat``: a list
    column's values)."""
    import pyarrow as pa

    column = pa.array(batch.column(name))
    if flat:
        column = column.flatten()
    return column.to_numpy(zero_copy_only=False)


def _after_tuning(tuning: np.ndarray):
    """The rows after tuning: a slice (a view of the draws, not a copy: on CLARA2 per
    document a copy of every draw so far is 0.5 GB at each look) when, as nutpie writes
    them, the tuning rows come first; the boolean mask otherwise."""
    first = int(np.argmin(tuning)) if not tuning.all() else tuning.size
    return slice(first, None) if not tuning[first:].any() else ~tuning


def _raw_draws(trace):
    """``theta (chain, draw, ndim)`` and the statistics (``diverging``, ``n_steps``) of the
    draws after tuning in a raw nutpie trace (chains still running may have different
    lengths: the shortest is taken).  Read from nutpie's Arrow batches, without ArviZ; a
    trace can be read once."""
    import xarray as xr

    draw_batches, stat_batches = trace.get_arrow_trace()
    thetas, diverging, steps = [], [], []
    columns = [_column(draw, "theta", flat=True) for draw in draw_batches]
    # a chain with no draw yet (a look right after the start) has no row to shape
    width = max((v.size // d.num_rows for v, d in zip(columns, draw_batches, strict=True)
                 if d.num_rows), default=0)
    for draw, stat, values in zip(draw_batches, stat_batches, columns, strict=True):
        after = _after_tuning(_column(stat, "tuning").astype(bool))
        thetas.append(values.reshape(draw.num_rows, width)[after])
        diverging.append(_column(stat, "diverging").astype(bool)[after])
        steps.append(_column(stat, "n_steps")[after])
    n = min(len(t) for t in thetas)
    theta = np.stack([t[:n] for t in thetas])         # the one copy of the draws
    stats = xr.Dataset({"diverging": (("chain", "draw"), np.stack([d[:n] for d in diverging])),
                        "n_steps": (("chain", "draw"), np.stack([k[:n] for k in steps]))})
    return theta, stats


class Expansions:
    """The named quantities (float64) of draws of ``theta``, computed once per draw into
    arrays that grow with the draws (the checks while sampling see the same draws again,
    with more after them, as views: with 10^4 documents a copy of every draw at every
    check held gigabytes).  ``capacity``: the most draws per chain expected; the arrays
    are reserved for it and only the rows written take memory (the operating system maps
    pages as they are written)."""

    def __init__(self, model: WalkModel, capacity: int = 0):
        self.model = model
        self.capacity = int(capacity)
        self.arrays: dict[str, np.ndarray] = {}
        self.done = 0

    def of(self, theta: np.ndarray) -> dict[str, np.ndarray]:
        """``theta (chain, draw, ndim)`` -> name -> ``(chain, draw, ...)`` (views)."""
        chains, n = theta.shape[:2]
        if not self.arrays:
            first = self.model.expand(theta[0, 0] if n else np.zeros(self.model.ndim))
            self.arrays = {k: np.empty((chains, max(n, self.capacity, 1)) + np.shape(v))
                           for k, v in first.items()}
        held = next(iter(self.arrays.values()))
        if held.shape[0] != chains:
            raise ValueError(f"draws of {chains} chains after draws of {held.shape[0]}")
        if n > held.shape[1]:                      # more than reserved: grow, keep the rows
            more = max(n, 2 * self.done) - self.done
            self.arrays = {k: np.concatenate([v[:, :self.done],
                                              np.empty((chains, more) + v.shape[2:])], axis=1)
                           for k, v in self.arrays.items()}
        for d in range(self.done, n):
            for c in range(chains):
                for k, v in self.model.expand(theta[c, d]).items():
                    self.arrays[k][c, d] = v
        self.done = max(self.done, n)
        return {k: v[:, :n] for k, v in self.arrays.items()}


def _sample_until(sampler, expanded: Expansions, draws, min_ess, max_rhat, report):
    """Run a background nutpie sampler until the diagnostics of its draws so far pass
    (see :func:`sample`); returns ``(theta, stats)`` of the draws checked.  The chains run
    on while a copy of their draws is checked; the checks fall on draw counts fixed by the
    draws themselves, not by the clock (the first ``FIRST_CHECK``, then as many as the ESS
    so far says are needed, ESS growing about linearly with the draws, at least 20% more),
    so the same seed keeps the same draws however fast the machine.  Once a check passes,
    sampling stops and the draws kept are exactly the checked ones."""
    import time

    next_check, wait = FIRST_CHECK, CHECK_EVERY
    last = None                      # (time, draws) of the last look that found draws
    looked = time.perf_counter()
    try:
        while True:
            finished = _finished(sampler)
            if not finished:         # the wait counts from the last look (the checks took
                time.sleep(max(wait - (time.perf_counter() - looked), 0.0))    # some of it)
                finished = _finished(sampler)
            looked = time.perf_counter()
            theta = stats = trace = None     # the last look's copies go before the next
            trace = sampler.wait() if finished else sampler.inspect()
            theta, stats = _raw_draws(trace)
            drawn = theta.shape[1]
            if drawn:                       # (the first look, before any draw, sets up)
                rate = (drawn - last[1]) / (looked - last[0]) if last else None
                cost, last = time.perf_counter() - looked, (looked, drawn)
            if report is not None:
                report(theta.shape[1], draws)
            unchecked = getattr(expanded.model, "unchecked", ())
            while next_check < draws and theta.shape[1] >= next_check:
                ess, rhat = _worst({k: v for k, v in expanded.of(theta[:, :next_check]).items()
                                    if k not in unchecked})
                if ess >= min_ess and rhat <= max_rhat:
                    if not finished:
                        sampler.cancel()        # the chains stop; nothing more is read
                    # the draws kept are those just checked: a nutpie trace is read once,
                    # so read again it raised "The trace was already taken" (and the fit
                    # fell back to the Python path and sampled anew) whenever the chains
                    # had finished before the check passed
                    return theta[:, :next_check], stats.isel(draw=slice(None, next_check))
                grow = min_ess / ess if ess > 0 else 2.0
                next_check = int(next_check * min(max(grow, 1.2), 3.0))
            if finished:
                return theta, stats
            if drawn:
                wait = next_look(drawn, min(next_check, draws), rate, cost)
    except BaseException:
        sampler.cancel()
        raise


def next_look(drawn: int, needed: int, rate: float | None, cost: float) -> float:
    """Seconds from a look at the draws, ``drawn`` per chain, to the next: the time the
    chains take to make the draws the next check needs, ``needed``, at ``rate`` draws per
    second per chain (measured between the last two looks), but at least
    :data:`SHORTEST_WAIT` and at most :data:`CHECK_EVERY` (a progress report between
    checks), both raised to :data:`LOOK_SHARE` times the last look's ``cost``.  Without a
    rate (the first look that found draws) the shortest wait, to measure one.

    Looking every :data:`CHECK_EVERY` seconds whatever the rate, the chains ran on past the
    draws of the check that passed: the bundled log's walk kept 703 draws per chain of the
    1,019 made (316, 31% of them, for nothing)."""
    shortest = max(SHORTEST_WAIT, LOOK_SHARE * cost)
    longest = max(CHECK_EVERY, LOOK_SHARE * cost)
    if rate is None:
        return shortest
    if rate <= 0:
        return longest
    return min(max((needed - drawn) / rate, shortest), longest)


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
    from ...posterior.diagnostics import rhat_and_ess

    ess, rhat = np.inf, 0.0
    for x in quantities.values():
        r, e = rhat_and_ess(x)
        ess = 0.0 if np.isnan(e).any() else min(ess, float(np.min(e, initial=np.inf)))
        rhat = max(rhat, float(np.nanmax(r, initial=0.0)))
    return ess, rhat
