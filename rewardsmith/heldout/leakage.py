"""Leakage guard: an audit set must stay held out of the preference data a judge helps produce.

The set is identified by its content hash. Two checks:

* :func:`find_leaks` compares a set's prompts with the ``prompt`` column of a DPO file
  (jsonl/json/parquet/csv, plain or conversational prompts). A prompt counts as leaked when, after
  lower-casing and collapsing whitespace, it equals a DPO prompt or appears inside one (RLAIF
  pipelines often wrap the original prompt in a template).
* A local ledger remembers every audited set: ``rewardsmith audit`` records the set hash and one
  fingerprint (sha256 of the normalised text) per prompt in ``<cache>/audit-sets/<hash>.json``, where
  ``<cache>`` is ``$REWARDSMITH_CACHE_DIR``, else ``$XDG_CACHE_HOME/rewardsmith``, else
  ``~/.cache/rewardsmith``. The RLAIF pipelines call :func:`find_audited_set_leaks` on their prompts at
  the end of a run, so a set audited once is guarded without naming it again. Only fingerprints are
  stored, so the ledger matches normalised prompts exactly (no containment).
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
import warnings
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field, ValidationError

from rewardsmith.data import read_records
from rewardsmith.heldout.sets import AuditItem, set_hash
from rewardsmith.types import completion_text, prompt_text

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
        message = (
            f"{len(leaked)} of {len(items)} prompts of audit set {digest[:12]} appear in {data_path} "
            f"({len(rows)} rows): the set is no longer held out for judges trained on it"
        )
        warnings.warn(message, LeakageWarning, stacklevel=2)
        logger.warning(message)
    else:
        message = f"audit set {digest[:12]}: none of {len(items)} prompts appear in {data_path} ({len(rows)} rows)"
    return LeakReport(set_hash=digest, source=str(data_path), n_rows=len(rows), leaked=leaked, message=message)


# -- ledger of audited sets ------------------------------------------------------------------------

CACHE_ENV = "REWARDSMITH_CACHE_DIR"
AUDITED_SETS_FOLDER = "audit-sets"
#: Prompts quoted per overlapping set in warnings and summaries.
MAX_EXAMPLES = 3
EXAMPLE_CHARS = 120


class AuditedSet(BaseModel):
    """One audited set as the ledger stores it: its hash and the fingerprints of its prompts."""

    set_hash: str
    name: str = ""
    n_items: int
    fingerprints: list[str] = Field(description="prompt_fingerprint of every distinct prompt, sorted")


class AuditedSetLeak(BaseModel):
    """Prompts of a run that belong to an audited set."""

    set_hash: str
    name: str = ""
    n_overlap: int = Field(description="distinct prompts of the set found among the run's prompts")
    examples: list[str] = Field(description="a few of the run's overlapping prompts, shortened")

    def message(self) -> str:
        label = f"audit set {self.set_hash[:12]}" + (f" ({self.name})" if self.name else "")
        quoted = "; ".join(repr(example) for example in self.examples)
        return (
            f"{self.n_overlap} prompt(s) of {label} appear in this run's prompts, e.g. {quoted}: "
            "that set is no longer held out for a judge or policy trained on this data"
        )


def cache_root() -> Path:
    """``$REWARDSMITH_CACHE_DIR``, else ``$XDG_CACHE_HOME/rewardsmith``, else ``~/.cache/rewardsmith``."""
    explicit = os.environ.get(CACHE_ENV)
    if explicit:
        return Path(explicit).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg).expanduser() if xdg else Path.home() / ".cache") / "rewardsmith"


def audited_sets_dir() -> Path:
    return cache_root() / AUDITED_SETS_FOLDER


def prompt_fingerprint(text: str) -> str:
    """Identity of a prompt up to case and whitespace (what the ledger stores instead of the text)."""
    return hashlib.sha256(normalize(text).encode("utf-8")).hexdigest()[:32]


def record_audited_set(items: Sequence[AuditItem], name: str = "", directory: Path | None = None) -> Path | None:
    """Record ``items`` in the ledger (idempotent); returns the file, or ``None`` when it cannot be written.

    A ledger that cannot be written (read-only home) must not stop an audit: it is logged and skipped.
    """
    digest = set_hash(items)
    entry = AuditedSet(
        set_hash=digest,
        name=name,
        n_items=len(items),
        fingerprints=sorted({prompt_fingerprint(item.prompt) for item in items if item.prompt.strip()}),
    )
    folder = directory or audited_sets_dir()
    path = folder / f"{digest}.json"
    try:
        folder.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps(entry.model_dump(), indent=1))
        os.replace(tmp, path)
    except OSError as exc:
        logger.warning("could not record audit set %s in %s (leakage guard off for it): %s", digest[:12], folder, exc)
        return None
    return path


def audited_sets(directory: Path | None = None) -> list[AuditedSet]:
    """Every readable ledger entry; a damaged one is skipped with a warning."""
    folder = directory or audited_sets_dir()
    if not folder.is_dir():
        return []
    try:
        paths = sorted(folder.glob("*.json"))
    except OSError as exc:
        logger.warning("cannot read the audited-set ledger %s: %s", folder, exc)
        return []
    sets = []
    for path in paths:
        try:
            sets.append(AuditedSet.model_validate_json(path.read_text()))
        except (OSError, ValueError, ValidationError) as exc:
            logger.warning("skipping unreadable audited-set ledger entry %s: %s", path, exc)
    return sets


def prompt_variants(prompt: str | Sequence[Mapping[str, Any]]) -> list[str]:
    """Texts of one run prompt that may equal an audit prompt: the text itself, or for chat messages
    each user turn and all turns' contents together."""
    if isinstance(prompt, str):
        return [prompt]
    messages = [message for message in prompt if isinstance(message, Mapping)]
    contents = [completion_text(message) or "" for message in messages]
    users = [text for message, text in zip(messages, contents, strict=True) if message.get("role", "user") == "user"]
    return [text for text in (*users, "\n".join(contents)) if text.strip()]


def find_audited_set_leaks(
    prompts: Iterable[str | Sequence[Mapping[str, Any]]], directory: Path | None = None
) -> list[AuditedSetLeak]:
    """Which audited sets share prompts with ``prompts`` (plain texts or chat messages)."""
    sets = audited_sets(directory)
    if not sets:
        return []
    by_fingerprint: dict[str, str] = {}  # fingerprint -> the first run prompt that has it
    for prompt in prompts:
        for text in prompt_variants(prompt):
            by_fingerprint.setdefault(prompt_fingerprint(text), text)
    leaks = []
    for entry in sets:
        shared = [fp for fp in entry.fingerprints if fp in by_fingerprint]
        if not shared:
            continue
        examples = list(dict.fromkeys(_shorten(by_fingerprint[fp]) for fp in shared))[:MAX_EXAMPLES]
        leaks.append(AuditedSetLeak(set_hash=entry.set_hash, name=entry.name, n_overlap=len(shared), examples=examples))
    return leaks


def _shorten(text: str) -> str:
    text = re.sub(r"\s+", " ", text).strip()
    return text if len(text) <= EXAMPLE_CHARS else text[: EXAMPLE_CHARS - 3] + "..."
