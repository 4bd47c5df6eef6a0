"""The dwell model on each click's observation (issue 17): the gap quadrature against
adaptive integration, the observation kinds read off a log written by hand, and recovery
of a known truth from logs simulated with a non-zero examination time, missing end times
and satisfied last clicks (:mod:`tests.reference.dwell_log`, an independent simulator).
"""

import math

import numpy as np
import pytest

from bayeschain.inference.dwell.data import dwell_observations
from bayeschain.inference.dwell.model import exponential_gap, gap_terms
from bayeschain.inference.specs import parse_spec
from bayeschain.io.clicklog import ClickLog, make_events
from bayeschain.posterior.dwell import log_means
from tests.reference.dwell_log import RANKS, simulate_log, truth

stats = pytest.importorskip("scipy.stats")
integrate = pytest.importorskip("scipy.integrate")


def _logpdfs():
    return {
        "lognormal": lambda m, s: (lambda t: stats.lognorm.logpdf(t, s, scale=math.exp(
            math.log(m) - s * s / 2))),
        "gamma": lambda m, k: (lambda t: stats.gamma.logpdf(t, k, scale=m / k)),
        "weibull": lambda m, k: (lambda t: stats.weibull_min.logpdf(
            t, k, scale=m / math.gamma(1 + 1 / k))),
    }


def _reference(logpdf, g, lam):
    f = lambda t: math.exp(logpdf(t) + math.log(lam) - lam * (g - t))  # noqa: E731
    points = sorted({0.5 * g, max(g - 10 / lam, 0.0) * 0.999 + 1e-9})
    # full output: quad reports "roundoff error" (a warning otherwise) at the Weibull's
    # integrable singularity at 0 (shape 0.6) on 4 of these points, with an error estimate
    # under 1e-7 of the value, which therefore stands
    value, error, *_ = integrate.quad(f, 0, g, points=points, limit=1000, epsabs=0,
                                      epsrel=1e-10, full_output=1)
    assert error < 1e-7 * value, (g, lam, value, error)
    return math.log(value)


@pytest.mark.parametrize("family", ["lognormal", "gamma", "weibull"])
def test_gap_quadrature_matches_adaptive_integration(family):
    errors = []
    for mean in (2.0, 20.0, 100.0):
        for lam in (2.0, 0.25, 1 / 30):
            for shape in ((0.5, 1.0, 1.5) if family == "lognormal" else (0.6, 1.0, 2.5)):
                for g in (0.5, 5.0, 30.0, 300.0):
                    logpdf = _logpdfs()[family](mean, shape)
                    ref = _reference(logpdf, g, lam)
                    if ref < -30:                  # implausible under the model: skip
                        continue
                    terms = gap_terms(logpdf, np.array([g]), lam, np)
                    got = float(np.logaddexp.reduce(terms, axis=1)[0])
                    errors.append(abs(got - ref))
    errors = np.array(errors)
    assert np.quantile(errors, 0.9) < 1e-3 and errors.max() < 0.05, errors.max()


def test_exponential_gap_is_the_hypoexponential_density():
    for mu, lam, g in [(0.05, 0.25, 12.0), (0.25, 0.05, 3.0), (0.1, 0.1, 7.0),
                       (0.1, 0.1 + 1e-13, 7.0), (2.0, 0.01, 400.0)]:
        ref = math.log(integrate.quad(lambda t, mu=mu, lam=lam, g=g: mu * math.exp(-mu * t)
                                      * lam * math.exp(-lam * (g - t)), 0, g, epsabs=0,
                                      epsrel=1e-10)[0])
        assert abs(float(exponential_gap(np.array(mu), g, lam, np)) - ref) < 1e-9


