"""How run files are grouped for reading and ranking (no heavy import: ``bayeschain eval``
plans its reading before NumPy's and Arrow's compute modules are loaded)."""

from __future__ import annotations

#: Lines ``bayeschain eval`` reads and ranks together (one doc-id lookup, 1 MB working
#: arrays: the pipeline's unit).
CHUNK_LINES = 1 << 17
#: Documents :func:`~bayeschain.io.lists.ranked_lists` ranks together, in memory already:
#: the fewest Arrow lookups of the doc ids (each builds a hash table of the judged docs)
#: whose working arrays still stay warm.
RANK_CHUNK_LINES = 1 << 19


def line_chunks(lines: list[int], size: int | None = None) -> list[list[int]]:
    """Consecutive runs grouped into chunks of about ``size`` lines (at least one run)."""
    size = CHUNK_LINES if size is None else size
    chunks: list[list[int]] = [[]]
    total = 0
    for i, n in enumerate(lines):
        if chunks[-1] and total + n > size:
            chunks.append([])
            total = 0
        chunks[-1].append(i)
        total += n
    return chunks if chunks[0] else []
