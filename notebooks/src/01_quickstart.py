# %% [markdown]
# # bayeschain quickstart
#
# Evaluate ranked lists with a Markov-chain user model, then learn that model from clicks
# and report scores with credible intervals.

# %%
import numpy as np

import bayeschain as bc
from bayeschain import chains

# %% [markdown]
# ## 1. A user model is a chain
# A random walk over ranks: forward 0.5, backward 0.25, stop otherwise (P@H paper, Fig. 1d).

# %%
walk = bc.browsing.build_chain("rwbm", 10, p=0.5, q=0.25, p1=0.75)
run = np.array([1, 0, 0, 1, 0, 0, 1, 0, 0, 1.0])
print("E[T(H)] =", chains.expected_reward(walk, run))
print("E[H]    =", chains.expected_stopping_time(walk))
print("E[P@H]  =", chains.expected_ratio(walk, run))

# %% [markdown]
# ## 2. Measure strings
# Classical measures are chain instances; all are evaluated from strings.

# %%
for m in ["P@10", "AP", "RBP(p=0.5)", "nDCG@10", "ERR@10", "MP(model='GL_AD_ID')",
          "PatH(model='rwbm', p=0.5, q=0.25, p1=0.75)"]:
    print(f"{m:45s} {bc.evaluate(m, run):.4f}")

# %% [markdown]
# ## 3. From clicks to a posterior to scores with intervals

# %%
from pathlib import Path

data = Path(bc.__file__).resolve().parents[1] / "data" / "trec_session_2013"
log = bc.read_clicks(data / "sessiontrack2013.xml.gz")
print(log)
post = bc.fit(log, seed=1)      # spec "walk": the walk P@H scores, examinations hidden
bc.inference.walk_summary(post).round(3)

# %%
from bayeschain.comparison import compare
from bayeschain.io import read_qrels, read_run
from bayeschain.scoring import score

trec = data.parent / "trec_eval"
qrels = read_qrels(trec / "qrels.test")
runs = {"full": read_run(trec / "results.test"), "truncated": read_run(trec / "results.trunc")}
scores = score(runs, qrels, "PatH(model='rwbm', order=2)", post)
compare(scores).pairs
