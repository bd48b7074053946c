"""Constitutions (data files + schema) and the RLAIF pipelines that use them."""