def test_observation_kinds_of_a_log_written_by_hand():
    cols = ("session_id", "query_id", "serp_id", "event", "rank", "doc_id", "time",
            "end_time", "seq")
    rows = [("s", "q", 0, "query", None, None, 0.0, np.nan),
            ("s", "q", 0, "click", 2, "a", 3.0, 13.0),     # exact: 10 s
            ("s", "q", 0, "click", 1, "b", 15.0, np.nan),  # gap to the next click: 7 s
            ("s", "q", 0, "click", 3, "c", 22.0, np.nan),  # query: the next query 30 s later
            ("s", "r", 1, "query", None, None, 52.0, np.nan),
            ("s", "r", 1, "click", 1, "d", 54.0, np.nan)]  # open: the session's last
    events = make_events({c: [r[i] for r in rows] + [] for i, c in enumerate(cols[:-1])}
                         | {"seq": list(range(len(rows)))})
    obs = dwell_observations(ClickLog(events), ranks=10)
    got = obs.clicks.set_index("doc_id")
    assert list(got.loc[["a", "b", "c", "d"], "kind"]) == ["exact", "gap", "query", "open"]
    np.testing.assert_allclose(got.loc[["a", "b", "c"], "time"], [10.0, 7.0, 30.0])
    np.testing.assert_allclose(np.sort(obs.scan), [2.0, 3.0])


SPEC = """
[model]
name = "dwell-test"
ranks = 10

[holding]
likelihood = "{family}"
parametrisation = "{kind}"
censoring = "examination"
prior = [3.0, 2.0]

[sampler]
method = "nuts"
draws = 600
chains = 2
tune = 600
seed = 7
target_accept = 0.9
"""


def _outside(draws, true, level=0.99):
    lo, hi = np.quantile(draws, [(1 - level) / 2, (1 + level) / 2], axis=0)
    return int(np.sum((true < lo) | (true > hi)))


def _fit(t, sessions, family, kind, draws):
    from bayeschain.inference import fit

    log = simulate_log(t, sessions=sessions, seed=4)
    spec = SPEC.format(family=family, kind=kind).replace("= 600", f"= {draws}")
    post = fit(log, parse_spec(spec))
    post.share = dwell_observations(log, RANKS).last_share()   # the log's, for the truth
    return post


def _mixture(t, share):
    """``log`` of a rank's mean dwell over the typical click, given the share of sessions'
    last clicks at each rank (which stay ``t.last`` times longer)."""
    return np.log((1 - share) + share * t.last)


@pytest.mark.filterwarnings("ignore:NUTS diagnostics")
def test_per_rank_and_per_document_rates_are_recovered():
    """Exponential dwells with rank, query and document effects, a 4 s mean examination,
    30% of end times recorded, next queries written in 20 s and satisfied last clicks
    three times longer (70% with no end and no later event): the true rank rates (over
    the log's share of last clicks per rank) and the true rates of every (query,
    document) lie inside their 99% intervals (at most a binomial allowance outside), and
    so do the examination rate and the last clicks' shift."""
    t = truth(3, queries=8, family="exponential")
    post = _fit(t, 600, "exponential", "per-document", 400)
    mix = _mixture(t, post.share)
    rate = post.posterior["holding_rate"].values.reshape(-1, RANKS)
    assert _outside(rate, np.exp(-(t.beta + mix))) <= 2     # P(3 or more of 10) = 1e-4
    for name, true in (("examination_rate", 1 / t.exam), ("dwell_last_shift",
                                                           np.log(t.last))):
        draws = post.posterior[name].values.ravel()
        assert _outside(draws[:, None], np.array([true])) == 0, name
    # every (query, document) at its usual rank: exp(-(beta_r + u_q + v_qd))
    q, d = np.meshgrid(np.arange(t.u.size), np.arange(RANKS), indexing="ij")
    eta = log_means(post, d.ravel() + 1, [f"q{i}" for i in q.ravel()],
                    [f"d{j}" for j in d.ravel()])
    true = t.beta[d.ravel()] + t.u[q.ravel()] + t.v[q.ravel(), d.ravel()] + mix[d.ravel()]
    outside = _outside(np.exp(-eta), np.exp(-true))
    # 80 documents at 1%: more than 4 outside has probability < 0.01
    assert outside <= 4, outside
    # and the estimates are informative: the documents' truth is found, not the prior
    assert np.corrcoef(eta.mean(axis=0), true)[0, 1] > 0.8


