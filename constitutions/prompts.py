"""Pipeline inputs: prompts (plain or conversational) with optional candidate responses.

Any file ``datasets`` reads works (jsonl, json, csv, parquet). A prompt is a string or a list of
chat messages; candidates are a list of strings (or of assistant messages) in one column.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from rewardsmith.judges.base import Message
from rewardsmith.types import completion_text

DEMO_PROMPTS = "demo_prompts.jsonl"


@dataclass(frozen=True)
class PromptItem:
    """One input row: the prompt as given, its text for the judge, and its candidate responses."""

    index: int
    prompt_id: str
    prompt: str | list[Message]
    candidates: tuple[str, ...] = field(default_factory=tuple)
    reference: str | None = None  # the candidate a person marked as better, if the data says

    @property
    def messages(self) -> list[Message]:
        """The prompt as chat messages (what a policy model is sent)."""
        if isinstance(self.prompt, str):
            return [{"role": "user", "content": self.prompt}]
        return [dict(message) for message in self.prompt]

    @property
    def text(self) -> str:
        """The prompt as one text (what a judge is shown)."""
        return conversation_text(self.prompt)


def conversation_text(prompt: str | Sequence[Mapping[str, Any]]) -> str:
    """A single user turn is shown as is; a longer conversation as ``role: content`` lines."""
    if isinstance(prompt, str):
        return prompt
    turns = [(str(m.get("role", "user")), completion_text(m) or "") for m in prompt]
    if len(turns) == 1 and turns[0][0] == "user":
        return turns[0][1]
    return "\n\n".join(f"{role}: {content}" for role, content in turns)


def distinct_candidates(candidates: Iterable[str]) -> list[str]:
    """The candidates that can take part in a pair: non-empty, one per text up to surrounding whitespace."""
    seen: dict[str, str] = {}
    for candidate in candidates:
        seen.setdefault(candidate.strip(), candidate)
    seen.pop("", None)
    return list(seen.values())


def is_pairable(item: PromptItem) -> bool:
    """Whether ``item`` has two candidates a judge can compare (else it is dropped, not judged)."""
    return len(distinct_candidates(item.candidates)) >= 2


def content_key(*parts: Any) -> str:
    """Stable 16-hex key of JSON-serialisable parts (same content -> same key, across processes)."""
    payload = json.dumps(parts, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()[:16]


def demo_prompts_path() -> Path:
    """The bundled demo prompts (each with two or three candidate responses)."""
    entry = resources.files("rewardsmith.constitutions").joinpath("data").joinpath(DEMO_PROMPTS)
    return Path(str(entry))


def read_prompt_items(
    path: str | os.PathLike[str],
    *,
    prompt_column: str = "prompt",
    responses_column: str | None = "responses",
    id_column: str | None = "id",
    reference_column: str | None = "better",
    limit: int | None = None,
) -> list[PromptItem]:
    """Rows of ``path`` as :class:`PromptItem`; a missing responses column means "generate them".

    ``reference_column`` (optional) marks the better candidate, by 0-based index or by its text; it is
    never shown to the judge, only used to report how often the judge agrees with it.
    """
    from rewardsmith.data import read_records

    records = read_records(path)
    if limit is not None:
        records = records[:limit]
    if records and prompt_column not in records[0]:
        raise ValueError(f"{path}: no prompt column {prompt_column!r} (columns: {sorted(records[0])})")
    items = []
    for index, record in enumerate(records):
        prompt = record[prompt_column]
        if not isinstance(prompt, str) and not _is_messages(prompt):
            raise ValueError(f"{path}: row {index}: {prompt_column!r} must be a string or a list of chat messages")
        candidates: tuple[str, ...] = ()
        if responses_column and record.get(responses_column) is not None:
            raw = record[responses_column]
            if isinstance(raw, str):
                raw = [raw]  # one response (e.g. the SL stage's column of single responses)
            elif not isinstance(raw, Sequence):
                raise ValueError(f"{path}: row {index}: {responses_column!r} must be a response or a list of them")
            texts = [completion_text(candidate) for candidate in raw]
            candidates = tuple(t for t in texts if t is not None)
        raw_id = record.get(id_column) if id_column else None
        prompt_id = str(raw_id) if raw_id is not None else content_key(prompt)
        reference = _reference(record.get(reference_column) if reference_column else None, candidates)
        items.append(
            PromptItem(index=index, prompt_id=prompt_id, prompt=prompt, candidates=candidates, reference=reference)
        )
    return items


def _reference(value: Any, candidates: tuple[str, ...]) -> str | None:
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int):
        return candidates[value] if 0 <= value < len(candidates) else None
    return value if isinstance(value, str) and value in candidates else None


def _is_messages(value: Any) -> bool:
    return (
        isinstance(value, Sequence)
        and not isinstance(value, str)
        and len(value) > 0
        and all(isinstance(m, Mapping) and "content" in m for m in value)
    )
