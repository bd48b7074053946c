"""Held-out judge sets: their file format and registry (what the audit reads), and the leakage guard
that keeps them out of RLAIF training data."""
