"""Argument types shared by the commands: argparse refuses a bad value on one line
(``bayeschain CMD: error: argument --seed: ...``) before any work."""

from __future__ import annotations

import argparse
from pathlib import Path

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


def memory_size(text: str) -> str:
    """A memory size as DuckDB reads it (``4GB``, ``500MB``, ``1.5GiB``)."""
    import re

    if not re.match(r"^[0-9]+(\.[0-9]+)?\s*(B|KB|MB|GB|TB|KiB|MiB|GiB|TiB)$", text.strip()):
        raise argparse.ArgumentTypeError(f"must be a size such as 4GB or 500MB, not {text!r}")
    return text.strip()


#: canonical files larger than this are read out of core by default (about 500,000
#: sessions in Parquet; in memory a log takes about 20 times its Parquet size)
OUT_OF_CORE_BYTES = 32 * 2**20


def is_glob(log: str) -> bool:
    """Whether ``log`` is a pattern of file names (``*``, ``?``, ``[``)."""
    return any(ch in str(log) for ch in "*?[")


def _large(log: str) -> bool:
    """A glob, or a file larger than :data:`OUT_OF_CORE_BYTES`."""
    import os

    if is_glob(log):
        return True
    return os.path.exists(log) and os.path.getsize(log) > OUT_OF_CORE_BYTES


def _canonical_files(log: str, log_format: str | None) -> bool:
    """Whether ``log`` names canonical Parquet / CSV / TSV files (a file or a glob)."""
    import glob

    if log_format not in (None, "canonical"):
        return False
    suffix = Path(log.replace("*", "x")).suffix.lower()
    if suffix not in (".parquet", ".csv", ".tsv"):
        return False
    if is_glob(log) and not glob.glob(log):
        raise FileNotFoundError(2, "no file matches the pattern", log)
    return True


def out_of_core_files(log: str, log_format: str | None, forced) -> bool:
    """Whether a command reads ``log`` out of core: canonical Parquet / CSV / TSV files
    (a glob, or a file over :data:`OUT_OF_CORE_BYTES`, or any when ``forced``)."""
    return _canonical_files(log, log_format) and bool(forced or _large(log))
