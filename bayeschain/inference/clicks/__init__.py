"""Click-to-click transitions and jumps (``[transitions]``, ``[jumps]``): per-rank counts
from the log (:mod:`.data`), the sections (:mod:`.transitions`, :mod:`.jumps`), their PyMC
model (:mod:`.model`), the sections' fit (:mod:`.fit`, exact conjugate draws or NUTS) and
the backward-share check (:mod:`.checks`)."""
