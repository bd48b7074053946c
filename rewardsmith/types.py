"""Value types shared by every reward: the per-sample result and completion normalisation."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict


class RewardResult(BaseModel):
    """One sample's verdict: the number the trainer sees and the reason a person reads.

    ``score is None`` means *unscorable* (missing gold, infrastructure failure, timeout);
    ``0.0`` means *scored and wrong*. Families may attach extra fields (``extracted``, ``gold``, ...).
    """

    model_config = ConfigDict(extra="allow")

    score: float | None
    reason: str = ""

    @classmethod
    def unscorable(cls, reason: str, **extra: Any) -> RewardResult:
        return cls(score=None, reason=reason, **extra)


def completion_text(completion: Any) -> str | None:
    """Return the assistant text of a plain or conversational completion, or ``None``.

    TRL passes ``str`` for plain datasets and ``[{"role": "assistant", "content": ...}]``
    for conversational ones; content may itself be a list of ``{"type": "text", "text": ...}`` parts.
    """
    if isinstance(completion, str):
        return completion
    if isinstance(completion, Mapping):
        return _content_text(completion.get("content"))
    if isinstance(completion, Sequence) and not isinstance(completion, (bytes, bytearray)):
        texts = [
            _content_text(message.get("content"))
            for message in completion
            if isinstance(message, Mapping) and message.get("role", "assistant") == "assistant"
        ]
        present = [t for t in texts if t is not None]
        return "".join(present) if present else None
    return None


def describe_non_text(completion: Any) -> str:
    """Why ``completion`` has no text, naming the type that was found (``"completion is int, not text"``).

    Used for the reason of an unscorable sample, so a broken pipeline (ids instead of text, a message
    whose ``content`` is a number) is recognisable from the logs. Never raises.
    """
    try:
        if isinstance(completion, Mapping):
            return _describe_content(completion.get("content"))
        if isinstance(completion, Sequence) and not isinstance(completion, (str, bytes, bytearray)):
            if not completion:
                return "completion is an empty list, not text"
            messages = [m for m in completion if isinstance(m, Mapping)]
            if not messages:
                return f"completion is a list of {type(completion[0]).__name__}, not messages"
            assistant = [m for m in messages if m.get("role", "assistant") == "assistant"]
            if not assistant:
                return "completion has no assistant message"
            return _describe_content(assistant[-1].get("content"))
        kind = "None" if completion is None else type(completion).__name__
        return f"completion is {kind}, not text"
    except Exception:  # an exotic object that cannot even be inspected
        return "completion is not text"


def _describe_content(content: Any) -> str:
    if isinstance(content, Sequence) and not isinstance(content, (str, bytes, bytearray)):
        return "completion content has no text part"
    kind = "None" if content is None else type(content).__name__
    return f"completion content is {kind}, not text"


def _content_text(content: Any) -> str | None:
    if isinstance(content, str):
        return content
    if isinstance(content, Sequence) and not isinstance(content, (bytes, bytearray)):
        parts = [text for part in content if isinstance(part, Mapping) and isinstance(text := part.get("text"), str)]
        return "".join(parts) if parts else None
    return None


def prompt_text(prompt: Any) -> str | None:
    """Return the last user turn of a plain or conversational prompt (``None`` when absent)."""
    if isinstance(prompt, str):
        return prompt
    if isinstance(prompt, Sequence) and not isinstance(prompt, (bytes, bytearray)):
        users = [_content_text(m.get("content")) for m in prompt if isinstance(m, Mapping) and m.get("role") == "user"]
        users = [u for u in users if u is not None]
        return users[-1] if users else None
    return None
