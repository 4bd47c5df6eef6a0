"""Argument types shared by the commands: argparse refuses a bad value on one line
(``bayeschain CMD: error: argument --seed: ...``) before any work."""

from __future__ import annotations

import argparse

#: the largest seed every sampler takes (nutpie's are unsigned 64-bit integers)
MAX_SEED = 2**63 - 1
#: at most this many posterior draws in all (draws x chains): more is a typo, not a fit
MAX_TOTAL_DRAWS = 10_000_000


def seed(text: str) -> int:
    """A random seed: an integer from 0 to 2**63 - 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer seed, got {text!r}") from None
    if not 0 <= value <= MAX_SEED:
        raise argparse.ArgumentTypeError(f"a seed is an integer from 0 to {MAX_SEED}, "
                                         f"got {text}")
    return value


def positive_int(text: str) -> int:
    """An integer >= 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") \
            from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text}")
    return value
