"""Dwell times (``[holding]``): each click's dwell observation from the log (:mod:`.data`),
the section (:mod:`.holding`), the censored dwell model (:mod:`.model`), what its fit needs
from the log (:mod:`.fit`) and its predictive check (:mod:`.checks`)."""
