# %% [markdown]
# # Calibrating user models from click logs
# TREC Session 2013 (bundled) and CLARA2 (when ../shared is present): statistics, exact and
# NUTS posteriors, posterior predictive checks.

# %%
from pathlib import Path

import matplotlib.pyplot as plt

import bayeschain as bc  # noqa: E402
from bayeschain.inference import model_data, predictive_backward_share  # noqa: E402
from bayeschain.plots import plot_predictive_check  # noqa: E402

root = Path(bc.__file__).resolve().parents[1]
logs = {"TREC Session 2013": root / "data" / "trec_session_2013" / "sessiontrack2013.xml.gz",
        "CLARA2": root.parent / "shared" / "data" / "clara2" / "CLARA2SearchLog_beta"}
logs = {k: v for k, v in logs.items() if v.exists()}
list(logs)

# %%
fits = {}
for name, path in logs.items():
    stats = bc.click_statistics(bc.read_clicks(path), backend="pandas")
    post = bc.fit(stats, "rwbm-conjugate", draws=1000, chains=2)
    fits[name] = (stats, post)
    print(name, f"backward share of click-to-click moves {stats.backward_share():.3f}")
    summary = post.summary()
    print(summary[summary["parameter"].str.startswith("holding")].head(3))

# %%
fig, axes = plt.subplots(1, len(fits), figsize=(5 * len(fits), 3.5), squeeze=False)
for ax, (name, (stats, post)) in zip(axes[0], fits.items(), strict=True):
    check = predictive_backward_share(post, model_data(stats, 10), seed=1)
    plot_predictive_check(ax, check, label=f"{name}: backward share")
fig.tight_layout()
fig
