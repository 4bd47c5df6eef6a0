r"""Classic click models as peers of the benchmark: RCTR, PBM, CM, UBM, DBN and SDBN.

    python3 benchmarks/click_model_peers.py [--logs trec clara2 wscd] [--models PBM UBM ...]

Each model is written from its textbook definition (Chuklin, Markov & de Rijke, *Click
Models for Web Search*, Morgan & Claypool, 2015, chapters 3-4; the definitions PyClick
implements, ``markovi/PyClick``, ``pyclick/click_models``), vectorised with NumPy over
pages of 10 results.  Notation for a page of query ``q`` with documents ``u_1..u_10``:
``C_r`` click on rank ``r``, ``E_r`` examination, ``A_r`` attractiveness, ``S_r``
satisfaction; ``a_qu = P(A = 1)``, ``s_qu = P(S = 1 | C = 1)``.

* **RCTR** (rank CTR): ``P(C_r = 1) = rho_r``, independent clicks.
* **PBM** (position-based model): ``C_r = E_r A_r``, ``P(E_r = 1) = gamma_r``,
  ``P(A_r = 1) = a_{q u_r}``, all independent: ``P(C_r = 1) = gamma_r a_{q u_r}``.
* **CM** (cascade model, Craswell et al. 2008): ``E_1 = 1``, ``C_r = E_r A_r``,
  ``E_{r+1} = E_r (1 - C_r)``: ``P(C_r = 1) = a_{q u_r} prod_{i<r} (1 - a_{q u_i})``; the
  model allows one click.
* **UBM** (user browsing model, Dupret & Piwowarski 2008): ``C_r = E_r A_r`` with
  ``P(E_r = 1 | C_1..C_{r-1}) = gamma_{r r'}``, ``r'`` the rank of the last click above
  ``r`` (0 when none).
* **DBN** (dynamic Bayesian network, Chapelle & Zhang 2009): ``E_1 = 1``,
  ``C_r = E_r A_r``, ``P(S_r = 1 | C_r = 1) = s_{q u_r}`` (``S_r = 0`` without a click),
  ``P(E_{r+1} = 1 | E_r = 1, S_r = 0) = gamma``, ``E_{r+1} = 0`` when ``E_r = 0`` or
  ``S_r = 1``.
* **SDBN** (simplified DBN): the DBN with ``gamma = 1``; every rank down to the last
  click is taken as examined (all ten on a page without clicks).

Estimation follows PyClick's conventions: every probability starts at 0.5 and is
estimated as ``(1 + successes) / (2 + trials)`` (add-one smoothing; with EM the expected
successes given the current parameters), EM parameters are capped at ``1 - 1e-6``, EM runs
50 iterations; RCTR, CM and SDBN use closed-form counts (CM: ranks down to the first
click, all ten on a page without clicks; SDBN: ``a`` over ranks down to the last click,
all ten on a page without clicks, ``s`` = share of a document's clicks that are the
page's last click).  A query-document pair never seen in training
gets the prior value 0.5, as in PyClick.

The E-steps are exact: PBM and UBM from the local posteriors
``P(A_r = 1 | C_r = 0) = a (1 - gamma) / (1 - a gamma)`` and its mirror for ``E_r``; DBN by
forward-backward over ``E_r``, ``gamma`` from the expected transitions ``r -> r+1`` with
``S_r = 0`` (ranks 1..9).  PyClick's DBN E-step (commit 98e7e46) differs: it takes a
page without clicks as examined to the bottom (its results get attractiveness posterior 0
and every rank counts as a continuation, which drives ``gamma`` to ~1), uses the
unconditional examination probability below the last click, reads the parameters of
ranks ``1, 2, ...`` instead of ``r+1, r+2, ...`` for the clicks below ``r`` in its
``gamma`` step, weighs "``E_r = 0``" by ``1 - a_r``, and counts a continuation from
rank 10.  With these five points changed, PyClick's DBN gives this one's parameters to
1e-14.

Predictions (``predict``): ``p_click[s, r] = P(C_r = 1)`` (PyClick's full click
probability) and ``p_conditional[s, r] = P(C_r = c_r | C_1..C_{r-1})`` of the observed
clicks (PyClick's conditional click probability).  For CM, a click below the first one has
conditional probability 1e-6 (PyClick's ``PROB_MIN``) and no click there probability 1
(PyClick gives 1e-6 to every rank below the first click and uses the unconditional
probability above it).  Metrics: :func:`bayeschain.inference.click_metrics`.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import machine, table  # noqa: E402

from bayeschain.inference import click_metrics  # noqa: E402
from bayeschain.io import read_clicks  # noqa: E402
from bayeschain.io.clicklog import ClickLog, concat_logs  # noqa: E402

RANKS = 10
PROB_MIN = 1e-6                 # PyClick's ParamEM.PROB_MIN (cap 1 - PROB_MIN; CM's floor)
EM_ITERATIONS = 50              # PyClick's EMInference.ITERATION_NUM
PRIOR = 0.5                     # value of a parameter with no data: (1 + 0) / (2 + 0)
DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
LOGS = {"trec": [Path(__file__).resolve().parents[1] / "data" / "trec_session_2013"
                 / "sessiontrack2013.xml.gz"],
        "clara2": [DATA / "clara2" / "CLARA2SearchLog_beta"],
        "wscd": [DATA / "pyclick_yandex_wscd" / "trainSample",
                 DATA / "pyclick_yandex_wscd" / "testSample"]}


# --------------------------------------------------------------------------- data

def present_logs(names: list[str]) -> list[str]:
    """The logs of ``names`` whose files are here (CLARA2 and WSCD are not part of the
    project); says which are skipped and why."""
    gone = [p for name in names for p in LOGS[name] if not p.exists()]
    if gone:
        print(f"skipped: the click-log samples are not here ({gone[0]})")
    return [name for name in names if all(p.exists() for p in LOGS[name])]


def pages_of(log: ClickLog) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(queries (P,), docs (P, 10), clicks (P, 10) bool)`` of the pages of ``log`` that
    show exactly 10 results (ranks 1..10), ordered by ``serp_id``.  A rank is clicked
    when the page has at least one click event on it (clicks without a rank, i.e. on
    documents not on the page, are left out; repeated clicks count once)."""
    return _full_pages(log)[1:]


