# %% [markdown]
# # Reproducing the seed papers' numbers
# P@H (ICTIR 2020) Section 5.2 and Figure 1, Markov Precision Table 4 (SIGIR 2014), the
# ESL examples (SIGIR 1988), the EPRUM key example (SIGIR 2006) and MsM on a session.

# %%
import numpy as np

from bayeschain.measures import (
                                 eprum_precision,
                                 expected_search_length,
                                 markov_precision,
                                 msm,
                                 path_distribution,
                                 path_expectation,
                                 search_length_distribution,
                                 stochastic_dominance,
)

r = np.array([1, 0, 0, 1, 0, 0, 1, 0, 0, 1.0])
s = np.array([0, 1, 1, 1, 1, 0, 0, 0, 0, 0.0])
print("P@10 (DFBM):", path_expectation(r, "dfbm"), path_expectation(s, "dfbm"))
print("AP (dynamic chain):", round(float(path_expectation(r, "ap")), 2),
      round(float(path_expectation(s, "ap")), 2))
print("RBP(p=0.5) (SFBM, order 2):", round(float(path_expectation(r, "sfbm", order=2, p=0.5)), 2),
      round(float(path_expectation(s, "sfbm", order=2, p=0.5)), 2))
print(stochastic_dominance(path_distribution(r, "ap"), path_distribution(s, "ap")))

# %% [markdown]
# ## Figure 1 (CDFs of P@H under the four browsing models)

# %%
import runpy
import sys
import tempfile
from pathlib import Path

import matplotlib

import bayeschain as bc

matplotlib.use("Agg")
script = Path(bc.__file__).resolve().parents[1] / "notebooks" / "figure1_path_cdfs.py"
target = Path(tempfile.mkdtemp()) / "figure1.png"
sys.argv = ["figure1", str(target)]
runpy.run_path(str(script), run_name="__main__")
from IPython.display import Image  # noqa: E402

Image(str(target))

# %% [markdown]
# ## Markov Precision, Table 4

# %%
runs = np.array([(1, 1, 1, 1, 0, 0, 0, 1, 0, 0), (1, 1, 1, 0, 1, 0, 0, 0, 1, 0),
                 (1, 1, 0, 1, 1, 0, 0, 0, 0, 1)], dtype=float)
print("MP (GL_AD_ID):", np.round(markov_precision(runs, "GL_AD_ID"), 4), "printed 0.9205 0.8668 0.8120")

# %% [markdown]
# ## Expected Search Length, Examples 2.1, 2.2, 3.1

# %%
levels = [(1, 1), (1, 2), (2, 3)]
print(expected_search_length(levels, 1, exact=True), search_length_distribution(levels, 2, exact=True))
print(search_length_distribution([(0, 1), (2, 3)], 1, exact=True))

# %% [markdown]
# ## EPRUM key example (Table 1) and MsM on a session

# %%
nav = np.array([[0.4, 0.4], [0.6, 0.4], [1.0, 0.0]])
print("EPRUM precision at recall 1, 2:", eprum_precision(nav, [True, True], recall=1),
      eprum_precision(nav, [True, True], recall=2))
session = np.array([[1, 0, 2], [0, 1, 0], [2, 0, 1]])
print("MsM:", msm(session, 0.5, 0.2, 0.2, 0.1), msm(session, 0.5, 0.2, 0.2, 0.1, "log"))
