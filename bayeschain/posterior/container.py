"""Posterior draws of a user model, with provenance, diagnostics and safe storage.

A :class:`Posterior` wraps an ``xarray.DataTree`` laid out as ArviZ 1.x expects: a
``posterior`` group of variables with dims ``(chain, draw, ...)`` (``transition``:
``(chain, draw, rank, category)``; ``holding_rate`` or ``log_dwell_mean`` /
``log_dwell_sd``: ``(chain, draw, rank)``), an optional ``sample_stats`` group (NUTS), and
attrs recording the bayeschain version, the spec (its TOML text and digest), a hash of the
data, the seed, the method and the sampler's settings as fitted (``sampler``: JSON of the
spec's ``[sampler]`` with the caller's overrides, e.g. ``bayeschain fit --tune``).
ArviZ's functions and plots take ``posterior.tree`` directly.

**Integrity.**  :meth:`Posterior.save` refuses draws outside their domain and stores a
SHA-256 digest of the content (every group's variables and coordinates: names, dims,
attrs and values in a canonical byte form; every group's attrs but the digest itself) in
the root attr ``content_digest``; :meth:`Posterior.load` recomputes it and refuses a file
that no longer matches (an error naming the file), then checks the domain of every
variable (:func:`check_domain`: finite; probabilities in [0, 1]; each row of the walk's
moves, the click-to-click transitions and the jump matrix sums to 1 within 1e-9; rates
and scales positive; an error naming the variable).  A file without a digest (written
before digests were stored) still loads, with its domain checked and a one-line warning;
saving it again adds the digest.  The digest detects changes, not forgery: anyone can
recompute it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

import numpy as np
import pandas as pd
import xarray as xr

from ..errors import BayeschainError
from .draws import stacked_draws
from .metadata import Metadata
from .storage import DIGEST_ATTR, check_domain, content_digest, read_tree

#: a variable's attr ``draws`` with this value: exact, independent posterior draws (no MCMC)
INDEPENDENT_DRAWS = "independent"
#: ... with this value: each draw is a Markov chain's draw of other quantities (checked
#: there) plus an independent draw of a Laplace approximation (the documents' effects at
#: their mode, :mod:`bayeschain.inference.walk.documents`)
LAPLACE_DRAWS = "laplace"
#: the values of attr ``draws`` whose variables R-hat and ESS do not diagnose
UNCHAINED_DRAWS = (INDEPENDENT_DRAWS, LAPLACE_DRAWS)


@dataclass
class Posterior:
    """Posterior draws and their provenance (see the module docstring)."""

    tree: xr.DataTree

    @property
    def posterior(self) -> xr.Dataset:
        return self.tree["posterior"].to_dataset()

    @property
    def attrs(self) -> dict:
        return dict(self.tree.attrs)

    @property
    def n_draws(self) -> int:
        ds = self.posterior
        return int(ds.sizes["chain"] * ds.sizes["draw"])

    @property
    def parametrises(self) -> str:
        """Which chain the draws parametrise: ``"walk"`` (the walk P@H scores),
        ``"click-to-click"`` (where the next click lands) or ``"dwell"``."""
        return self.metadata.parametrises

    @cached_property
    def metadata(self) -> Metadata:
        """The provenance attrs as a typed record (:class:`~.metadata.Metadata`)."""
        return Metadata.from_attrs(self.tree.attrs)

    def transition_probabilities(self) -> xr.DataArray:
        """``(chain, draw, rank, category)`` probabilities of what follows a click."""
        return self.posterior["transition"]

    def holding_rates(self) -> xr.DataArray:
        """``(chain, draw, rank)`` exponential dwell rates mu (per second)."""
        return self.posterior["holding_rate"]

    def to_arviz(self):
        """The draws as ArviZ's own container (``InferenceData`` for ArviZ 0.x, the
        ``DataTree`` itself for ArviZ 1.x), ready for ``az.plot_posterior`` and friends.
        Chosen by ArviZ's major version (ArviZ 1.x warns when ``InferenceData`` is asked
        for)."""
        import arviz as az

        if int(az.__version__.split(".")[0]) < 1:
            groups = {"posterior": self.posterior}
            for name in ("sample_stats", "log_likelihood", "constant_data"):
                if name in self.tree.children:
                    groups[name] = self.tree[name].to_dataset()
            return az.InferenceData(**groups)
        return self.tree

    def simultaneous_interval(self, name, prob: float = 0.95):
        """A joint credible band: the ``prob`` share of the draws lies inside it in *every*
        coordinate of variable ``name`` at once (``name`` may be a list of variables: one
        band over all their coordinates, returned as a dict name -> (lower, upper)).

        Marginal 95% intervals each miss about 5% of the truth, so with 48 parameters some
        2.4 truths fall outside by design; the band answers "are all parameters where the
        posterior says they are" at the stated level.  Built from the draws' marginal ranks
        (the max-rank / sup-t construction of Montiel Olea & Plagborg-Moller, J. Appl.
        Econometrics 34 (2019), 1-17): each draw's extremity is its most extreme rank over
        the coordinates, the band's rank threshold is the ``prob`` quantile of those
        extremities, and each coordinate's band runs between its order statistics at that
        threshold.  Returns ``(lower, upper)`` with the variable's non-sample shape.
        """
        if not 0 < prob < 1:
            raise ValueError(f"prob must lie in (0, 1), got {prob}")
        names = [name] if isinstance(name, str) else list(name)
        shapes, columns = [], []
        for n in names:
            flat = stacked_draws(self.posterior[n])
            shapes.append(flat.shape[1:])
            columns.append(flat.values.reshape(flat.shape[0], -1))
        x = np.concatenate(columns, axis=1)
        n_draws = x.shape[0]
        ranks = np.argsort(np.argsort(x, axis=0, kind="stable"), axis=0) + 1   # 1..n
        extremity = np.maximum(ranks, n_draws + 1 - ranks).max(axis=1)
        c = int(np.sort(extremity)[int(np.ceil(prob * n_draws)) - 1])
        ordered = np.sort(x, axis=0)
        lower, upper = ordered[n_draws - c], ordered[c - 1]
        out, start = {}, 0
        for n, shape in zip(names, shapes, strict=True):
            size = int(np.prod(shape))
            out[n] = (lower[start:start + size].reshape(shape),
                      upper[start:start + size].reshape(shape))
            start += size
        return out[name] if isinstance(name, str) else out

    def summary(self, ci_prob: float = 0.95) -> pd.DataFrame:
        """Mean, sd and the equal-tailed ``ci_prob`` interval of every parameter (a parameter
        shared by all ranks is listed once, with rank ``all``)."""
        rows = []
        lo, hi = (1 - ci_prob) / 2, 1 - (1 - ci_prob) / 2
        for name, da in self.posterior.data_vars.items():
            if "rank" in da.dims and da.sizes["rank"] > 1 and bool(
                    (da == da.isel(rank=0)).all()):
                da = da.isel(rank=[0]).assign_coords(rank=["all"])   # shared by all ranks
            flat = stacked_draws(da)
            mean = flat.mean("sample")
            sd = flat.std("sample")
            q = flat.quantile([lo, hi], dim="sample")
            for idx in np.ndindex(mean.shape):
                coords = {d: mean[d].values[i] for d, i in zip(mean.dims, idx, strict=True)}
                label = name + ("[" + ", ".join(str(v) for v in coords.values()) + "]"
                                if coords else "")
                rows.append({"parameter": label, "mean": float(mean.values[idx]),
                             "sd": float(sd.values[idx]),
                             f"lower_{ci_prob:g}": float(q.values[(0,) + idx]),
                             f"upper_{ci_prob:g}": float(q.values[(1,) + idx])})
        return pd.DataFrame(rows)

    def diagnostics(self, *, sampled_only: bool = False) -> pd.DataFrame:
        """Rank-normalised R-hat and bulk ESS per parameter
        (:mod:`~bayeschain.posterior.diagnostics`, ArviZ's definitions), and divergences
        (NUTS fits).  Constant parameters (structural zeros) have no R-hat: left out of the
        maximum.  Column ``draws``: what made the parameter's draws, ``"chain"`` (MCMC)
        or its attr ``draws``: ``"independent"`` (exact, independent draws of its
        posterior, e.g. conjugate holding rates beside a NUTS walk; column
        ``independent`` says so too) or ``"laplace"`` (independent Laplace draws around
        quantities of the chain checked in their own variable: documents integrated out by
        Laplace, whose trend is ``click_trend``).  R-hat and ESS diagnose neither (with 2 chains of
        300 independent draws, the largest R-hat of 49 ranks exceeds 1.01 in about half
        the cases); ``sampled_only=True`` keeps the MCMC parameters only."""
        rows = []
        for name, da in self.posterior.data_vars.items():
            made = da.attrs.get("draws", "chain")
            if sampled_only and made in UNCHAINED_DRAWS:
                continue
            rows.append({"parameter": name, **self._worst_of(name, da),
                         "independent": made == INDEPENDENT_DRAWS, "draws": made})
        table = pd.DataFrame(rows, columns=["parameter", "max_rhat", "min_ess", "independent",
                                            "draws"])
        table.attrs["divergences"] = self.divergences()
        return table

    def _worst_of(self, name: str, da: xr.DataArray) -> dict:
        """``max_rhat`` and ``min_ess`` of one variable, computed once per array of draws
        (a fit checks them and its report prints them: seconds each for 10^4 documents).
        The array is made read-only once read, so that its draws cannot change under the
        numbers kept (edit a copy and build a new posterior instead)."""
        from .diagnostics import rhat_and_ess

        raw = da.values
        cache = self.__dict__.setdefault("_worst_cache", {})
        held = cache.get(name)
        if held is not None and held[0] is raw and held[1] == da.dims:
            return held[2]
        values = da.transpose("chain", "draw", ...).values
        rhat, ess = rhat_and_ess(values)
        worst = {"max_rhat": float(np.nanmax(rhat)) if np.isfinite(rhat).any() else
                 float("nan"),
                 "min_ess": float(np.nanmin(ess)) if np.isfinite(ess).any() else float("nan")}
        raw.flags.writeable = False
        cache[name] = (raw, da.dims, worst)
        return worst

    def divergences(self) -> int:
        if "sample_stats" not in self.tree.children:
            return 0
        stats = self.tree["sample_stats"].to_dataset()
        return int(stats["diverging"].sum()) if "diverging" in stats else 0

    def to_netcdf_bytes(self) -> bytes:
        """The netCDF file's bytes (HDF5 by h5netcdf, written in memory: a full disk or a
        file-size limit then fails in a plain write, not inside HDF5), stamped with the
        bayeschain version when the tree has none and with the content digest
        (:func:`content_digest`)."""
        from .. import __version__

        check_domain(self.tree)
        tree = self.tree.copy()
        tree.attrs.setdefault("bayeschain_version", __version__)
        tree.attrs[DIGEST_ATTR] = content_digest(tree)
        return bytes(tree.to_netcdf(engine="h5netcdf"))

    def save(self, path, *, force: bool = False) -> Path:
        """Write to netCDF atomically (:func:`~bayeschain.io.write.atomic_output`); an
        existing file is kept unless ``force``.  Only ``.nc`` names are accepted."""
        from ..io.write import atomic_output

        path = Path(path)
        if path.suffix != ".nc":
            raise BayeschainError("a posterior is written as netCDF: name it *.nc", file=path)
        data = self.to_netcdf_bytes()
        with atomic_output(path, force=force) as tmp:
            tmp.write_bytes(data)
        return path

    @classmethod
    def load(cls, path, *, spec=None) -> Posterior:
        """Read a saved posterior; refuse one written by another bayeschain version, one
        whose content no longer matches the digest stored at save (a file modified or
        corrupted since), one whose draws are outside their domain (:func:`check_domain`)
        or, when ``spec`` is given, one fitted with a different spec.  A file without a
        digest (written before digests were stored) loads with a warning."""
        import warnings

        from .. import __version__

        path = Path(path)
        if not path.exists():
            raise FileNotFoundError(2, "No such file or directory", str(path))
        if path.is_dir():
            raise IsADirectoryError(21, "Is a directory", str(path))
        tree = read_tree(path)
        attrs = tree.attrs
        if "bayeschain_version" not in attrs or "posterior" not in tree.children:
            raise BayeschainError("not a bayeschain posterior file (no provenance attrs)",
                                  file=path)
        if attrs["bayeschain_version"] != __version__:
            raise BayeschainError(f"posterior written by bayeschain "
                                  f"{attrs['bayeschain_version']}, this is {__version__}; "
                                  f"refit it", file=path)
        stored = attrs.get(DIGEST_ATTR)
        if stored is None:
            warnings.warn(f"{path}: posterior has no content digest (written before "
                          f"bayeschain stored one): its integrity cannot be checked; "
                          f"re-save it to add one", UserWarning, stacklevel=2)
        else:
            try:
                actual = content_digest(tree)
            except (TypeError, ValueError) as exc:
                actual = f"unreadable content ({exc})"
            if stored != actual:
                raise BayeschainError("content does not match the digest stored when it "
                                      "was written: the file was modified or corrupted; "
                                      "refit or restore it", file=path)
        check_domain(tree, file=path)
        if spec is not None and attrs.get("spec_digest") != spec.digest():
            raise BayeschainError(f"posterior was fitted with spec {attrs.get('spec_name')!r} "
                                  f"({attrs.get('spec_digest')}), not {spec.name!r} "
                                  f"({spec.digest()})", file=path)
        return cls(tree)

    def __repr__(self) -> str:
        a = self.attrs
        names = ", ".join(self.posterior.data_vars)
        return (f"Posterior({a.get('spec_name')}, {a.get('method')}, {self.n_draws:,} draws: "
                f"{names})")


def _plain(value):
    """A NumPy scalar among the spec's settings as its Python value (for JSON)."""
    return value.item() if hasattr(value, "item") else str(value)


def make_posterior(variables: dict[str, xr.DataArray], *, spec, data_digest: str, seed: int,
                   method: str, sample_stats: xr.Dataset | None = None,
                   extra_attrs: dict | None = None,
                   extra_groups: dict[str, xr.Dataset] | None = None) -> Posterior:
    from .. import __version__

    groups = {"posterior": xr.Dataset(variables)}
    if sample_stats is not None:
        groups["sample_stats"] = sample_stats
    groups.update(extra_groups or {})
    tree = xr.DataTree.from_dict(groups)
    tree.attrs.update({"bayeschain_version": __version__, "spec": spec.text,
                       "spec_name": spec.name, "spec_digest": spec.digest(),
                       "parametrises": spec.parametrises,
                       "data_digest": data_digest, "seed": int(seed), "method": method,
                       "sampler": json.dumps(spec.sampler, sort_keys=True, default=_plain),
                       **(extra_attrs or {})})
    return Posterior(tree)


