# %% [markdown]
# # Bayesian comparison of systems
# Score runs under every posterior draw of a fitted user model, compare them, and look at
# the whole distribution of P@H over users.

# %%
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np  # noqa: E402

import bayeschain as bc  # noqa: E402
from bayeschain.comparison import compare  # noqa: E402
from bayeschain.io import read_qrels, read_run  # noqa: E402
from bayeschain.plots import plot_cdf_bands, plot_forest  # noqa: E402
from bayeschain.scoring import path_cdf_bands, score  # noqa: E402

root = Path(bc.__file__).resolve().parents[1] / "data"
post = bc.fit(bc.read_clicks(root / "trec_session_2013" / "sessiontrack2013.xml.gz"), seed=1)
qrels = read_qrels(root / "trec_eval" / "qrels.test")
runs = {"full": read_run(root / "trec_eval" / "results.test"),
        "truncated": read_run(root / "trec_eval" / "results.trunc")}
scores = score(runs, qrels, "PatH(model='rwbm', order=2)", post)
comparison = compare(scores, rope=0.005, seed=1)     # user model + topics (default)
print(comparison.uncertainty)
comparison.pairs

# %% [markdown]
# What each source of uncertainty contributes: the HDI width of every difference with the
# topics fixed (user model alone), from the posterior-mean scores with resampled topics
# (topics alone), and both (the reported interval).

# %%
print(compare(scores, rope=0.005, topics="fixed").uncertainty)
comparison.decomposition

# %% [markdown]
# ## Laws of P@H over users
# Under each posterior draw, the exact law of P@H over users: does one run dominate the
# other (every user percentile at least as good), are the laws equal, or do they cross?
# And how often does one random user under `full` beat one under `truncated`?

# %%
dom = bc.dominance_probability(runs, qrels, "PatH(model='rwbm')@10", post, "full",
                               "truncated", max_draws=100, seed=1, law_tol=1e-8)
print(dom.summary())
dom.topics

# %%
fig, axes = plt.subplots(1, 2, figsize=(11, 4))
plot_forest(axes[0], scores, title="P@H (RWBM, order 2)")
rel = np.array([1, 0, 0, 1, 0, 0, 1, 0, 0, 1.0])
plot_cdf_bands(axes[1], path_cdf_bands(rel, "rwbm", post, max_draws=100, seed=1), label="r")
fig.tight_layout()
fig

# %% [markdown]
# ## Users whose moves depend on what they found
# `walk-relevance` learns, from the log and its qrels, how users move on after examining
# a relevant document and after any other (examinations hidden, as in `walk`);
# `PatH(model='drwbm')` scores runs under that walk (one chain per list and draw, solved by
# a compiled kernel).

# %%
session = root / "trec_session_2013"
rel_post = bc.fit(bc.read_clicks(session / "sessiontrack2013.xml.gz"), "walk-relevance",
                  qrels=read_qrels(session / "qrels.txt"), seed=1)
moves = rel_post.posterior["walk"].sel(rank=2).mean(("chain", "draw"))
print(moves.to_pandas().round(3))
rel_scores = score(runs, qrels, "PatH(model='drwbm', order=2)", rel_post)
compare(rel_scores, rope=0.005).pairs
