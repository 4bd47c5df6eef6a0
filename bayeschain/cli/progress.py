"""A live status line for the long stages of a command.

``with stage("fitting the walk") as s: ... s.update(600, 1500)`` shows, on standard error
and only when it is a terminal, ``| fitting the walk  4 s  (600 of at most 1,500 draws per
chain)`` redrawn a few times a second, and erases it when the stage ends (the command
prints its own line for the finished stage).  Pipes, files and CI logs get nothing: no
carriage returns in a log.
"""

from __future__ import annotations

import sys
import threading
import time
from contextlib import contextmanager

#: seconds between two redraws
REDRAW = 0.2
_SPINNER = "|/-\\"


class Stage:
    """The status line of one stage (see the module); ``update(done, total, unit)``
    reports progress in countable steps."""

    def __init__(self, text: str, stream=None):
        self.text = text
        self.stream = stream if stream is not None else sys.stderr
        self.live = bool(getattr(self.stream, "isatty", lambda: False)())
        self.detail = ""
        self._start = time.perf_counter()
        self._stop = threading.Event()
        self._thread = None
        self._width = 0

    def update(self, done: int, total: int | None = None, unit: str = "draws per chain",
               ) -> None:
        most = f" of at most {total:,}" if total else ""
        self.detail = f"({done:,}{most} {unit})"

    def _line(self, tick: int) -> str:
        elapsed = time.perf_counter() - self._start
        return f"{_SPINNER[tick % len(_SPINNER)]} {self.text}  {elapsed:4.0f} s  {self.detail}"

    def _draw(self) -> None:
        tick = 0
        while not self._stop.wait(REDRAW):
            line = self._line(tick)
            pad = max(self._width - len(line), 0)
            self._width = len(line)
            try:
                self.stream.write("\r" + line + " " * pad)
                self.stream.flush()
            except (OSError, ValueError):          # the terminal went away
                return
            tick += 1

    def __enter__(self) -> Stage:
        if self.live:
            self._thread = threading.Thread(target=self._draw, daemon=True)
            self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        if self._thread is None:
            return
        self._stop.set()
        self._thread.join()
        try:
            self.stream.write("\r" + " " * self._width + "\r")
            self.stream.flush()
        except (OSError, ValueError):
            pass


@contextmanager
def stage(text: str, stream=None):
    """A :class:`Stage` as a context manager."""
    with Stage(text, stream) as s:
        yield s