def _full_pages(log: ClickLog):
    """``(serp_ids, queries, docs, clicks)``: :func:`pages_of` with the pages' ids."""
    res = log.results.dropna(subset=["serp_id", "rank"])
    res = res.astype({"serp_id": "int64", "rank": "int64"})
    by_page = res.groupby("serp_id")["rank"]
    shape = pd.DataFrame({"n": by_page.size(), "k": by_page.nunique(), "lo": by_page.min(),
                          "hi": by_page.max()})
    full = shape.index[(shape["n"] == RANKS) & (shape["k"] == RANKS) & (shape["lo"] == 1)
                       & (shape["hi"] == RANKS)]
    ev = log.events
    first = ev[(ev["event"] == "query") & ev["serp_id"].notna()].drop_duplicates("serp_id")
    page_query = pd.Series(first["query_id"].to_numpy(),
                           index=first["serp_id"].astype("int64").to_numpy())
    serps = np.intersect1d(full.to_numpy(), page_query.index.to_numpy())   # sorted
    res = res[res["serp_id"].isin(serps)].sort_values(["serp_id", "rank"])
    docs = res["doc_id"].astype(str).to_numpy(dtype=object).reshape(-1, RANKS)
    queries = page_query.reindex(serps).astype(str).to_numpy(dtype=object)
    cl = ev[(ev["event"] == "click") & ev["rank"].notna() & ev["serp_id"].notna()]
    cl = cl[cl["serp_id"].isin(serps) & (cl["rank"] <= RANKS)]
    clicks = np.zeros((serps.size, RANKS), dtype=bool)
    clicks[np.searchsorted(serps, cl["serp_id"].astype("int64").to_numpy()),
           cl["rank"].astype("int64").to_numpy() - 1] = True
    return serps, queries, docs, clicks


def load_log(name: str) -> ClickLog:
    """``trec`` (TREC Session 2013, bundled), ``clara2`` (CLARA2 search log) or ``wscd``
    (PyClick's trainSample + testSample)."""
    paths = LOGS[name]
    logs = [read_clicks(p) for p in paths]
    return logs[0] if len(logs) == 1 else concat_logs(logs, source=f"{name}: " + " + ".join(
        p.name for p in paths))


def document_walk(log: ClickLog):
    """The default walk's pages and model of ``log`` with the documents integrated out:
    clicks per (query, document) pair shown 10 times or more, every document by its
    standardised deviation (what ``documents = "mode"`` fits)."""
    from bayeschain.inference.walk.data import page_data
    from bayeschain.inference.walk.model import WalkModel

    data = page_data(log, clicks="document", default_length=10, min_impressions=10)
    return WalkModel(data, clicks="document", centred_documents=False)


