"""Sampling the walk until its diagnostics pass (``min_ess``): the draws returned meet
R-hat <= 1.01 and bulk ESS >= min_ess by ArviZ's own functions (the definitions, not our
vectorised copy), stop short of the cap, and still recover the simulated truth."""

import functools
import re

import numpy as np
import pytest

from bayeschain.errors import FormatError
from bayeschain.inference import fit, walk_parameters
from bayeschain.inference.specs import load_spec
from tests.reference.walk_clicks import pages_to_log, simulate_pages

pytest.importorskip("nutpie")
az = pytest.importorskip("arviz")

N = 10
P = np.linspace(0.75, 0.6, N)
Q = np.r_[0.0, np.full(N - 1, 0.08)]
LEAVE = 1 - P - Q
CLICK = np.linspace(0.4, 0.15, N)
#: the default walk's own setting (the first run asks for it)
DEFAULT_TARGET_ACCEPT = load_spec("walk").sampler["target_accept"]


@pytest.fixture(scope="module")
def stopped():
    rng = np.random.default_rng(11)
    log = pages_to_log(simulate_pages(rng, 6_000, P, Q, 0.3 * LEAVE, 0.7 * LEAVE, CLICK), N)
    seen = []
    post = fit(log, seed=3, draws=3_000, tune=400, min_ess=400,
               report=lambda done, most: seen.append((done, most)))
    return post, seen


