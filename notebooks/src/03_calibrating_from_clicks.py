# %% [markdown]
# # Calibrating the walk from a click log
# The walk that P@H scores examines every rank it visits; the log shows only the clicks.
# `bc.fit(log)` (spec `walk`) learns the walk's per-rank forward, backward and leave
# probabilities and the click probabilities with the examinations hidden (the likelihood
# of every page is exact); the checks below replay the fitted walk on the log's pages.
# The walk is fitted on 75% of the sessions, so that the last cell can predict the clicks
# of the other 25% as click models are judged.  Data: the TREC Session 2013 log bundled
# in `data/`.

# %%
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np

import bayeschain as bc  # noqa: E402
from bayeschain.inference import (  # noqa: E402
    expected_visits,
    heldout_click_metrics,
    predictive_dwell_distribution,
    predictive_walk_checks,
    walk_summary,
)
from bayeschain.plots import plot_distribution_check  # noqa: E402

root = Path(bc.__file__).resolve().parents[1] / "data" / "trec_session_2013"
log = bc.read_clicks(root / "sessiontrack2013.xml.gz")
train, test = log.split(0.25, seed=0)            # sessions: 75% to fit, 25% held out
post = bc.fit(train)                             # the spec's seed: the same draws each run
print(post)
walk_summary(post).round(3)

# %% [markdown]
# E[H]: ranks examined on a 10-result page (revisits counted), with its 95% interval.

# %%
h = expected_visits(post, 10).sum(axis=1)
print(f"E[H] = {h.mean():.2f} [{np.quantile(h, 0.025):.2f}, {np.quantile(h, 0.975):.2f}]")

# %% [markdown]
# Replaying the fitted walk on every page it was fitted to (posterior predictive checks):
# clicks per page, deepest clicked rank, clicks per rank, first and last clicked rank,
# click-to-click distances, with their scalar summaries.

# %%
checks = predictive_walk_checks(post, train, seed=1)
fig, axes = plt.subplots(2, 3, figsize=(15, 7))
for ax, check in zip(axes.ravel(), checks.distributions(), strict=True):
    plot_distribution_check(ax, check)
    ax.set_xlabel(check.label)
fig.tight_layout()
for name, c in checks.clicks_per_page.summaries.items():
    lo, hi = c.interval()
    print(f"{name}: observed {c.observed:.3f}, predictive 95% [{lo:.3f}, {hi:.3f}]")
fig

# %% [markdown]
# Dwell times: the per-rank exponential holding rates against the log's dwell-time CDF
# (real dwell times have a shorter median and a heavier tail than the exponential).

# %%
dwell = predictive_dwell_distribution(post, train, seed=1)
fig, ax = plt.subplots(figsize=(5, 3.5))
plot_distribution_check(ax, dwell)
fig

# %% [markdown]
# Held-out click prediction, as click models are judged (PyClick's definitions): the
# walk fitted on 75% of the sessions predicts the clicks of the other 25%.

# %%
held = heldout_click_metrics(post, test)
held.as_dict()
