"""Bridges to peer tools: ``ir_measures`` (bayeschain as a provider of its measures)."""
