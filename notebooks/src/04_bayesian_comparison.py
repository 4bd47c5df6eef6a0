# %% [markdown]
# # Bayesian comparison of systems
# Score runs under every posterior draw of a fitted user model, compare them, and look at
# the whole distribution of P@H over users.

# %%
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np  # noqa: E402

import bayeschain as bc  # noqa: E402
from bayeschain.compare import compare, path_cdf_bands, score  # noqa: E402
from bayeschain.io import read_qrels, read_run  # noqa: E402
from bayeschain.plots import plot_cdf_bands, plot_forest  # noqa: E402

root = Path(bc.__file__).resolve().parents[1] / "data"
post = bc.fit(bc.read_clicks(root / "trec_session_2013" / "sessiontrack2013.xml.gz"),
              "rwbm-conjugate", draws=1000, chains=2)
qrels = read_qrels(root / "trec_eval" / "qrels.test")
runs = {"full": read_run(root / "trec_eval" / "results.test"),
        "truncated": read_run(root / "trec_eval" / "results.trunc")}
scores = score(runs, qrels, "PatH(model='rwbm', order=2)", post)
comparison = compare(scores, rope=0.005)
print(comparison.uncertainty)
comparison.pairs

# %%
boot = compare(scores, rope=0.005, topics="bayesian-bootstrap", seed=1)
print(boot.uncertainty)
boot.pairs

# %%
fig, axes = plt.subplots(1, 2, figsize=(11, 4))
plot_forest(axes[0], scores, title="P@H (RWBM, order 2)")
rel = np.array([1, 0, 0, 1, 0, 0, 1, 0, 0, 1.0])
plot_cdf_bands(axes[1], path_cdf_bands(rel, "rwbm", post, max_draws=100, seed=1), label="r")
fig.tight_layout()
fig
