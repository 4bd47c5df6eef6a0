"""Posterior draws of a user model, with provenance, diagnostics and safe storage.

A :class:`Posterior` wraps an ``xarray.DataTree`` laid out as ArviZ 1.x expects: a
``posterior`` group of variables with dims ``(chain, draw, ...)`` (``transition``:
``(chain, draw, rank, category)``; ``holding_rate`` or ``log_dwell_mean`` /
``log_dwell_sd``: ``(chain, draw, rank)``), an optional ``sample_stats`` group (NUTS), and
attrs recording the bayeschain version, the spec (its TOML text and digest), a hash of the
data, the seed and the method.  ArviZ's functions and plots take ``posterior.tree``
directly.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import xarray as xr

from ..errors import BayeschainError


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
        return str(self.attrs.get("parametrises", ""))

    def transition_probabilities(self) -> xr.DataArray:
        """``(chain, draw, rank, category)`` probabilities of what follows a click."""
        return self.posterior["transition"]

    def holding_rates(self) -> xr.DataArray:
        """``(chain, draw, rank)`` exponential dwell rates mu (per second)."""
        return self.posterior["holding_rate"]

    def to_arviz(self):
        """The draws as ArviZ's own container (``InferenceData`` for ArviZ 0.x, the
        ``DataTree`` itself for ArviZ 1.x), ready for ``az.plot_posterior`` and friends."""
        import arviz as az

        if hasattr(az, "InferenceData"):
            groups = {"posterior": self.posterior}
            if "sample_stats" in self.tree.children:
                groups["sample_stats"] = self.tree["sample_stats"].to_dataset()
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
            flat = self.posterior[n].stack(sample=("chain", "draw")).transpose("sample", ...)
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
            flat = da.stack(sample=("chain", "draw"))
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

    def diagnostics(self) -> pd.DataFrame:
        """R-hat and bulk ESS per parameter (ArviZ), and divergences (NUTS fits)."""
        import warnings

        import arviz as az

        # constant parameters (structural zeros) have no R-hat or ESS: ArviZ returns NaN
        # for them, which is left out of the max / min below
        with warnings.catch_warnings(), np.errstate(invalid="ignore", divide="ignore"):
            warnings.simplefilter("ignore", RuntimeWarning)
            rhat = az.rhat(self.posterior)
            ess = az.ess(self.posterior, method="bulk")
        rows = []
        rhat_ds = rhat["posterior"].to_dataset() if isinstance(rhat, xr.DataTree) else rhat
        ess_ds = ess["posterior"].to_dataset() if isinstance(ess, xr.DataTree) else ess
        for name in self.posterior.data_vars:
            rows.append({"parameter": name, "max_rhat": float(rhat_ds[name].max(skipna=True)),
                         "min_ess": float(ess_ds[name].min(skipna=True))})
        table = pd.DataFrame(rows)
        table.attrs["divergences"] = self.divergences()
        return table

    def divergences(self) -> int:
        if "sample_stats" not in self.tree.children:
            return 0
        stats = self.tree["sample_stats"].to_dataset()
        return int(stats["diverging"].sum()) if "diverging" in stats else 0

    def save(self, path, *, force: bool = False) -> Path:
        """Write to netCDF atomically; an existing file is kept unless ``force``."""
        from ..io.write import atomic_output

        with atomic_output(path, force=force) as tmp:
            self.tree.to_netcdf(tmp, engine="h5netcdf")
        return Path(path)

    @classmethod
    def load(cls, path, *, spec=None) -> Posterior:
        """Read a saved posterior; refuse one written by another bayeschain version or,
        when ``spec`` is given, fitted with a different spec."""
        from .. import __version__

        path = Path(path)
        if not path.exists():
            raise FileNotFoundError(2, "No such file or directory", str(path))
        try:
            tree = xr.open_datatree(path, engine="h5netcdf").load()
        except (OSError, ValueError) as exc:
            raise BayeschainError(f"not a bayeschain posterior file ({exc})".splitlines()[0],
                                  file=path) from None
        attrs = tree.attrs
        if "bayeschain_version" not in attrs or "posterior" not in tree.children:
            raise BayeschainError("not a bayeschain posterior file (no provenance attrs)",
                                  file=path)
        if attrs["bayeschain_version"] != __version__:
            raise BayeschainError(f"posterior written by bayeschain "
                                  f"{attrs['bayeschain_version']}, this is {__version__}; "
                                  f"refit it", file=path)
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


def make_posterior(variables: dict[str, xr.DataArray], *, spec, data_digest: str, seed: int,
                   method: str, sample_stats: xr.Dataset | None = None,
                   extra_attrs: dict | None = None) -> Posterior:
    from .. import __version__

    groups = {"posterior": xr.Dataset(variables)}
    if sample_stats is not None:
        groups["sample_stats"] = sample_stats
    tree = xr.DataTree.from_dict(groups)
    tree.attrs.update({"bayeschain_version": __version__, "spec": spec.text,
                       "spec_name": spec.name, "spec_digest": spec.digest(),
                       "parametrises": spec.parametrises,
                       "data_digest": data_digest, "seed": int(seed), "method": method,
                       **(extra_attrs or {})})
    return Posterior(tree)
