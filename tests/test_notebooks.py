"""The notebooks and figure scripts in notebooks/ run and show their figures."""

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


def test_notebooks_are_built_from_their_sources(tmp_path, monkeypatch):
    """The committed .ipynb files are exactly what build_notebooks.py makes."""
    nbformat = pytest.importorskip("nbformat")
    sys.path.insert(0, str(NOTEBOOKS))
    try:
        import build_notebooks
    finally:
        sys.path.remove(str(NOTEBOOKS))
    for src in sorted((NOTEBOOKS / "src").glob("*.py")):
        built = list(build_notebooks.cells(src.read_text()))
        committed = nbformat.read(NOTEBOOKS / f"{src.stem}.ipynb", as_version=4)
        assert [c.source for c in committed.cells] == [c.source for c in built]


@pytest.mark.parametrize("name", sorted(p.stem for p in NOTEBOOKS.glob("0*.ipynb")))
def test_notebook_executes_and_shows_figures(name, tmp_path):
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    pytest.importorskip("ipykernel")
    nb = nbformat.read(NOTEBOOKS / f"{name}.ipynb", as_version=4)
    nbclient.NotebookClient(nb, timeout=600, kernel_name="python3",
                            resources={"metadata": {"path": str(tmp_path)}}).execute()
    errors = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])
              if o.get("output_type") == "error"]
    assert not errors
    if name != "01_quickstart":
        images = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])
                  if "image/png" in o.get("data", {})]
        assert images, "the notebook shows no figure"
