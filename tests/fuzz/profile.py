"""The fuzz tests' one setting: how many examples, drawn how.

* default (plain ``python3 -m pytest``, CI): a module's ``ci_examples`` per test,
  derandomized and without Hypothesis' example database (the same examples on every run:
  a run that passed passes again, in the same time);
* long: the ``fuzz`` profile (tests/fuzz/conftest.py) or ``BAYESCHAIN_FUZZ=long``,
  :data:`LONG_EXAMPLES` random examples per test;
* ``BAYESCHAIN_FUZZ_EXAMPLES=N``: N per test in either.
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

LONG_EXAMPLES = 2_000
#: the health checks a fuzzer's large, filtered, slow inputs trip by design
HEALTH = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much]


def is_long() -> bool:
    return (settings.get_current_profile_name() == "fuzz"
            or os.environ.get("BAYESCHAIN_FUZZ", "").lower() == "long")


def fuzz_settings(ci_examples: int = 50) -> settings:
    """The settings of a fuzz test (see the module)."""
    long = is_long()
    examples = int(os.environ.get("BAYESCHAIN_FUZZ_EXAMPLES",
                                  LONG_EXAMPLES if long else ci_examples))
    return settings(max_examples=examples, deadline=None, database=None,
                    derandomize=not long, suppress_health_check=HEALTH)
