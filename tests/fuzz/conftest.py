"""Hypothesis profiles of the fuzz tests (see tests/fuzz/profile.py).

``fuzz``: the long profile, 2,000 examples per test, loaded with
``python3 -m pytest tests/fuzz -m fuzz --hypothesis-profile=fuzz`` (this conftest must be
among the initial ones, hence the ``tests/fuzz`` argument).  Registering a profile loads
nothing: the other tests keep Hypothesis' defaults.
"""

from hypothesis import settings

from tests.fuzz.profile import HEALTH, LONG_EXAMPLES

settings.register_profile("fuzz", max_examples=LONG_EXAMPLES, deadline=None, print_blob=True,
                          suppress_health_check=HEALTH)
