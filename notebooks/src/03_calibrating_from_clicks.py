# %% [markdown]
# # Calibrating user models from click logs
# TREC Session 2013 (bundled) and CLARA2 (when ../shared is present): statistics, exact and
# NUTS posteriors, posterior predictive checks (share of backward moves, deepest clicked
# rank, dwell-time distribution) and the per-rank holding rates with their intervals.

# %%
from pathlib import Path

import matplotlib.pyplot as plt
import pandas as pd

import bayeschain as bc  # noqa: E402
from bayeschain.inference import (  # noqa: E402
    model_data,
    predictive_backward_share,
    predictive_click_depth,
    predictive_dwell_distribution,
)
from bayeschain.plots import plot_distribution_check, plot_predictive_check  # noqa: E402

root = Path(bc.__file__).resolve().parents[1]
logs = {"TREC Session 2013": root / "data" / "trec_session_2013" / "sessiontrack2013.xml.gz",
        "CLARA2": root.parent / "shared" / "data" / "clara2" / "CLARA2SearchLog_beta"}
logs = {k: v for k, v in logs.items() if v.exists()}
list(logs)

# %%
fits, clicklogs = {}, {}
for name, path in logs.items():
    clicklogs[name] = bc.read_clicks(path)
    stats = bc.click_statistics(clicklogs[name], backend="pandas")
    post = bc.fit(stats, "rwbm-conjugate", draws=1000, chains=2)
    fits[name] = (stats, post)
    print(name, f"backward share of click-to-click moves {stats.backward_share():.3f}")

# %% [markdown]
# Per-rank holding rates mu_i (1/s) with 95% credible intervals, and the mean dwell 1/mu_i.

# %%
for name, (_, post) in fits.items():
    mu = post.holding_rates().stack(s=("chain", "draw"))
    table = pd.DataFrame({"rank": mu["rank"].values,
                          "mu mean": mu.mean("s").values,
                          "mu 2.5%": mu.quantile(0.025, "s").values,
                          "mu 97.5%": mu.quantile(0.975, "s").values,
                          "mean dwell (s)": (1 / mu).mean("s").values})
    print(name)
    print(table.round(4).to_string(index=False))

# %%
fig, axes = plt.subplots(1, len(fits), figsize=(5 * len(fits), 3.5), squeeze=False)
for ax, (name, (stats, post)) in zip(axes[0], fits.items(), strict=True):
    check = predictive_backward_share(post, model_data(stats, 10), seed=1)
    plot_predictive_check(ax, check, label=f"{name}: backward share")
    lo, hi = check.interval()
    print(f"{name}: backward share observed {check.observed:.3f}, posterior predictive "
          f"95% [{lo:.3f}, {hi:.3f}]")
fig.tight_layout()
fig

# %% [markdown]
# Whole distributions: the deepest clicked rank of each page (pages replayed under each
# posterior draw from their observed first click) and the dwell-time CDF.  The per-rank
# exponential dwell model reproduces click depth but not the dwell distribution: real dwell
# times have a shorter median and a heavier tail (the `dwell-lognormal` spec models that).

# %%
fig, axes = plt.subplots(2, len(fits), figsize=(5 * len(fits), 7), squeeze=False)
for col, (name, (_, post)) in enumerate(fits.items()):
    depth = predictive_click_depth(post, clicklogs[name], seed=1)
    dwell = predictive_dwell_distribution(post, clicklogs[name], seed=1)
    plot_distribution_check(axes[0, col], depth)
    plot_distribution_check(axes[1, col], dwell)
    axes[0, col].set_xlabel(f"{name}: deepest clicked rank")
    for check in (depth, dwell):
        for label, c in check.summaries.items():
            lo, hi = c.interval()
            print(f"{name} {check.label} {label}: observed {c.observed:.2f}, "
                  f"predictive 95% [{lo:.2f}, {hi:.2f}]")
fig.tight_layout()
fig
