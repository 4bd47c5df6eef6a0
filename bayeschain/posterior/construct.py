"""A posterior built from given parameter arrays (tests, what-if runs): the walk's moves,
click probabilities, holding rates and jump kernels, as one chain of draws."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from ..errors import ParameterError
from .jumps import JUMP_VARIABLES


def posterior_from_parameters(parameters: Mapping[str, np.ndarray], *,
                              boundary: str = "leave", relevance_level: int = 1,
                              jump_family: str | None = None):
    """A one-chain posterior of the walk from parameter arrays ``(draws, ...)`` (tests,
    what-if runs):

    * ``walk``: ``(draws, 4)`` moves shared by all ranks, or ``(draws, ranks, 4)``, in the
      order forward, backward, reformulate, stop;
    * ``walk_by_relevance``: ``(draws, 2, 4)`` or ``(draws, 2, ranks, 4)``: moves after
      examining a non-relevant (index 0) and a relevant (index 1) document
      (``PatH(model='drwbm')``);
    * ``walk_skip`` and ``walk_click`` (with ``click``): ``(draws, ranks, 4)`` the moves
      after an examination without a click and after a click (spec ``walk-click``); the
      posterior's ``walk`` is then the walk over ranks they make with the clicks
      marginalised (:func:`~bayeschain.posterior.walk.marginal_moves`);
    * ``click``: ``(draws, ranks)`` click probability per examination (click prediction,
      predictive checks);
    * ``repeat``: ``(draws, ranks)`` the probability of clicking a result again right
      after a click on it;
    * ``reclick``: ``(draws,)`` the factor ``kappa`` of a result clicked before on the
      page (damped re-clicks, spec ``walk-reclick``);
    * ``second_look``: ``(draws,)`` the factor ``kappa`` of a result examined before on
      the page (the click decision made once, spec ``walk-once``), with moves that do not
      depend on the click;
    * ``holding_rate``: ``(draws, ranks)``;
    * ``jump_exponent``: ``(draws,)`` exponents ``g >= 0`` of the ``jump_family`` (``"ID"``,
      the default, or ``"LID"``) distance decay, as the spec ``jumps-id`` learns them;
    * ``jump``: ``(draws, R, R)`` free jump rows (row-stochastic, zero diagonal), as the
      spec ``jumps-free`` learns them (``jump_family`` ``"free"``).

    ``boundary`` is the walk's rule at a page's last rank (``"rescale"``: MsM's session
    walk), ``relevance_level`` the lowest relevant grade of ``walk_by_relevance``.  A
    posterior with jumps parametrises the click-to-click chain (Markov Precision's), so it
    cannot also hold a walk.
    """
    import xarray as xr

    from .container import Posterior
    from .vocabulary import CLASSES, MOVES

    variables = {}
    parameters = dict(parameters)
    split = [k for k in ("walk_skip", "walk_click") if k in parameters]
    if split:
        from .walk import marginal_moves

        if len(split) != 2 or "click" not in parameters or "walk" in parameters \
                or "walk_by_relevance" in parameters:
            raise ParameterError("walk_skip and walk_click go together, with click and "
                                 "without walk: the walk is their mix")
        if np.any(np.asarray(parameters.get("reclick", 1.0)) < 1.0):
            raise ParameterError("moves that depend on the click with damped re-clicks "
                                 "(reclick < 1) are not a walk over ranks (the fit refuses "
                                 "them too): give reclick 1 or moves without the click")
        moves = {k: np.asarray(parameters.pop(k), dtype=float) for k in split}
        click = np.asarray(parameters["click"], dtype=float)
        if any(m.ndim != 3 or m.shape[-1] != 4 or m.shape[:2] != click.shape
               for m in moves.values()):
            raise ParameterError("walk_skip and walk_click must be (draws, ranks, 4), with "
                                 "click (draws, ranks)")
        parameters["walk"] = marginal_moves(moves["walk_skip"], moves["walk_click"], click)
    if "walk" in parameters and "walk_by_relevance" in parameters:
        raise ParameterError("give walk or walk_by_relevance, not both")
    mu = None
    if "holding_rate" in parameters:
        mu = np.asarray(parameters["holding_rate"], dtype=float)
        variables["holding_rate"] = xr.DataArray(
            mu[None], dims=("chain", "draw", "rank"),
            coords={"rank": np.arange(1, mu.shape[1] + 1)})
    for key, extra in (("walk", ()), ("walk_by_relevance", ("relevance",))):
        if key not in parameters:
            continue
        w = np.asarray(parameters[key], dtype=float)
        if w.ndim == 2 + len(extra):            # shared by all ranks
            ranks = mu.shape[1] if mu is not None else (
                np.shape(parameters["click"])[1] if "click" in parameters else 1)
            w = np.repeat(w[..., None, :], ranks, axis=-2)
        if w.ndim != 3 + len(extra) or w.shape[-1] != 4 or (extra and w.shape[1] != 2):
            raise ParameterError(f"{key} must be (draws, {'2, ' if extra else ''}[ranks,] 4)")
        if mu is not None and w.shape[-2] != mu.shape[1]:
            raise ParameterError(f"{key} and holding_rate must have the same ranks")
        if np.any(w < 0) or not np.allclose(w.sum(-1), 1.0):
            raise ParameterError(f"{key}: each row of moves must be probabilities summing "
                                 f"to 1")
        coords = {"rank": np.arange(1, w.shape[-2] + 1), "move": list(MOVES)}
        if extra:
            coords["relevance"] = list(CLASSES)
        variables["walk"] = xr.DataArray(w[None], dims=("chain", "draw") + extra +
                                         ("rank", "move"), coords=coords)
        for name, m in (moves.items() if split else ()):
            if np.any(m < 0) or not np.allclose(m.sum(-1), 1.0):
                raise ParameterError(f"{name}: each row of moves must be probabilities "
                                     f"summing to 1")
            variables[name] = xr.DataArray(m[None], dims=("chain", "draw", "rank", "move"),
                                           coords=coords)
    if "click" in parameters:
        c = np.asarray(parameters["click"], dtype=float)
        variables["click"] = xr.DataArray(c[None], dims=("chain", "draw", "rank"),
                                          coords={"rank": np.arange(1, c.shape[1] + 1)})
    if "repeat" in parameters:
        rho = np.asarray(parameters["repeat"], dtype=float)
        if rho.ndim != 2 or np.any((rho < 0) | (rho >= 1)):
            raise ParameterError("repeat must be (draws, ranks) probabilities in [0, 1)")
        if "click" in variables and rho.shape != variables["click"].shape[1:]:
            raise ParameterError("repeat and click must have the same draws and ranks")
        variables["repeat"] = xr.DataArray(rho[None], dims=("chain", "draw", "rank"),
                                           coords={"rank": np.arange(1, rho.shape[1] + 1)})
    for name in ("reclick", "second_look"):
        if name not in parameters:
            continue
        k = np.asarray(parameters[name], dtype=float)
        if k.ndim != 1 or np.any((k < 0) | (k > 1)):
            raise ParameterError(f"{name} must be (draws,) factors in [0, 1]")
        variables[name] = xr.DataArray(k[None], dims=("chain", "draw"))
    if "second_look" in variables and ("reclick" in variables or split):
        raise ParameterError("second_look goes with moves that do not depend on the click "
                             "and without reclick")
    family = _jump_variables(parameters, jump_family, variables)
    kind = "walk" if "walk" in variables else "click-to-click" if family else "dwell"
    tree = xr.DataTree.from_dict({"posterior": xr.Dataset(variables)})
    tree.attrs.update({"parametrises": kind,
                       "spec_name": "posterior_from_parameters", "boundary": boundary,
                       "relevance_level": int(relevance_level)})
    if family:
        tree.attrs["jump_family"] = family
    return Posterior(tree)


def _jump_variables(parameters: Mapping[str, np.ndarray], family: str | None,
                    variables: dict) -> str | None:
    """``jump_exponent`` / ``jump`` of :func:`posterior_from_parameters` into
    ``variables``; their family (None without jumps)."""
    import xarray as xr

    given = [k for k in JUMP_VARIABLES if k in parameters]
    if not given:
        if family is not None:
            raise ParameterError("jump_family without jump_exponent or jump")
        return None
    if "walk" in variables:
        raise ParameterError("a posterior of jumps parametrises the click-to-click chain, "
                             "not the walk: give walk or jump parameters, not both")
    if len(given) == 2:
        raise ParameterError("give jump_exponent (ID / LID decay) or jump (free rows), "
                             "not both")
    if given == ["jump_exponent"]:
        family = "ID" if family is None else family
        if family not in ("ID", "LID"):
            raise ParameterError(f"jump_family of a jump exponent must be 'ID' or 'LID', "
                                 f"got {family!r}")
        g = np.asarray(parameters["jump_exponent"], dtype=float)
        if g.ndim != 1 or g.size == 0 or not np.all(np.isfinite(g)) or np.any(g < 0):
            raise ParameterError("jump_exponent must be (draws,) finite numbers >= 0")
        variables["jump_exponent"] = xr.DataArray(g[None], dims=("chain", "draw"))
        return family
    if family not in (None, "free"):
        raise ParameterError(f"free jump rows are of the family 'free', not {family!r}")
    p = np.asarray(parameters["jump"], dtype=float)
    if p.ndim != 3 or p.shape[1] != p.shape[2] or p.shape[1] < 2:
        raise ParameterError("jump must be (draws, R, R) with R >= 2 ranks")
    ranks = np.arange(p.shape[1])
    if np.any(p < 0) or not np.allclose(p.sum(-1), 1.0, rtol=0, atol=1e-9) \
            or np.any(p[:, ranks, ranks] != 0):
        raise ParameterError("jump: each row must be probabilities over the other ranks "
                             "(zero diagonal) summing to 1")
    variables["jump"] = xr.DataArray(p[None], dims=("chain", "draw", "rank", "to_rank"),
                                     coords={"rank": ranks + 1, "to_rank": ranks + 1})
    return "free"
