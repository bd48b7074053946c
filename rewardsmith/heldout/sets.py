"""Held-out audit sets: the item model, JSONL import/export and the content hash.

An :class:`AuditItem` is one comparison with a known answer: a prompt, two responses and ``gold``
("a", "b" or "tie"). Procedural generators live in :mod:`rewardsmith.audit.generators`; this
module only defines the format, reads user exports and identifies a set by its content.

Accepted JSONL rows (one object a line; ``id``, ``category``, ``metadata``, ``author_a``/``author_b``
optional):

* native: ``prompt``, ``response_a``, ``response_b``, ``gold`` (``a``/``b``/``tie``; ``A``, ``model_a``,
  ``response_a``, ``tie (bothbad)`` … are read too);
* MT-Bench human judgments: ``conversation_a``, ``conversation_b``, ``winner``, ``model_a``, ``model_b``;
* RewardBench-style: ``prompt``, ``chosen``, ``rejected`` (the chosen one is placed in slot a or b by a
  hash of the row, so gold positions are balanced and reproducible).
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from rewardsmith.types import completion_text, prompt_text

Gold = Literal["a", "b", "tie"]


class GoldCheck(BaseModel):
    """How a rewardsmith verifier decides the gold: score both responses with ``reward``; gold must win."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    reward: str = Field(description="registered reward name, e.g. math_equivalence")
    config: dict[str, Any] = Field(default_factory=dict, description="reward config")
    columns: dict[str, Any] = Field(default_factory=dict, description="dataset columns passed with the completion")


class AuditItem(BaseModel):
    """One held-out comparison with a known better response."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str
    prompt: str
    response_a: str
    response_b: str
    gold: Gold
    category: str = "imported"
    author_a: str | None = Field(None, description="who wrote response_a (self-preference audit)")
    author_b: str | None = None
    check: GoldCheck | None = Field(None, description="verifier that decides the gold, when known")
    metadata: dict[str, Any] = Field(default_factory=dict)

    @property
    def gold_response(self) -> str | None:
        return {"a": self.response_a, "b": self.response_b}.get(self.gold)

    @property
    def wrong_slot(self) -> Literal["a", "b"] | None:
        if self.gold == "a":
            return "b"
        return "a" if self.gold == "b" else None


def content_hash(text: str, length: int = 12) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:length]


def item_id(category: str, prompt: str, response_a: str, response_b: str) -> str:
    """A stable id derived from content, so a regenerated or re-imported set keeps its ids."""
    return f"{category}-{content_hash(json.dumps([prompt, response_a, response_b]), 12)}"


def set_hash(items: Iterable[AuditItem]) -> str:
    """Identity of a set: sha256 over the canonical (id-sorted) prompts, responses and gold labels."""
    canonical = sorted([it.id, it.prompt, it.response_a, it.response_b, it.gold] for it in items)
    return hashlib.sha256(json.dumps(canonical, ensure_ascii=False).encode("utf-8")).hexdigest()


# -- JSONL export / import --------------------------------------------------------------------------


def write_set(path: str | os.PathLike[str], items: Sequence[AuditItem]) -> str:
    """Write items as native JSONL (atomic); returns the set hash."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    with tmp.open("w", encoding="utf-8") as fh:
        for item in items:
            fh.write(item.model_dump_json(exclude_defaults=True) + "\n")
    os.replace(tmp, path)
    return set_hash(items)


