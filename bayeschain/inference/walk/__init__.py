"""The examination walk that P@H scores: its pages from the log (:mod:`.data`), its density
(:mod:`.model`, :mod:`.likelihood`), NUTS by nutpie (:mod:`.sampler`, the C callback of
:mod:`.bridge`), its fit (:mod:`.fit`), click predictions (:mod:`.prediction`) and
posterior predictive checks (:mod:`.checks`)."""