def shared_logs(names):
    """The names among ``names`` whose shared log sample is present, saying which are
    skipped."""
    for name in names:
        if all(p.exists() for p in LOGS[name]):
            yield name
        else:
            print(f"{name}: skipped, the shared log sample is absent")


def split_pages(log: ClickLog, fraction: float = 0.25, seed=0, *, known: bool = True):
    """Train pages and the test pages whose query occurs in train (``log.split``; all test
    pages with ``known=False``: a pair never seen in training gets the prior value)."""
    train, test = log.split(fraction, seed=seed)
    tr = pages_of(train)
    te = pages_of(test)
    keep = np.isin(te[0], np.unique(tr[0])) | (not known)
    return tr, tuple(x[keep] for x in te)


def heldout_serps(log: ClickLog, fraction: float = 0.25, seed=0, *,
                  known: bool = True) -> np.ndarray:
    """The ``serp_id`` of the test pages :func:`split_pages` keeps (every model is scored
    on these pages)."""
    train, test = log.split(fraction, seed=seed)
    serps, queries = _full_pages(test)[:2]
    return serps[np.isin(queries, np.unique(pages_of(train)[0])) | (not known)]


# --------------------------------------------------------------------------- helpers

class _Pairs:
    """Integer ids of query-document pairs (-1: not seen in training)."""

    def fit(self, queries, docs):
        self.q_index = pd.Index(pd.unique(np.asarray(queries, dtype=object)))
        self.d_index = pd.Index(pd.unique(np.asarray(docs, dtype=object).ravel()))
        key = self._key(queries, docs)
        codes, uniq = pd.factorize(key.ravel())
        self.key_index = pd.Index(uniq)
        return codes.reshape(key.shape)

    def _key(self, queries, docs):
        q = self.q_index.get_indexer(np.asarray(queries, dtype=object)).astype(np.int64)
        d = self.d_index.get_indexer(np.asarray(docs, dtype=object).ravel()).astype(np.int64)
        d = d.reshape(np.shape(docs))
        key = q[:, None] * (len(self.d_index) + 1) + d
        return np.where((q[:, None] < 0) | (d < 0), -1, key)

    def lookup(self, queries, docs):
        key = self._key(queries, docs)
        out = self.key_index.get_indexer(key.ravel()).reshape(key.shape)
        out[key < 0] = -1
        return out

    @property
    def size(self):
        return len(self.key_index)


def _smoothed(success, trials, cap=True):
    """PyClick's estimate ``(1 + success) / (2 + trials)``, capped at ``1 - PROB_MIN`` for
    EM parameters."""
    value = (1.0 + success) / (2.0 + trials)
    return np.minimum(value, 1.0 - PROB_MIN) if cap else value


def _per_pair(idx, weights, size):
    return np.bincount(idx.ravel(), weights=None if weights is None else weights.ravel(),
                       minlength=size)


def _values(table_, idx):
    """Per-page values of a per-pair table; the prior 0.5 for unseen pairs."""
    return np.where(idx >= 0, table_[np.maximum(idx, 0)], PRIOR)


def _observed(p, clicks):
    return np.where(clicks, p, 1.0 - p)


def _arrays(queries, docs, clicks):
    queries = np.asarray(queries, dtype=object)
    docs = np.asarray(docs, dtype=object)
    clicks = np.asarray(clicks, dtype=bool)
    if docs.ndim != 2 or docs.shape[1] != RANKS or clicks.shape != docs.shape \
            or queries.shape != (docs.shape[0],):
        raise ValueError("expected queries (P,), docs (P, 10) and clicks (P, 10)")
    return queries, docs, clicks


class ClickModel:
    """``fit(queries, docs, clicks)`` returns self; ``predict(...)`` returns ``(p_click,
    p_conditional)``, both ``(P, 10)``."""

    def __init__(self, iterations: int = EM_ITERATIONS):
        self.iterations = iterations

    def fit(self, queries, docs, clicks):
        raise NotImplementedError

    def predict(self, queries, docs, clicks):
        raise NotImplementedError


# --------------------------------------------------------------------------- models

