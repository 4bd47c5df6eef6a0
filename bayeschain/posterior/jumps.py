r"""The jump kernel of Markov Precision from a posterior of ``[jumps]`` (spec
``jumps-id`` or ``jumps-free``): the exponent ``g`` of the ID / LID decay
``p_ij = w(|i - j|)^g / sum_k w(|i - k|)^g``, or free rows."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..errors import ParameterError
from .draws import draws_of

#: the posterior variables of a learned jump kernel (``[jumps]``, Markov Precision)
JUMP_VARIABLES = ("jump_exponent", "jump")


class JumpKernel(NamedTuple):
    """Where the next click lands, learned from a log (``[jumps]``):

    * ``kind="exponent"``: ``family`` ``"ID"`` or ``"LID"``, ``draws`` the exponents ``g``
      ``(draws,)`` of ``p_ij = w(|i - j|)^g / sum_k w(|i - k|)^g``;
    * ``kind="matrix"``: ``family="free"``, ``draws`` the jump rows ``(draws, R, R)``
      between ranks ``1..R`` (row-stochastic, zero diagonal).
    """

    kind: str
    family: str
    draws: np.ndarray


def has_jumps(posterior) -> bool:
    """Whether the posterior learned a jump kernel (``jump_exponent`` or ``jump``)."""
    return any(name in posterior.posterior for name in JUMP_VARIABLES)


def jump_family(posterior) -> str | None:
    """The ``[jumps]`` family (``"free"``, ``"ID"``, ``"LID"``) the posterior was fitted with:
    its attr ``jump_family`` (:func:`posterior_from_parameters`), else the ``family`` of the
    ``[jumps]`` table of its spec's TOML text; None when neither says."""
    meta = posterior.metadata
    if meta.jump_family:
        return meta.jump_family
    if not meta.spec:
        return None
    import tomllib

    try:
        table = tomllib.loads(meta.spec).get("jumps", {})
    except tomllib.TOMLDecodeError:
        return None
    family = table.get("family") if isinstance(table, dict) else None
    return str(family) if family is not None else None


def jump_kernel(posterior) -> JumpKernel:
    """The learned jump kernel of Markov Precision, draws first (:class:`JumpKernel`).

    A posterior of a distance-decay family (spec ``jumps-id``, or ``family = "LID"``)
    gives its exponent ``jump_exponent`` (its ``jump`` matrix is that decay on the fitted
    ranks only): the kernel holds at every rank distance, so lists of any length are
    scored.  A free-rows posterior (spec ``jumps-free``) gives ``jump``.  Refuses a
    posterior without jumps (a walk, click-to-click transitions, dwell times).
    """
    post = posterior.posterior
    attrs = posterior.attrs
    if not has_jumps(posterior):
        raise ParameterError(f"the posterior (spec {attrs.get('spec_name')!r}) has no jump "
                             f"kernel (jump_exponent or jump): Markov Precision learns where "
                             f"the next click lands from the specs 'jumps-id' (ID decay, "
                             f"learned exponent) or 'jumps-free' (free rows)")
    if "jump_exponent" not in post:
        return JumpKernel("matrix", "free", draws_of(posterior, "jump"))
    family = jump_family(posterior)
    if family not in ("ID", "LID"):
        raise ParameterError(f"the posterior (spec {attrs.get('spec_name')!r}) has a jump "
                             f"exponent but its provenance names no ID or LID decay (family "
                             f"{family!r}), so the weights it raises to that power are "
                             f"unknown")
    return JumpKernel("exponent", family, draws_of(posterior, "jump_exponent"))
