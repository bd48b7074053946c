"""Held-out judge sets: their file format, the ledger of audited sets, and the leakage guard
that keeps them out of RLAIF training data."""