class RCTR(ClickModel):
    """Rank click-through rate: ``P(C_r = 1) = rho_r``."""

    def fit(self, queries, docs, clicks):
        _, _, clicks = _arrays(queries, docs, clicks)
        self.ctr = _smoothed(clicks.sum(axis=0), clicks.shape[0], cap=False)
        return self

    def predict(self, queries, docs, clicks):
        _, _, clicks = _arrays(queries, docs, clicks)
        p = np.broadcast_to(self.ctr, clicks.shape).copy()
        return p, _observed(p, clicks)


class PBM(ClickModel):
    """Position-based model: ``P(C_r = 1) = gamma_r a_{q u_r}`` (EM)."""

    def fit(self, queries, docs, clicks):
        queries, docs, clicks = _arrays(queries, docs, clicks)
        self.pairs = _Pairs()
        idx = self.pairs.fit(queries, docs)
        n = self.pairs.size
        trials = _per_pair(idx, None, n)
        attr = np.full(n, PRIOR)
        exam = np.full(RANKS, PRIOR)
        for _ in range(self.iterations):
            a = attr[idx]
            e = exam[None, :]
            no_click = 1.0 - a * e
            post_a = np.where(clicks, 1.0, a * (1.0 - e) / no_click)
            post_e = np.where(clicks, 1.0, e * (1.0 - a) / no_click)
            attr = _smoothed(_per_pair(idx, post_a, n), trials)
            exam = _smoothed(post_e.sum(axis=0), clicks.shape[0])
        self.attr, self.exam = attr, exam
        return self

    def predict(self, queries, docs, clicks):
        queries, docs, clicks = _arrays(queries, docs, clicks)
        a = _values(self.attr, self.pairs.lookup(queries, docs))
        p = a * self.exam[None, :]
        return p, _observed(p, clicks)


class CM(ClickModel):
    """Cascade model: ``P(C_r = 1) = a_r prod_{i<r} (1 - a_i)`` (counts down to the first
    click)."""

    def fit(self, queries, docs, clicks):
        queries, docs, clicks = _arrays(queries, docs, clicks)
        self.pairs = _Pairs()
        idx = self.pairs.fit(queries, docs)
        seen = np.cumsum(clicks, axis=1) - clicks == 0        # no click above rank r
        n = self.pairs.size
        self.attr = _smoothed(_per_pair(idx[seen], clicks[seen].astype(float), n),
                              _per_pair(idx[seen], None, n), cap=False)
        return self

    def predict(self, queries, docs, clicks):
        queries, docs, clicks = _arrays(queries, docs, clicks)
        a = _values(self.attr, self.pairs.lookup(queries, docs))
        reach = np.cumprod(np.c_[np.ones(len(a)), 1.0 - a[:, :-1]], axis=1)
        p = a * reach
        above = np.cumsum(clicks, axis=1) - clicks > 0        # a click above rank r
        cond = np.where(above, np.where(clicks, PROB_MIN, 1.0), _observed(a, clicks))
        return p, cond


def _prev_click(clicks):
    """0-based rank of the last click above each rank; RANKS - 1 when none (PyClick's
    convention: index M - 1 stands for "no click above")."""
    r = np.arange(RANKS)
    last = np.where(clicks, r[None, :], -1)
    prev = np.maximum.accumulate(np.c_[np.full(len(clicks), -1), last[:, :-1]], axis=1)
    return np.where(prev < 0, RANKS - 1, prev)


