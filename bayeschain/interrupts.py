"""The signals a command received, and the check made before any output is committed.

The command line's handlers (:mod:`bayeschain.cli`) turn SIGINT and SIGTERM into
exceptions raised wherever Python happens to be.  When that is inside a finaliser or a
weak-reference callback (a library's cache cleanup, say), Python prints "Exception
ignored in ..." and carries on: the command would then finish and commit its outputs
after a SIGTERM.  So the handlers also record the signal here, and the writers call
:func:`raise_if_received` right before they move files into place: a received signal
stops the commit, whatever became of its exception.
"""

from __future__ import annotations

import signal

#: the signals received by the running command, in order
RECEIVED: list[int] = []


class Terminated(BaseException):
    """SIGTERM as an exception, so that a terminated command unwinds like an interrupted
    one: every ``finally`` (temporary files, staging folders) runs.  A ``BaseException``,
    like ``KeyboardInterrupt``: ``except Exception`` does not stop it."""


def raise_if_received() -> None:
    """Raise the exception of the first signal received (``Terminated`` for SIGTERM,
    ``KeyboardInterrupt`` for SIGINT), if any."""
    if not RECEIVED:
        return
    if RECEIVED[0] == signal.SIGTERM:
        raise Terminated(RECEIVED[0])
    raise KeyboardInterrupt
