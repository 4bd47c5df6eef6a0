"""The demo's report.html: written with the other outputs, valid, rendered by headless
Chromium without console errors, holding the steps, the comparisons, both figures, what
the numbers mean and the provenance.  The demo runs in a child process with its analysis
replaced by a small one (``FAULT_FAKE_DEMO``), so that this takes seconds; the real demo's
outputs are checked by ``tests/test_package.py``."""

import html

import pytest

from ..faults.helpers import run_child
from .test_html import render
from .test_reports import _valid


def test_demo_writes_a_report_a_browser_opens(tmp_path):
    pytest.importorskip("matplotlib")
    code, out, err = run_child(["demo", "--out", "demo-out"], cwd=tmp_path, fake_demo=1)
    assert code == 0, err
    path = tmp_path / "demo-out" / "report.html"
    text = path.read_text(encoding="utf-8")
    assert text.count("data:image/png;base64,") == 2
    assert "How to read these numbers" in text and "practically equal" in text
    assert "fake analysis: two runs on three topics" in text          # the printed steps
    assert "E[H] on a 10-result page" in text                        # the walk
    assert html.escape("P(|A-B|<=rope)") in text or "P(|A-B|&lt;=rope)" in text
    assert '<th scope="row">bayeschain</th>' in text                  # provenance:
    assert '<th scope="row">demo seed</th><td>2026</td>' in text      # version, seed
    _valid(path)
    errors, natural, pixels = render(path, tmp_path)
    assert errors == [] and natural and all(w > 0 for w in natural)
    assert pixels.std() > 0.05
