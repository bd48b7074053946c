"""Leakage guard: an audit set must stay held out of the preference data a judge helps produce.

The set is identified by its content hash; its prompts are compared with the ``prompt`` column of a
DPO file (jsonl/json/parquet/csv, plain or conversational prompts). A prompt counts as leaked when,
after lower-casing and collapsing whitespace, it equals a DPO prompt or appears inside one (RLAIF
pipelines often wrap the original prompt in a template).
"""

from __future__ import annotations

import logging
import os
import re
import warnings
from collections.abc import Sequence

from pydantic import BaseModel

from rewardkit.data import read_records
from rewardkit.judges.audit.sets import AuditItem, set_hash
from rewardkit.types import prompt_text

logger = logging.getLogger(__name__)

#: Shorter prompts are only matched exactly: a short string inside a long prompt proves nothing.
MIN_CONTAINED_CHARS = 24


class LeakageWarning(UserWarning):
    """Audit prompts were found in training preference data."""


class LeakReport(BaseModel):
    set_hash: str
    source: str
    n_rows: int
    leaked: list[str]
    message: str


def normalize(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip().lower()


def find_leaks(
    items: Sequence[AuditItem], data_path: str | os.PathLike[str], *, prompt_column: str = "prompt"
) -> LeakReport:
    """Which audit items' prompts occur in ``data_path``; emits a :class:`LeakageWarning` when any do."""
    rows = read_records(data_path)
    if rows and prompt_column not in rows[0]:
        raise ValueError(f"{data_path}: no column {prompt_column!r} (columns: {sorted(rows[0])})")
    prompts = [normalize(p) for p in (prompt_text(r.get(prompt_column)) for r in rows) if p]
    exact = set(prompts)
    haystack = "\x00".join(prompts)
    leaked = []
    for item in items:
        needle = normalize(item.prompt)
        if needle in exact or (len(needle) >= MIN_CONTAINED_CHARS and needle in haystack):
            leaked.append(item.id)
    digest = set_hash(items)
    if leaked:
        message = (f"{len(leaked)} of {len(items)} prompts of audit set {digest[:12]} appear in {data_path} "
                   f"({len(rows)} rows): the set is no longer held out for judges trained on it")
        warnings.warn(message, LeakageWarning, stacklevel=2)
        logger.warning(message)
    else:
        message = f"audit set {digest[:12]}: none of {len(items)} prompts appear in {data_path} ({len(rows)} rows)"
    return LeakReport(set_hash=digest, source=str(data_path), n_rows=len(rows), leaked=leaked, message=message)
