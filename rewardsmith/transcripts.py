"""Multi-turn transcripts read into assistant turns: the unit a per-step reward scores.

Agent rollouts arrive as chat messages in two dialects, and both are read here, once:

- OpenAI's: an assistant message may carry ``tool_calls`` (``{"id", "type": "function", "function": {"name",
  "arguments": "<JSON text>"}}``), answered by ``{"role": "tool", "tool_call_id", "content"}`` messages;
- TRL's (``GRPOTrainer`` with ``tools=``): the same shape with ``arguments`` already a dict, answered by
  ``{"role": "tool", "name", "content"}``.

Only assistant messages are turns (user and system messages are the environment's side); tool messages are attached
to the turn whose calls they answer. Message content may be a string or a list of ``{"type": "text", "text"}`` parts.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from rewardsmith.types import completion_text


@dataclass(frozen=True)
class ToolCall:
    """One call as the model wrote it: the arguments stay raw (text or dict) so a malformed call is visible."""

    name: str | None
    arguments: Any
    id: str | None = None

    def parsed_arguments(self) -> tuple[dict[str, Any] | None, str | None]:
        """``(arguments, None)`` for a JSON object (or a dict, TRL's form), else ``(None, why not)``."""
        raw = self.arguments
        if isinstance(raw, Mapping):
            return dict(raw), None
        if not isinstance(raw, str):
            return None, f"arguments are {type(raw).__name__}, not a JSON object"
        try:
            value = json.loads(raw)
        except (ValueError, RecursionError) as exc:
            return None, f"arguments are not JSON ({str(exc)[:80]})"
        if not isinstance(value, dict):
            return None, f"arguments are a JSON {type(value).__name__}, not an object"
        return value, None


@dataclass(frozen=True)
class Turn:
    """An assistant turn: its text, the tool calls it made and the tool results that answered them."""

    index: int
    text: str
    tool_calls: tuple[ToolCall, ...] = ()
    tool_results: tuple[str, ...] = ()


def assistant_turns(transcript: Any) -> list[Turn]:
    """The assistant turns of ``transcript`` in order: a list of messages, or a plain string (one turn)."""
    if isinstance(transcript, str):
        return [Turn(0, transcript)]
    if isinstance(transcript, Mapping):
        transcript = [transcript]
    if not isinstance(transcript, Sequence):
        return []
    turns: list[Turn] = []
    for message in transcript:
        if not isinstance(message, Mapping):
            continue
        role = message.get("role", "assistant")
        if role == "assistant":
            calls = tuple(_tool_call(c) for c in message.get("tool_calls") or () if isinstance(c, Mapping))
            text = completion_text({"content": message.get("content")}) or ""
            turns.append(Turn(len(turns), text, calls))
        elif role == "tool" and turns:
            last = turns[-1]
            result = completion_text({"content": message.get("content")}) or ""
            turns[-1] = Turn(last.index, last.text, last.tool_calls, (*last.tool_results, result))
    return turns


def _tool_call(call: Mapping[str, Any]) -> ToolCall:
    function = call.get("function") if isinstance(call.get("function"), Mapping) else call
    name = function.get("name") if isinstance(function, Mapping) else None
    arguments = function.get("arguments") if isinstance(function, Mapping) else None
    return ToolCall(name if isinstance(name, str) else None, arguments, call.get("id"))


def tool_schemas(tools: Any) -> dict[str, Any] | None:
    """``name -> JSON schema of its parameters`` from an OpenAI ``tools`` list (or its JSON text), ``None`` when
    ``tools`` is not one."""
    if isinstance(tools, str):
        try:
            tools = json.loads(tools)
        except ValueError:
            return None
    if not isinstance(tools, Sequence) or isinstance(tools, (str, bytes)):
        return None
    schemas: dict[str, Any] = {}
    for tool in tools:
        if not isinstance(tool, Mapping):
            return None
        inner = tool.get("function")
        function: Mapping[str, Any] = inner if isinstance(inner, Mapping) else tool
        name = function.get("name")
        if not isinstance(name, str):
            return None
        schemas[name] = function.get("parameters") or {"type": "object"}
    return schemas
