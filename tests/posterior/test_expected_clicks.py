"""Expected clicks per rank of the fitted walk: the frequencies of users simulated one step
at a time from the walk's definition (re-clicks damped or fresh, repeats of a click, a
forward move off the last rank that leaves)."""

import numpy as np
import pytest

from bayeschain.errors import ParameterError
from bayeschain.posterior import expected_clicks, posterior_from_parameters
from tests.reference.walk_clicks import simulate_pages

N = 6
FORWARD = np.array([0.7, 0.6, 0.55, 0.5, 0.45, 0.3])    # at rank 6: leaves the page
BACKWARD = np.array([0.0, 0.25, 0.2, 0.2, 0.25, 0.4])
LEAVE = 1.0 - FORWARD - BACKWARD
CLICK = np.array([0.45, 0.3, 0.25, 0.2, 0.15, 0.1])
REPEAT = np.array([0.2, 0.1, 0.1, 0.05, 0.05, 0.1])


def _posterior(kappa, damped="reclick"):
    walk = np.stack([FORWARD, BACKWARD, 0.6 * LEAVE, 0.4 * LEAVE], axis=-1)[None]
    return posterior_from_parameters({"walk": walk, "click": CLICK[None],
                                      "repeat": REPEAT[None],
                                      damped: np.array([kappa])})


def _simulated(kappa, n, pages=40_000, damped="reclick"):
    """Clicks per page on each rank of pages of ``n`` results (the first ``n`` ranks of the
    walk): mean and standard error.  ``damped``: what ``kappa`` damps, a result clicked
    before (``reclick``) or examined before (``second_look``)."""
    rng = np.random.default_rng(11)
    walked = simulate_pages(rng, pages, FORWARD[:n], BACKWARD[:n], 0.6 * LEAVE[:n],
                            0.4 * LEAVE[:n], CLICK[:n], repeat=REPEAT[:n], **{damped: kappa})
    per_page = np.zeros((len(walked), n))
    for k, (clicks, _) in enumerate(walked):
        np.add.at(per_page[k], np.asarray(clicks, dtype=int) - 1, 1)
    return per_page.mean(axis=0), per_page.std(axis=0) / np.sqrt(len(walked))


@pytest.mark.parametrize("damped", ["reclick", "second_look"])
@pytest.mark.parametrize(("kappa", "n"), [(0.5, N), (1.0, N), (0.5, 4)])
def test_expected_clicks_are_the_simulated_users_clicks_per_rank(kappa, n, damped):
    """Within 4 standard errors of 40,000 simulated pages at every rank, also on pages
    shorter than the posterior's ranks (the walk leaves from rank ``n``), for users who
    click a result clicked before, or examined before, with ``kappa`` of its chance."""
    mean, se = _simulated(kappa, n, damped=damped)
    exact = expected_clicks(_posterior(kappa, damped), n)[0]
    assert np.all(np.abs(exact - mean) < 4 * se), (exact, mean, se)


@pytest.mark.parametrize("damped", ["reclick", "second_look"])
def test_the_simulation_tells_the_damping_apart(damped):
    """At kappa 0.5 the simulated clicks reject both kappa 0 and kappa 1 (more than 6
    standard errors at some rank), and the other damping at 0.5: the test above pins
    kappa's term and what it damps, not only the rest."""
    mean, se = _simulated(0.5, N, damped=damped)
    other = "second_look" if damped == "reclick" else "reclick"
    for wrong, what in ((0.0, damped), (1.0, damped), (0.5, other)):
        z = np.abs(expected_clicks(_posterior(wrong, what), N)[0] - mean) / se
        assert z.max() > 6, (wrong, what, z)


def test_clicks_that_depend_on_the_documents_shown_are_refused_with_the_way_out():
    walk = np.stack([FORWARD, BACKWARD, 0.6 * LEAVE, 0.4 * LEAVE], axis=-1)[None]
    moves_only = posterior_from_parameters({"walk": walk})
    with pytest.raises(ParameterError, match="predict_clicks"):
        expected_clicks(moves_only, N)


def test_moves_after_a_click_with_damped_re_clicks_are_refused():
    """Not a walk over ranks (the fit refuses the pair too)."""
    moves = np.stack([FORWARD, BACKWARD, 0.6 * LEAVE, 0.4 * LEAVE], axis=-1)[None]
    with pytest.raises(ParameterError, match="reclick"):
        posterior_from_parameters({"walk_skip": moves, "walk_click": moves,
                                   "click": CLICK[None], "reclick": np.array([0.5])})


def test_a_second_look_with_damped_re_clicks_or_moves_after_a_click_is_refused():
    """The decision made once goes with moves that do not depend on the click and without
    ``reclick``: the pair is not a model the fit makes."""
    moves = np.stack([FORWARD, BACKWARD, 0.6 * LEAVE, 0.4 * LEAVE], axis=-1)[None]
    for extra in ({"walk": moves, "reclick": np.array([0.5])},
                  {"walk_skip": moves, "walk_click": moves}):
        with pytest.raises(ParameterError, match="second_look"):
            posterior_from_parameters({"click": CLICK[None], "second_look": np.array([0.5]),
                                       **extra})