class UBM(ClickModel):
    """User browsing model: ``P(C_r = 1 | C_<r) = gamma_{r r'} a_{q u_r}`` (EM)."""

    def fit(self, queries, docs, clicks):
        queries, docs, clicks = _arrays(queries, docs, clicks)
        self.pairs = _Pairs()
        idx = self.pairs.fit(queries, docs)
        n = self.pairs.size
        cell = np.arange(RANKS)[None, :] * RANKS + _prev_click(clicks)
        trials = _per_pair(idx, None, n)
        cell_trials = np.bincount(cell.ravel(), minlength=RANKS * RANKS)
        attr = np.full(n, PRIOR)
        exam = np.full(RANKS * RANKS, PRIOR)
        for _ in range(self.iterations):
            a = attr[idx]
            e = exam[cell]
            no_click = 1.0 - a * e
            post_a = np.where(clicks, 1.0, a * (1.0 - e) / no_click)
            post_e = np.where(clicks, 1.0, e * (1.0 - a) / no_click)
            attr = _smoothed(_per_pair(idx, post_a, n), trials)
            exam = _smoothed(np.bincount(cell.ravel(), weights=post_e.ravel(),
                                         minlength=RANKS * RANKS), cell_trials)
        self.attr, self.exam = attr, exam.reshape(RANKS, RANKS)
        return self

    def predict(self, queries, docs, clicks):
        queries, docs, clicks = _arrays(queries, docs, clicks)
        a = _values(self.attr, self.pairs.lookup(queries, docs))
        cond_click = a * self.exam[np.arange(RANKS)[None, :], _prev_click(clicks)]
        # P(C_r = 1): sum over the last click r' above r (column 0: none, k + 1: rank k)
        gamma = np.c_[self.exam[:, RANKS - 1], self.exam]     # (RANKS, RANKS + 1)
        alive = np.zeros((len(a), RANKS + 1))
        alive[:, 0] = 1.0
        p = np.empty_like(a)
        for r in range(RANKS):
            q = a[:, r:r + 1] * gamma[r][None, :]
            p[:, r] = (alive * q).sum(axis=1)
            alive *= 1.0 - q
            alive[:, r + 1] = p[:, r]
        return p, _observed(cond_click, clicks)


def _dbn_conditional(a, s, gamma, clicks):
    """``P(C_r = c_r | C_<r)`` under the DBN (forward filter on ``E_r``)."""
    exam = np.ones(len(a))
    out = np.empty_like(a)
    for r in range(RANKS):
        c = clicks[:, r]
        p1 = a[:, r] * exam
        out[:, r] = np.where(c, p1, 1.0 - p1)
        exam = np.where(c, gamma * (1.0 - s[:, r]), exam * gamma * (1.0 - a[:, r]) / (1.0 - p1))
    return out


def _dbn_full(a, s, gamma):
    """``P(C_r = 1)`` under the DBN."""
    exam = np.cumprod(np.c_[np.ones(len(a)), gamma * (1.0 - a * s)[:, :-1]], axis=1)
    return a * exam


def _dbn_posteriors(a, s, gamma, clicks):
    """E-step of the DBN by forward-backward over ``E_r`` (pages x ranks arrays ``a``,
    ``s`` of the shown documents): ``P(A_r = 1 | C)``, ``P(S_r = 1 | C)`` (meaningful on
    clicked ranks), the expected transitions ``E_r = 1, S_r = 0 -> E_{r+1} = 1`` and their
    trials ``E_r = 1, S_r = 0`` for ``r = 1..9``, and ``P(C)``."""
    pages = len(a)
    c = clicks.astype(float)
    # beta0[:, r] = P(C_>=r | E_r = 0): 1 when there is no click at r or below
    beta0 = np.c_[np.cumsum(clicks[:, ::-1], axis=1)[:, ::-1] == 0,
                  np.ones(pages, dtype=bool)].astype(float)
    w1 = np.where(clicks, a, 1.0 - a)                       # P(C_r = c_r | E_r = 1)
    u = np.where(clicks, 1.0 - s, 1.0)                      # P(S_r = 0 | C_r = c_r, E_r = 1)
    t = gamma * u                                           # P(E_r+1 = 1 | E_r = 1, C_r)
    alpha1 = np.empty((pages, RANKS))                       # P(C_<r, E_r = 1)
    alpha0 = np.empty((pages, RANKS))                       # P(C_<r, E_r = 0)
    alpha1[:, 0], alpha0[:, 0] = 1.0, 0.0
    for r in range(RANKS - 1):
        m = alpha1[:, r] * w1[:, r]
        alpha1[:, r + 1] = m * t[:, r]
        alpha0[:, r + 1] = m * (1.0 - t[:, r]) + alpha0[:, r] * (1.0 - c[:, r])
    beta1 = np.ones((pages, RANKS + 1))                     # P(C_>=r | E_r = 1)
    for r in range(RANKS - 1, -1, -1):
        beta1[:, r] = w1[:, r] * (t[:, r] * beta1[:, r + 1] + (1.0 - t[:, r]) * beta0[:, r + 1])
    z = beta1[:, :1]
    post_a = np.where(clicks, 1.0, a * alpha0 * beta0[:, :RANKS] / z)
    post_s = alpha1 * a * s * beta0[:, 1:] / z
    m = alpha1[:, :-1] * w1[:, :-1] * u[:, :-1] / z
    stay = m * gamma * beta1[:, 1:RANKS]
    trials = stay + m * (1.0 - gamma) * beta0[:, 1:RANKS]
    return post_a, post_s, stay, trials, z[:, 0]


