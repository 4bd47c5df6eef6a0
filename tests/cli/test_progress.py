"""The status line: drawn and erased on a terminal, absent from pipes and files."""

import io
import time

from bayeschain.cli import progress
from bayeschain.cli.progress import stage


class Terminal(io.StringIO):
    def isatty(self):
        return True


def test_drawn_with_the_count_and_erased_on_a_terminal(monkeypatch):
    monkeypatch.setattr(progress, "REDRAW", 0.01)
    out = Terminal()
    with stage("fitting the walk", out) as s:
        s.update(600, 1500)
        time.sleep(0.1)
    text = out.getvalue()
    assert "fitting the walk" in text and "600 of at most 1,500 draws per chain" in text
    last = text.rsplit("\r", 2)
    assert last[-1] == "" and last[-2].strip() == ""        # ends on an erased line


def test_nothing_in_a_pipe_or_file():
    out = io.StringIO()
    with stage("fitting the walk", out) as s:
        s.update(1, 2)
        time.sleep(0.3)
    assert out.getvalue() == ""