LOGNORMAL = truth(5, queries=8, family="lognormal", shape=1.0, doc_sd=0.0, query_sd=0.0)


@pytest.fixture(scope="module")
def lognormal_fit():
    import warnings

    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "NUTS diagnostics")
        return _fit(LOGNORMAL, 400, "lognormal", "per-rank", 300)


def test_lognormal_rates_and_shape_are_recovered_through_the_gaps(lognormal_fit):
    """Log-normal dwells (the gaps go through the quadrature): rank rates, shape,
    examination and writing rates and the last clicks' shift inside their 99% intervals."""
    t, post = LOGNORMAL, lognormal_fit
    beta = post.posterior["dwell_rank_log_mean"].values.reshape(-1, RANKS)
    assert _outside(beta, t.beta) <= 2
    rate = np.exp(-(t.beta + _mixture(t, post.share)))
    rate, true = post.posterior["holding_rate"].values.reshape(-1, RANKS), rate
    # this log puts the truth of ranks 4, 6 and 10 at their posterior's 0.995, 1.0 and
    # 0.995 quantiles (their own exact dwells alone put it 2-2.5 s.e. away), the same on
    # every supported PyMC: two of them sit on the 99% bound itself, inside or outside by
    # the last digit of a quantile.  For a calibrated posterior 4 or more of 10 ranks
    # outside their 99% intervals has probability 2e-6.
    assert _outside(rate, true) <= 3
    for name, true in (("dwell_shape", t.shape), ("examination_rate", 1 / t.exam),
                       ("writing_rate", 1 / t.write), ("dwell_last_shift", np.log(t.last))):
        draws = post.posterior[name].values.ravel()
        assert _outside(draws[:, None], np.array([true])) == 0, name


def test_the_time_to_the_next_event_is_not_the_dwell():
    """Why the model exists: taking the gap as the dwell (``censoring = "none"``) puts the
    examination into the dwell, and the rates fall below the truth at every rank (the
    bias of issue 17; the recovery tests above show the model's rates do not)."""
    from bayeschain.inference.dwell.data import dwell_observations

    t = truth(6, queries=8, family="exponential", doc_sd=0.0, query_sd=0.0)
    log = simulate_log(t, sessions=3000, seed=8, p_end=0.0)
    gaps = dwell_observations(log, RANKS).of_kind("gap")
    naive = 1 / gaps.groupby("rank")["time"].mean().to_numpy()
    assert np.all(naive < np.exp(-t.beta))


@pytest.mark.filterwarnings("ignore:NUTS diagnostics")
def test_heldout_likelihood_and_the_cdf_check_find_the_true_family(lognormal_fit):
    """Log-normal truth: the log-normal fit has the higher held-out log-likelihood (per
    observation, on a log the fits did not see) than a Weibull fit, its dwell-CDF
    predictive check holds everywhere, and the Weibull's leaves its band."""
    from bayeschain.inference.dwell.checks import predictive_dwell_distribution
    from bayeschain.inference.dwell.model import heldout_loglik

    t = LOGNORMAL
    held_out_log = simulate_log(t, 300, seed=9)
    held_out = dwell_observations(held_out_log, RANKS)
    got = {}
    # the Weibull fit at 100 draws and tuning steps (13 s alone; 25 s at 150): held-out
    # log-likelihood -3.714 against the log-normal's -3.670, 21 points outside its band
    # (at 150: -3.715, 19), so the thresholds below keep their margins
    for family, post in (("lognormal", lognormal_fit),
                         ("weibull", _fit(t, 300, "weibull", "per-rank", 100))):
        got[family] = heldout_loglik(post, held_out, max_draws=100)["all"]
        check = predictive_dwell_distribution(post, held_out_log, seed=0)
        got[family + " outside"] = check.outside(0.99).size
    assert got["lognormal"] > got["weibull"] + 0.01, got
    assert got["lognormal outside"] == 0 and got["weibull outside"] > 10, got
