"""The figure scripts in notebooks/ run and write their figures."""

import runpy
import sys
from pathlib import Path

import pytest

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"


def test_figure1_script_draws_the_cdfs(tmp_path, monkeypatch):
    pytest.importorskip("matplotlib")
    out = tmp_path / "fig1.png"
    monkeypatch.setattr(sys, "argv", ["figure1_path_cdfs.py", str(out)])
    runpy.run_path(str(NOTEBOOKS / "figure1_path_cdfs.py"), run_name="__main__")
    assert out.stat().st_size > 20_000
