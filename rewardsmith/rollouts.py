"""Stored rollouts as others write them, read into one shape: the completion, the row's columns, the stored reward.

``rewardsmith rescore`` re-verifies what a training run already scored. The runs were written by different tools,
each with its own layout; this module is the one place that knows them (the trainers' own writers are the source):

- ``rewardsmith``: ``rewardsmith score`` output (input columns, ``score``, ``reason``, ``details.components``,
  ``row_index``, ``scorer``).
- ``trl``: TRL's ``GRPOTrainer(log_completions=True)`` tables, ``<output_dir>/completions/completions_<step>.parquet``
  (``step``, ``prompt``, ``completion``, one column per reward function named as the function, the columns the
  reward functions logged with ``log_extra``, ``advantage``; TRL 1.16 ``GRPOTrainer.log``).
- ``verl``: verl's rollout dumps, ``trainer.rollout_data_dir/<step>.jsonl`` (``input``, ``output``, ``gts``,
  ``score``, ``step`` and the ``reward_extra_info`` keys; verl 0.9.1 ``RayPPOTrainer._write_generations``).
- ``nemo_gym``: NeMo Gym rollout files, one verify response per line (``responses_create_params``, the Responses
  API ``response`` object, ``reward``, optional ``reward_components``, and the task's own fields).

A stored reward of ``NaN`` (TRL writes ``None`` as NaN) or ``null`` is "unscorable". Nothing here scores.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

RolloutFormat = Literal["rewardsmith", "trl", "verl", "nemo_gym"]
FORMATS: tuple[RolloutFormat, ...] = ("rewardsmith", "trl", "verl", "nemo_gym")

#: columns a format writes about the run itself, never handed to a reward as a gold column
_RUN_COLUMNS: dict[str, frozenset[str]] = {
    "rewardsmith": frozenset({"score", "reason", "details", "row_index", "scorer"}),
    "trl": frozenset({"step", "prompt", "completion", "advantage"}),
    "verl": frozenset({"input", "output", "score", "step"}),
    "nemo_gym": frozenset({"responses_create_params", "response", "reward", "reward_components"}),
}


@dataclass
class StoredRollout:
    """One stored sample: what was scored, the columns a reward may read, and what the run paid for it."""

    completion: Any
    columns: dict[str, Any]
    #: the overall reward the run stored (``None``: unscorable or absent)
    score: float | None
    reason: str = ""
    #: stored per-term rewards by term name, where the format keeps them
    terms: dict[str, float | None] = field(default_factory=dict)


def detect_format(path: Path, columns: Sequence[str]) -> RolloutFormat:
    """The format of a stored file from its columns; a file none of them wrote is an error naming ``--format``."""
    names = set(columns)
    if {"row_index", "scorer", "score"} <= names:
        return "rewardsmith"
    if {"response", "reward"} <= names:
        return "nemo_gym"
    if {"input", "output", "score"} <= names:
        return "verl"
    if {"completion", "advantage"} <= names or (path.suffix == ".parquet" and "completion" in names):
        return "trl"
    raise ValueError(
        f"{path}: not a rollout file this reads (columns: {sorted(names)}); "
        f"name its layout with --format ({'|'.join(FORMATS)})"
    )


def read_rollouts(
    rows: Sequence[Mapping[str, Any]],
    fmt: RolloutFormat,
    *,
    term_names: Sequence[str] = (),
    completion_column: str = "completion",
) -> list[StoredRollout]:
    """``rows`` of a stored file in layout ``fmt`` as :class:`StoredRollout` (pure: no file access)."""
    reader = {"rewardsmith": _rewardsmith, "trl": _trl, "verl": _verl, "nemo_gym": _nemo_gym}[fmt]
    return [reader(dict(row), tuple(term_names), completion_column) for row in rows]


def gold_columns_of(row: Mapping[str, Any], fmt: RolloutFormat, completion_column: str) -> dict[str, Any]:
    """The row's columns a reward may read: everything but what the format writes about the run."""
    run = _RUN_COLUMNS[fmt] | {completion_column}
    return {k: v for k, v in row.items() if k not in run}


def stored_number(value: Any) -> float | None:
    """A stored reward as a float, ``None`` for null, NaN and anything that is not a number."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    number = float(value)
    return None if math.isnan(number) else number


def _rewardsmith(row: dict[str, Any], term_names: tuple[str, ...], completion_column: str) -> StoredRollout:
    details = row.get("details") if isinstance(row.get("details"), Mapping) else {}
    components = details.get("components") if isinstance(details, Mapping) else None
    terms = {str(k): stored_number(v) for k, v in components.items()} if isinstance(components, Mapping) else {}
    return StoredRollout(
        completion=row.get(completion_column),
        columns=gold_columns_of(row, "rewardsmith", completion_column),
        score=stored_number(row.get("score")),
        reason=str(row.get("reason") or ""),
        terms=terms,
    )


def _trl(row: dict[str, Any], term_names: tuple[str, ...], completion_column: str) -> StoredRollout:
    # TRL logs one column per reward function (named as the function) and no total: the total it trained on is
    # the spec's weighted sum, which rescore recomputes from the stored terms with the spec's weights
    terms = {name: stored_number(row.get(name)) for name in term_names if name in row}
    columns = {k: v for k, v in gold_columns_of(row, "trl", "completion").items() if k not in terms}
    return StoredRollout(completion=row.get("completion"), columns=columns, score=None, terms=terms)


def _verl(row: dict[str, Any], term_names: tuple[str, ...], completion_column: str) -> StoredRollout:
    columns = gold_columns_of(row, "verl", "output")
    terms = {name: stored_number(columns.pop(name)) for name in term_names if name in columns}
    return StoredRollout(
        completion=row.get("output"),
        columns=columns,
        score=stored_number(row.get("score")),
        reason=str(columns.get("reason") or ""),
        terms=terms,
    )


def _nemo_gym(row: dict[str, Any], term_names: tuple[str, ...], completion_column: str) -> StoredRollout:
    components = row.get("reward_components")
    terms = {str(k): stored_number(v) for k, v in components.items()} if isinstance(components, Mapping) else {}
    return StoredRollout(
        completion=response_text(row.get("response")),
        columns=gold_columns_of(row, "nemo_gym", completion_column),
        score=stored_number(row.get("reward")),
        reason=str(row.get("reason") or ""),
        terms=terms,
    )


def response_text(response: Any) -> str | None:
    """The assistant text of an OpenAI Responses object: its ``message`` output items' ``output_text`` parts."""
    if not isinstance(response, Mapping):
        return None
    texts = []
    for item in response.get("output") or ():
        if not isinstance(item, Mapping) or item.get("type", "message") != "message":
            continue
        if item.get("role", "assistant") != "assistant":
            continue
        for part in item.get("content") or ():
            if isinstance(part, Mapping) and part.get("type") == "output_text" and isinstance(part.get("text"), str):
                texts.append(part["text"])
    return "".join(texts) if texts else None