class DBN(ClickModel):
    """Dynamic Bayesian network: attractiveness, satisfaction, continuation ``gamma``
    (EM by forward-backward)."""

    def fit(self, queries, docs, clicks):
        queries, docs, clicks = _arrays(queries, docs, clicks)
        self.pairs = _Pairs()
        idx = self.pairs.fit(queries, docs)
        n = self.pairs.size
        trials = _per_pair(idx, None, n)
        click_trials = _per_pair(idx[clicks], None, n)
        attr = np.full(n, PRIOR)
        sat = np.full(n, PRIOR)
        gamma = PRIOR
        for _ in range(self.iterations):
            post_a, post_s, stay, cont_trials, _ = _dbn_posteriors(attr[idx], sat[idx], gamma,
                                                                   clicks)
            attr = _smoothed(_per_pair(idx, post_a, n), trials)
            sat = _smoothed(_per_pair(idx[clicks], post_s[clicks], n), click_trials)
            gamma = float(_smoothed(stay.sum(), cont_trials.sum()))
        self.attr, self.sat, self.gamma = attr, sat, gamma
        return self

    def _params(self, queries, docs):
        idx = self.pairs.lookup(queries, docs)
        return _values(self.attr, idx), _values(self.sat, idx)

    def predict(self, queries, docs, clicks):
        queries, docs, clicks = _arrays(queries, docs, clicks)
        a, s = self._params(queries, docs)
        return _dbn_full(a, s, self.gamma), _dbn_conditional(a, s, self.gamma, clicks)


class SDBN(DBN):
    """Simplified DBN (``gamma = 1``; closed-form counts)."""

    def fit(self, queries, docs, clicks):
        queries, docs, clicks = _arrays(queries, docs, clicks)
        self.pairs = _Pairs()
        idx = self.pairs.fit(queries, docs)
        n = self.pairs.size
        r = np.arange(RANKS)[None, :]
        last = np.where(clicks.any(axis=1), RANKS - 1 - np.argmax(clicks[:, ::-1], axis=1),
                        RANKS)[:, None]
        upto = r <= last                                    # examined ranks
        self.attr = _smoothed(_per_pair(idx[upto], clicks[upto].astype(float), n),
                              _per_pair(idx[upto], None, n), cap=False)
        is_last = (r == last) & clicks
        self.sat = _smoothed(_per_pair(idx[clicks], is_last[clicks].astype(float), n),
                             _per_pair(idx[clicks], None, n), cap=False)
        self.gamma = 1.0
        return self


MODELS = {"RCTR": RCTR, "PBM": PBM, "CM": CM, "UBM": UBM, "DBN": DBN, "SDBN": SDBN}


# --------------------------------------------------------------------------- benchmark

def evaluate(model, test) -> dict:
    """PyClick's metrics of a fitted model on test pages ``(queries, docs, clicks)``."""
    p_click, p_cond = model.predict(*test)
    return click_metrics(test[2], p_click, p_cond).as_dict()


def run(name: str, models: list[str], repeat: int = 3, *, known: bool = True) -> list[tuple]:
    train, test = split_pages(load_log(name), known=known)
    rows = []
    for m in models:
        times = []
        for _ in range(repeat):
            model = MODELS[m]()
            t = time.perf_counter()
            model.fit(*train)
            times.append(time.perf_counter() - t)
        res = evaluate(model, test)
        rows.append((name, m, len(train[0]), res["pages"], f"{min(times):.3f}",
                     f"{res['log_likelihood']:.4f}", f"{res['perplexity']:.4f}",
                     f"{res['conditional_perplexity']:.4f}"))
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--logs", nargs="+", default=list(LOGS), choices=list(LOGS))
    ap.add_argument("--models", nargs="+", default=list(MODELS), choices=list(MODELS))
    ap.add_argument("--repeat", type=int, default=3, help="fits per model (best time kept)")
    args = ap.parse_args()
    print(f"machine: {machine()}")
    print("split: log.split(0.25, seed=0); test pages of queries seen in train\n")
    rows = []
    for name in args.logs:
        rows += run(name, args.models, args.repeat)
    print(table(rows, ("log", "model", "train pages", "test pages", "fit s", "LL",
                       "perplexity", "cond. perplexity")))


if __name__ == "__main__":
    main()
