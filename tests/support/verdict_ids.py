"""Readable, bounded pytest ids for verdict-table rows ``(gold, completion, ...)``."""

from __future__ import annotations


def case_id(case: tuple) -> str:
    """``'gold'|'completion'``, cut to 60 characters plus the full length when longer than 64."""
    text = f"{case[0]!r}|{case[1]!r}"
    return (text[:60] + f"..{len(text)}") if len(text) > 64 else text
