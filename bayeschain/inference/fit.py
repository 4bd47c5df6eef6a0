"""``bayeschain.fit``: from a click log (or its statistics) and a spec to a posterior.

This module only dispatches a spec to its model family: a spec with ``[examination]`` to
the walk (:func:`bayeschain.inference.walk.fit.fit_walk`), any other to the sections'
fit (:func:`bayeschain.inference.clicks.fit.fit_sections`: click-to-click transitions,
jumps and dwell times, :mod:`bayeschain.inference.clicks` and
:mod:`bayeschain.inference.dwell`).

``method = "conjugate"`` draws from the exact Dirichlet / Gamma posteriors of the spec's
sections (:mod:`bayeschain.inference.sections`); ``method = "nuts"`` builds the PyMC model
of :mod:`bayeschain.inference.clicks.model` and samples it with NUTS, then checks R-hat, ESS and
divergences and warns when they look bad.  The walk (``[examination]``) is fitted by
nutpie on its page likelihood (:mod:`bayeschain.inference.walk.model`).

A log with nothing to learn from (no clicks; no dwell times for a dwell model) is refused
before sampling: its posterior would be the prior.  Interrupting a fit (Ctrl-C) raises
:class:`SamplingInterrupted` (a ``KeyboardInterrupt``): nutpie and PyMC catch the interrupt
and return the draws made so far, which ``fit`` refuses to pass off as a posterior; so is
any fit that returns fewer draws than asked or non-finite ones.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:       # (imported in the call: ``bayeschain.inference`` imports this module)
    from ..posterior.container import Posterior


def fit(log_or_stats, spec="walk", *, method: str | None = None,
        draws: int | None = None, chains: int | None = None, seed: int | None = None,
        tune: int | str | None = None, progress: bool = False, qrels=None,
        level: int = 1, min_ess: int | None = None, target_accept: float | None = None,
        report=None, sampler=None) -> Posterior:
    """Fit a user model to a click log.

    Parameters
    ----------
    log_or_stats : ClickLog, canonical DataFrame, or a click-log path (ClickStats only for
        the click-to-click and dwell specs: the walk needs the pages themselves)
    spec : ModelSpec, path to a TOML spec, or the name of a built-in spec (default
        ``"walk"``: the examination walk that P@H scores)
    method, draws, chains, seed, tune, min_ess, target_accept : override the spec's sampler
        settings (``min_ess > 0``, walk specs: ``draws`` is the most per chain and sampling
        stops once every quantity has R-hat <= 1.01 and bulk ESS >= ``min_ess``;
        ``tune = "auto"``, walk specs: 250 steps on the documents' Laplace route, 500
        elsewhere)
    report : ``report(draws_done, draws_max)`` while a walk is sampled (a progress display)
    progress : show the sampler's progress bar (NUTS)
    qrels, level : relevance judgements (``query_id, doc_id, relevance``) and the lowest
        relevant grade, for specs whose moves are ``by_relevance``
    sampler : the walk's sampler, a function with the signature of
        :func:`bayeschain.inference.walk.sampler.sample` (default: that one, NUTS by nutpie)
    """
    from .specs import ModelSpec, load_spec

    spec = spec if isinstance(spec, ModelSpec) else load_spec(spec)
    spec = spec.with_sampler(method=method, draws=draws, chains=chains, seed=seed, tune=tune,
                             min_ess=min_ess, target_accept=target_accept)
    if spec.section("examination") is not None:
        from .walk.fit import fit_walk

        return fit_walk(log_or_stats, spec, qrels=qrels, level=level, progress=progress,
                        report=report, sampler=sampler)
    from .clicks.fit import fit_sections

    return fit_sections(log_or_stats, spec, progress=progress)