def test_stops_once_the_diagnostics_pass(stopped):
    post, seen = stopped
    assert post.n_draws < 2 * 3_000                       # stopped before the cap
    assert seen and all(most == 3_000 for _, most in seen)
    # the draws reported grow within a run; a run whose draws diverged is sampled once
    # more, and its reports start again (this log diverges at some seeds: 15 of 86 fits)
    runs = [[]]
    for done, _ in seen:
        if runs[-1] and done < runs[-1][-1]:
            runs.append([])
        runs[-1].append(done)
    assert all(run == sorted(run) for run in runs), seen
    assert len(runs) == (2 if "resampled" in post.attrs else 1), (seen, post.attrs)
    for name, da in post.posterior.data_vars.items():
        x = da.transpose("chain", "draw", ...).values.reshape(2, post.n_draws // 2, -1)
        for j in range(x.shape[2]):
            if np.ptp(x[:, :, j]) == 0:                   # structural zeros
                continue
            assert az.rhat(x[:, :, j], method="rank") <= 1.01, (name, j)
            assert az.ess(x[:, :, j], method="bulk") >= 400, (name, j)


def test_the_truth_is_recovered(stopped):
    post, _ = stopped
    p, q = walk_parameters(post)
    lo, hi = np.quantile(p[:, :N - 1], [0.005, 0.995], axis=0)
    assert int(np.sum((P[:N - 1] < lo) | (P[:N - 1] > hi))) <= 1


def test_min_ess_is_for_walk_specs():
    with pytest.raises(FormatError, match="walk specs"):
        fit(None, "clicks-conjugate", min_ess=400)


@pytest.mark.parametrize("spec,value,message", [("clicks-conjugate", 400, "walk specs"),
                                                ("walk", -1, "min_ess must be >= 0")])
def test_spec_checks_min_ess(tmp_path, spec, value, message):
    from importlib import resources

    text = resources.files("bayeschain.models").joinpath(f"{spec}.toml").read_text()
    bad = tmp_path / "bad.toml"
    text = re.sub(r"(?m)^min_ess\s*=.*$", "", text)          # the spec's own, if any
    bad.write_text(text.replace("[sampler]", f"[sampler]\nmin_ess = {value}"))
    with pytest.raises(FormatError, match=message):
        load_spec(bad)


def test_the_same_seed_keeps_the_same_draws_whatever_the_clock(monkeypatch):
    """Where sampling stops is set by the draws, not by when the chains were looked at:
    looking every 0.01 s or every second keeps the same draws."""
    from bayeschain.inference.walk import sampler

    rng = np.random.default_rng(5)
    log = pages_to_log(simulate_pages(rng, 2_000, P, Q, 0.3 * LEAVE, 0.7 * LEAVE, CLICK), N)
    posts = []
    for every in (0.01, 1.0):
        monkeypatch.setattr(sampler, "CHECK_EVERY", every)
        posts.append(fit(log, seed=4, draws=3_000, tune=300, min_ess=400))
    a, b = posts
    assert a.n_draws == b.n_draws < 2 * 3_000
    np.testing.assert_array_equal(a.posterior["walk"].values, b.posterior["walk"].values)


def test_more_chains_than_cores_sample_together_and_stop_together(monkeypatch):
    """Four chains on a machine of two cores: every chain makes its draws at once, so the
    stopping rule (which looks at the draws every chain has) stops all four early.  Run
    two at a time, the first two ran to the cap before the others began."""
    from types import SimpleNamespace

    from bayeschain.inference.walk import sampler

    real, rows = sampler._raw_draws, []

    def counted(trace):           # each look's rows per chain (a trace is read once)
        batches = trace.get_arrow_trace()
        rows.append([d.num_rows for d in batches[0]])
        return real(SimpleNamespace(get_arrow_trace=lambda: batches))

    monkeypatch.setattr(sampler, "_raw_draws", counted)
    rng = np.random.default_rng(5)
    log = pages_to_log(simulate_pages(rng, 2_000, P, Q, 0.3 * LEAVE, 0.7 * LEAVE, CLICK), N)
    post = fit(log, seed=4, draws=3_000, tune=300, min_ess=400, chains=4)
    assert post.posterior.sizes["chain"] == 4
    assert post.n_draws < 4 * 3_000
    last = rows[-1]
    # every chain past its tuning, none at the cap (run two at a time: [3300, 3300, 2915,
    # 3053]); how evenly they progress is the OS's share of 2 cores among 4 threads and
    # whatever else runs (CI's compatibility stage, loaded: [1835, 1267, 2680, 940])
    assert len(last) == 4 and min(last) > 300, rows
    assert max(last) < 300 + 3_000, rows                    # no chain ran to the cap


def test_checks_that_pass_after_the_chains_finished_keep_the_run(monkeypatch):
    """The first look comes only once every draw is made (a slow clock, a loaded
    machine): the checks still stop at their own draw count, from the draws already read,
    and the chains are sampled once (it used to read the finished trace a second time,
    fail, and sample everything again through the Python path)."""
    import time

    import nutpie

    from bayeschain.inference.walk import sampler

    real_nutpie, real_finished, runs = nutpie.sample, sampler._finished, []

    @functools.wraps(real_nutpie)     # the sampler reads nutpie.sample's signature
    def counted(*args, **kwargs):
        if "target_accept" in kwargs:     # not the C path's short verification run
            runs.append(kwargs["target_accept"])
        return real_nutpie(*args, **kwargs)

    def after_the_end(background):
        while not real_finished(background):
            time.sleep(0.01)
        return True

    monkeypatch.setattr(nutpie, "sample", counted)
    monkeypatch.setattr(sampler, "_finished", after_the_end)
    rng = np.random.default_rng(5)
    log = pages_to_log(simulate_pages(rng, 2_000, P, Q, 0.3 * LEAVE, 0.7 * LEAVE, CLICK), N)
    post = fit(log, seed=4, draws=3_000, tune=300, min_ess=400)
    # one run; a second only at target_accept 0.99 when the first diverged (a read of the
    # finished trace that failed ran the same setting again)
    why = post.attrs.get("resampled", "")
    assert runs == [DEFAULT_TARGET_ACCEPT] + ([0.99] if "divergent" in why else []), \
        (runs, why)
    assert post.n_draws < 2 * 3_000


@pytest.mark.filterwarnings("ignore:NUTS diagnostics")   # 300 draws: the retry is tested
def test_a_fit_whose_draws_diverged_is_sampled_again_with_smaller_steps(monkeypatch):
    """A divergence in the first run (forced here) makes the sampler run the chains once
    more at target_accept 0.99; the posterior keeps the second run and says why."""
    import nutpie

    from bayeschain.inference.walk import sampler

    real_nutpie, real_until, asked, runs = nutpie.sample, sampler._sample_until, [], []

    @functools.wraps(real_nutpie)     # the sampler reads nutpie.sample's signature
    def recorded(*args, **kwargs):
        if "target_accept" in kwargs:     # not the C path's short verification run
            asked.append(kwargs["target_accept"])
        return real_nutpie(*args, **kwargs)

    def first_diverges(*args, **kwargs):
        theta, stats = real_until(*args, **kwargs)
        if not runs:        # the first run: its first draw marked divergent, besides its own
            stats["diverging"].values[0, 0] = True
        runs.append(int(stats["diverging"].values.sum()))
        return theta, stats

    monkeypatch.setattr(nutpie, "sample", recorded)
    monkeypatch.setattr(sampler, "_sample_until", first_diverges)
    rng = np.random.default_rng(6)
    log = pages_to_log(simulate_pages(rng, 1_000, P, Q, 0.3 * LEAVE, 0.7 * LEAVE, CLICK), N)
    post = fit(log, seed=4, draws=300, tune=200)
    assert asked == [DEFAULT_TARGET_ACCEPT, sampler.RETRY_TARGET_ACCEPT]
    assert post.divergences() == 0
    # the count is the first run's (this log diverges of itself at some settings)
    many = "transition" if runs[0] == 1 else "transitions"
    assert post.attrs["resampled"].startswith(
        f"{runs[0]} divergent {many} at target_accept {DEFAULT_TARGET_ACCEPT}")


def test_expanded_draws_are_each_draws_quantities_as_the_draws_grow():
    """The quantities of the draws so far, read again with more draws after them (past the
    reserved count too): each row is ``expand`` of its own draw, earlier reads keep theirs,
    and draws of another number of chains are refused."""
    from bayeschain.inference.walk.sampler import Expansions

    class Stand:
        ndim = 3

        @staticmethod
        def expand(theta):
            return {"pair": 2.0 * theta[:2], "first": theta[0] > 0, "sum": theta.sum()}

    theta = np.random.default_rng(3).normal(size=(2, 9, 3))
    expanded = Expansions(Stand(), capacity=4)
    assert expanded.of(theta[:, :0])["pair"].shape == (2, 0, 2)
    early = {k: v.copy() for k, v in expanded.of(theta[:, :3]).items()}
    for n in (3, 5, 9, 6):
        got = expanded.of(theta[:, :n])
        for k in ("pair", "first", "sum"):
            want = np.array([[Stand.expand(theta[c, d])[k] for d in range(n)]
                             for c in range(2)], dtype=float)
            np.testing.assert_array_equal(got[k], want)
    for k, v in early.items():
        np.testing.assert_array_equal(expanded.of(theta[:, :3])[k], v)
    with pytest.raises(ValueError, match="chains"):
        expanded.of(theta[:1, :3])


def test_the_next_look_comes_when_the_next_check_has_its_draws():
    """The wait is the time the chains take to reach the draws the next check needs, at the
    rate measured between the last two looks, kept within the shortest and longest waits
    (each at least ten times the look's own cost); without a rate, the shortest."""
    from bayeschain.inference.walk.sampler import (
        CHECK_EVERY,
        LOOK_SHARE,
        SHORTEST_WAIT,
        next_look,
    )

    assert next_look(200, 300, 1_000.0, 0.0) == pytest.approx(0.1)          # 100 draws
    assert next_look(200, 300, 100_000.0, 0.0) == SHORTEST_WAIT              # too soon
    assert next_look(200, 3_000, 100.0, 0.0) == CHECK_EVERY                  # a report
    assert next_look(200, 300, 1_000.0, 0.05) == pytest.approx(LOOK_SHARE * 0.05)
    assert next_look(200, 300, None, 0.0) == SHORTEST_WAIT
    assert next_look(200, 300, 0.0, 0.0) == CHECK_EVERY