def read_set(path: str | os.PathLike[str]) -> list[AuditItem]:
    """Read a native, MT-Bench-judgment or RewardBench-style JSONL file (see module docstring)."""
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"no such audit set: {path}")
    items: list[AuditItem] = []
    seen: set[str] = set()
    with path.open(encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                raise ValueError(f"{path}:{lineno}: not JSON: {exc}") from None
            try:
                item = item_from_row(row)
            except ValueError as exc:
                raise ValueError(f"{path}:{lineno}: {exc}") from None
            if item.id in seen:
                raise ValueError(f"{path}:{lineno}: duplicate item id {item.id!r}")
            seen.add(item.id)
            items.append(item)
    if not items:
        raise ValueError(f"{path}: the audit set is empty")
    return items


_GOLD_ALIASES: dict[str, Gold] = {
    "a": "a",
    "model_a": "a",
    "response_a": "a",
    "first": "a",
    "b": "b",
    "model_b": "b",
    "response_b": "b",
    "second": "b",
    "tie": "tie",
    "tie (bothbad)": "tie",
    "tie(bothbad)": "tie",
    "draw": "tie",
}


def normalize_gold(value: Any) -> Gold:
    """Map the spellings found in common exports to ``a``/``b``/``tie``."""
    key = str(value).strip().lower() if value is not None else ""
    if key not in _GOLD_ALIASES:
        raise ValueError(f"unknown gold label {value!r} (use a, b or tie)")
    return _GOLD_ALIASES[key]


def item_from_row(row: Mapping[str, Any]) -> AuditItem:
    """One JSONL row of any accepted shape → :class:`AuditItem`."""
    if not isinstance(row, Mapping):
        raise ValueError("each line must be a JSON object")
    if "conversation_a" in row and "conversation_b" in row:
        return _from_mt_bench(row)
    if "chosen" in row and "rejected" in row:
        return _from_chosen_rejected(row)
    missing = [k for k in ("prompt", "response_a", "response_b", "gold") if k not in row]
    if missing:
        raise ValueError(f"missing field(s) {missing}; expected prompt, response_a, response_b, gold")
    prompt = _text(row["prompt"], "prompt", prompt_text)
    a = _text(row["response_a"], "response_a", completion_text)
    b = _text(row["response_b"], "response_b", completion_text)
    category = str(row.get("category") or "imported")
    return AuditItem(
        id=str(row.get("id") or item_id(category, prompt, a, b)),
        prompt=prompt,
        response_a=a,
        response_b=b,
        gold=normalize_gold(row["gold"]),
        category=category,
        author_a=row.get("author_a"),
        author_b=row.get("author_b"),
        check=GoldCheck.model_validate(row["check"]) if row.get("check") else None,
        metadata=dict(row.get("metadata") or {}),
    )


def _from_mt_bench(row: Mapping[str, Any]) -> AuditItem:
    conv_a, conv_b = row["conversation_a"], row["conversation_b"]
    prompt = _conversation_prompt(conv_a)
    a = _text(completion_text(_last_assistant(conv_a)), "conversation_a", completion_text)
    b = _text(completion_text(_last_assistant(conv_b)), "conversation_b", completion_text)
    category = "mt_bench"
    base = item_id(category, prompt, a, b)
    suffix = "-".join(str(row[k]) for k in ("question_id", "judge", "turn") if row.get(k) is not None)
    return AuditItem(
        id=f"{base}-{content_hash(suffix, 8)}" if suffix else base,
        prompt=prompt,
        response_a=a,
        response_b=b,
        gold=normalize_gold(row.get("winner")),
        category=category,
        author_a=row.get("model_a"),
        author_b=row.get("model_b"),
        metadata={k: row[k] for k in ("question_id", "judge", "turn") if k in row},
    )


def _from_chosen_rejected(row: Mapping[str, Any]) -> AuditItem:
    prompt = _text(row.get("prompt"), "prompt", prompt_text)
    chosen = _text(row["chosen"], "chosen", completion_text)
    rejected = _text(row["rejected"], "rejected", completion_text)
    category = str(row.get("category") or row.get("subset") or "imported")
    # Place the chosen response by a hash of the row: balanced slots, same placement on every import.
    chosen_first = int(content_hash(json.dumps([prompt, chosen, rejected]), 8), 16) % 2 == 0
    a, b = (chosen, rejected) if chosen_first else (rejected, chosen)
    return AuditItem(
        id=str(row.get("id") or item_id(category, prompt, a, b)),
        prompt=prompt,
        response_a=a,
        response_b=b,
        gold="a" if chosen_first else "b",
        category=category,
        author_a=row.get("chosen_model" if chosen_first else "rejected_model"),
        author_b=row.get("rejected_model" if chosen_first else "chosen_model"),
        metadata={k: row[k] for k in ("subset",) if k in row},
    )


def _conversation_prompt(conversation: Any) -> str:
    """Every turn before the last assistant message, as one text (the judge sees the whole exchange)."""
    if not isinstance(conversation, Sequence) or isinstance(conversation, str):
        raise ValueError("conversation_a/conversation_b must be lists of messages")
    last = max((i for i, m in enumerate(conversation) if m.get("role") == "assistant"), default=len(conversation))
    turns = [m for m in conversation[:last] if isinstance(m, Mapping)]
    if len(turns) == 1:
        return _text(turns[0].get("content"), "conversation prompt", completion_text)
    return "\n\n".join(f"[{m.get('role', 'user')}]\n{completion_text(m.get('content')) or ''}" for m in turns)


def _last_assistant(conversation: Sequence[Mapping[str, Any]]) -> Any:
    for message in reversed(conversation):
        if message.get("role") == "assistant":
            return message.get("content")
    return None


def _text(value: Any, field: str, extract: Any) -> str:
    text = extract(value)
    if not isinstance(text, str):
        raise ValueError(f"{field} is not text")
    return text
