"""Expected clicks per rank of the fitted walk: the frequencies of users simulated one step
at a time from the walk's definition (re-clicks damped or fresh, repeats of a click)."""

import numpy as np
import pytest

from bayeschain.errors import ParameterError
from bayeschain.posterior import expected_clicks, posterior_from_parameters
from tests.reference.walk_clicks import simulate_pages

N = 6
FORWARD = np.array([0.7, 0.6, 0.55, 0.5, 0.45, 0.0])
BACKWARD = np.array([0.0, 0.25, 0.2, 0.2, 0.25, 0.4])
LEAVE = 1.0 - FORWARD - BACKWARD
CLICK = np.array([0.45, 0.3, 0.25, 0.2, 0.15, 0.1])
REPEAT = np.array([0.2, 0.1, 0.1, 0.05, 0.05, 0.0])


def _posterior(kappa):
    walk = np.stack([FORWARD, BACKWARD, 0.6 * LEAVE, 0.4 * LEAVE], axis=-1)[None]
    return posterior_from_parameters({"walk": walk, "click": CLICK[None],
                                      "repeat": REPEAT[None],
                                      "reclick": np.array([kappa])})


@pytest.mark.parametrize("kappa", [0.15, 1.0])
def test_expected_clicks_are_the_simulated_users_clicks_per_rank(kappa):
    rng = np.random.default_rng(11)
    pages = simulate_pages(rng, 40_000, FORWARD, BACKWARD, 0.6 * LEAVE, 0.4 * LEAVE,
                           CLICK, repeat=REPEAT, reclick=kappa)
    per_page = np.zeros((len(pages), N))
    for k, (clicks, _) in enumerate(pages):
        np.add.at(per_page[k], np.asarray(clicks, dtype=int) - 1, 1)
    mean, se = per_page.mean(axis=0), per_page.std(axis=0) / np.sqrt(len(pages))
    exact = expected_clicks(_posterior(kappa), N)[0]
    assert np.all(np.abs(exact - mean) < 4 * se), (exact, mean, se)


def test_damping_changes_the_expected_clicks_by_the_rate_of_re_clicks():
    """The two kappas give clicks that differ by far more than the simulation's error, so
    the test above tells them apart."""
    fresh, damped = (expected_clicks(_posterior(k), N)[0] for k in (1.0, 0.15))
    assert np.all(damped < fresh)
    assert (fresh - damped)[1] > 0.02


def test_clicks_that_depend_on_the_documents_shown_are_refused_with_the_way_out():
    walk = np.stack([FORWARD, BACKWARD, 0.6 * LEAVE, 0.4 * LEAVE], axis=-1)[None]
    moves_only = posterior_from_parameters({"walk": walk})
    with pytest.raises(ParameterError, match="predict_clicks"):
        expected_clicks(moves_only, N)
