"""Error classes raised for user-input problems.

Every error that the user can cause (a malformed file, an impossible parameter, a
degenerate chain) is a :class:`BayeschainError`.  Errors about files carry the file name,
the line number and what was expected, so that the command line can print them on one
line (``bayeschain: qrels.txt:12: expected 4 columns, found 3``).
"""

from __future__ import annotations

from pathlib import Path


class BayeschainError(Exception):
    """Base class of every error bayeschain raises for bad input.

    Parameters
    ----------
    message
        What went wrong and what was expected.
    file, line
        Where it went wrong, when the problem comes from a file (1-based line number).
    """

    def __init__(self, message: str, *, file: str | Path | None = None, line: int | None = None):
        self.message = message
        self.file = None if file is None else str(file)
        self.line = line
        super().__init__(self._format())

    def _format(self) -> str:
        where = ""
        if self.file is not None:
            where = self.file if self.line is None else f"{self.file}:{self.line}"
            where += ": "
        return where + self.message


class ChainError(BayeschainError, ValueError):
    """A transition matrix or chain that cannot be used (not substochastic, NaN, no absorption)."""


class ParameterError(BayeschainError, ValueError):
    """An impossible or unknown parameter value (probabilities outside [0, 1], bad names...)."""


class FormatError(BayeschainError, ValueError):
    """A malformed input file; ``file`` and ``line`` say where."""
