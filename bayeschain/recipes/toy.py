"""The toy example of Ferrante & Ferro (ICTIR 2020), Section 5.2, bundled in ``data/``.

``read_relevance_table`` reads its runs (``name<TAB>r1 r2 ... rN``); ``paper_walk`` builds
the constant walks of the paper's Figure 1 with the boundary rows of its Section 3 matrix;
``bundled_data_dir`` finds ``data/`` next to the package (a source checkout).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import FormatError

if TYPE_CHECKING:
    import numpy as np

    from ..chains import Tridiagonal

EXAMPLE = Path("examples") / "ictir2020_section5.tsv"


def bundled_data_dir() -> Path:
    """The ``data/`` folder next to the package (present in a source checkout)."""
    return Path(__file__).resolve().parents[2] / "data"


def read_relevance_table(path: Path) -> dict[str, np.ndarray]:
    """Read ``name<TAB>r1 r2 ... rN`` lines (``#`` comments allowed)."""
    import numpy as np

    runs: dict[str, np.ndarray] = {}
    with open(path, encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, start=1):
            text = line.strip()
            if not text or text.startswith("#"):
                continue
            parts = text.split("\t")
            if len(parts) != 2:
                raise FormatError("expected 'run<TAB>relevance values'", file=path, line=lineno)
            try:
                runs[parts[0]] = np.array([float(v) for v in parts[1].split()])
            except ValueError:
                raise FormatError("relevance values must be numbers", file=path,
                                  line=lineno) from None
    if not runs:
        raise FormatError("no runs found", file=path)
    return runs


def paper_walk(n: int, forward: float, backward: float, first_forward: float,
         last_backward: float) -> Tridiagonal:
    """A constant walk with the boundary rows of the paper's Section 3 matrix."""
    import numpy as np

    from ..chains import Tridiagonal

    upper = np.full(n, forward)
    lower = np.full(n, backward)
    upper[0], upper[-1] = first_forward, 0.0
    lower[0], lower[-1] = 0.0, last_backward
    return Tridiagonal(lower, np.zeros(n), upper)
