"""Hypothesis profiles of the fuzz tests (see tests/fuzz/test_readers.py).

``fuzz``: the long profile, 2,000 examples per test, loaded with
``python3 -m pytest tests/fuzz -m fuzz --hypothesis-profile=fuzz`` (this conftest must be
among the initial ones, hence the ``tests/fuzz`` argument).  Registering a profile loads
nothing: the other tests keep Hypothesis' defaults.
"""

from hypothesis import HealthCheck, settings

settings.register_profile(
    "fuzz", max_examples=2_000, deadline=None, print_blob=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                           HealthCheck.filter_too_much])
