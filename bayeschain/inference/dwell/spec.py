"""The keys of ``[holding]`` (dwell times) and their validation."""

from __future__ import annotations

from ...errors import FormatError
from ...posterior.dwell import VARIABLES as DWELL_VARIABLES
from ..keys import PARAMETRISATIONS, check_finite, check_table, is_number

#: the dwell-time likelihoods; ``none`` learns no dwell parameters
LIKELIHOODS = ("exponential", "lognormal", "gamma", "weibull", "none")

#: how a time without a recorded end is read: as the dwell (``none``), or as the dwell plus
#: an examination or writing time (``examination``: :mod:`~bayeschain.inference.dwell.model`)
CENSORING = ("none", "examination")

#: the keys of ``[holding]``: key -> (type, allowed values or None, default)
KEYS = {"likelihood": (str, LIKELIHOODS, "exponential"),
        "parametrisation": (str, PARAMETRISATIONS + ("per-document",), "per-rank"),
        "censoring": (str, CENSORING, "none"),
        "prior": (list, None, None)}

#: posterior variables of the section
VARIABLES = ("holding_rate", "log_dwell_mean", "log_dwell_sd") + tuple(
    v for v in DWELL_VARIABLES if v != "holding_rate")


def validate(section: dict, source: str = "<string>") -> dict:
    """The ``[holding]`` table with its defaults, or a
    :class:`~bayeschain.errors.FormatError` naming ``source`` and the key: with a
    likelihood, the prior is two finite numbers, a Gamma(shape > 0, rate > 0) for
    ``exponential`` and a Normal(mean, sd > 0) for ``lognormal`` (``prior`` is required
    even with ``likelihood = "none"``, which does not use it)."""
    clean = check_table("holding", section, KEYS, source)
    if not has_parameters(clean):
        return clean
    likelihood, prior = clean["likelihood"], clean["prior"]
    if len(prior) != 2 or not all(is_number(a) for a in prior):
        raise FormatError("[holding] prior must be two numbers: Gamma(shape, rate) for "
                          "an exponential likelihood, Normal(mean, sd) for lognormal "
                          "(and for every family with censoring = 'examination')",
                          file=source)
    check_finite("holding", "prior", prior, source)
    if needs_observations(clean):
        if clean["censoring"] != "examination":
            raise FormatError(f"[holding] {likelihood!r} dwell times and per-document rates "
                              f"are fitted to each click's observation: add "
                              f"censoring = \"examination\"", file=source)
        if clean["parametrisation"] == "pooled":
            raise FormatError("[holding] with censoring = 'examination' the parametrisation "
                              "is per-rank, shared or per-document", file=source)
        if not prior[1] > 0:
            raise FormatError("[holding] Normal prior on the log mean dwell needs sd > 0",
                              file=source)
        return clean
    if likelihood == "exponential" and not (prior[0] > 0 and prior[1] > 0):
        raise FormatError("[holding] Gamma prior needs shape > 0 and rate > 0", file=source)
    if likelihood == "lognormal" and not prior[1] > 0:
        raise FormatError("[holding] Normal prior needs sd > 0", file=source)
    check_finite("holding", "prior", prior, source)
    return clean


def needs_observations(section: dict) -> bool:
    """Whether the section is fitted to each click's dwell observation
    (:mod:`~bayeschain.inference.dwell.model`) rather than to per-rank sums."""
    return has_parameters(section) and (
        section.get("censoring", "none") == "examination"
        or section["likelihood"] in ("gamma", "weibull")
        or section["parametrisation"] == "per-document")


def has_parameters(section: dict) -> bool:
    """Whether the section learns anything (a likelihood other than ``none``)."""
    return section["likelihood"] != "none"


def predictive_checks(section: dict) -> tuple[str, ...]:
    return ("dwell",) if has_parameters(section) else ()
