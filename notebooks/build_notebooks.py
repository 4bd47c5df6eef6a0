"""Build the notebooks in notebooks/ from their sources in notebooks/src/*.py.

    python3 notebooks/build_notebooks.py

Each source is a Python file whose cells are separated by ``# %%`` lines (``# %% [markdown]``
for text cells, written as comments).  The .ipynb files are generated, never edited by hand;
the tests execute them (tests/test_notebooks.py).
"""

from pathlib import Path

import nbformat

HERE = Path(__file__).resolve().parent


def cells(source: str):
    chunks = source.split("# %%")
    for chunk in chunks[1:]:
        header, _, body = chunk.partition("\n")
        body = body.strip("\n")
        if header.strip() == "[markdown]":
            text = "\n".join(line[2:] if line.startswith("# ") else line.lstrip("#")
                             for line in body.splitlines())
            yield nbformat.v4.new_markdown_cell(text)
        else:
            yield nbformat.v4.new_code_cell(body)


def build() -> list[Path]:
    out = []
    for src in sorted((HERE / "src").glob("*.py")):
        nb = nbformat.v4.new_notebook()
        nb.cells = list(cells(src.read_text()))
        for i, cell in enumerate(nb.cells):      # stable ids: rebuilding changes nothing
            cell["id"] = f"{src.stem[:2]}-cell-{i:02d}"
        nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                     "language": "python"}
        target = HERE / f"{src.stem}.ipynb"
        nbformat.write(nb, target)
        out.append(target)
    return out


if __name__ == "__main__":
    for path in build():
        print(f"wrote {path}")
