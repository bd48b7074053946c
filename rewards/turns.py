"""Rewards that judge each assistant turn of a multi-turn transcript (see :mod:`rewardsmith.steps`).

- ``tool_call_validity``: each turn's tool calls name a tool the row declares (its ``tools`` column, OpenAI's
  ``tools`` list) and their arguments are a JSON object that validates against that tool's parameter schema;
- ``per_turn``: any completion reward (``think_format``, ``regex_match``, ...) applied to each turn's text.

Given to a trainer as ordinary rewards (TRL's conversational completions), each scores the whole transcript as the
mean of its turns; :func:`rewardsmith.steps.step_rewards` gets the per-turn values. Both need the messages: a
composite that hands its parts plain text gives ``tool_call_validity`` no calls to check, and that is said (the
sample unscorable, with the fix), never read as "no call made, so valid".
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import Field, field_validator

from rewardsmith.bridge import to_async
from rewardsmith.columns import as_column, rows_from_columns
from rewardsmith.compose import as_term, build_reward
from rewardsmith.registry import register_reward
from rewardsmith.reward import Reward, RewardConfig, score_rows
from rewardsmith.transcripts import ToolCall, Turn, assistant_turns, tool_schemas
from rewardsmith.types import RewardResult


class _TurnReward(Reward[Any]):
    """Scores the raw transcripts (text alone loses the tool calls); a transcript's score is its turns' mean."""

    def score_turns(self, turns: list[list[Turn]], rows: list[dict[str, Any]]) -> list[list[RewardResult]]:
        raise NotImplementedError

    def details(self, completions: Any, **kwargs: Any) -> list[RewardResult]:
        batch = as_column(completions)
        batch = [completions] if batch is None else batch
        turns = [assistant_turns(c) for c in batch]
        rows = rows_from_columns(len(batch), kwargs)
        return [_mean_of_turns(t) for t in self.score_turns(turns, rows)]

    async def adetails(self, completions: Any, **kwargs: Any) -> list[RewardResult]:
        return await to_async(self.details, completions, **kwargs)


def _mean_of_turns(results: list[RewardResult]) -> RewardResult:
    if not results:
        return RewardResult(score=0.0, reason="no assistant turn")
    unscorable = [r for r in results if r.score is None]
    if unscorable:
        return RewardResult.unscorable(unscorable[0].reason)
    scores = [r.score for r in results if r.score is not None]
    reasons = "; ".join(f"turn {k}: {r.score} ({r.reason})" for k, r in enumerate(results))
    return RewardResult(score=sum(scores) / len(scores), reason=reasons)


class ToolCallValidityConfig(RewardConfig):
    tools_column: str = Field("tools", description="row column holding the declared tools (OpenAI 'tools' list)")
    no_call_score: float = Field(1.0, ge=0.0, le=1.0, description="score of a turn that calls no tool")
    max_argument_chars: int = Field(100_000, ge=1, description="arguments longer than this are invalid (0.0)")


@register_reward("tool_call_validity")
class ToolCallValidity(_TurnReward):
    """Per turn: 1.0 when every tool call names a declared tool with arguments valid against its schema, else 0.0.

    A turn without calls scores ``no_call_score``. A row whose ``tools`` column is absent or not a tools list is
    unscorable (the data's fault), and so is a declared schema that is itself invalid.
    """

    Config = ToolCallValidityConfig
    config: ToolCallValidityConfig

    @property
    def gold_columns(self) -> tuple[str, ...]:
        return (self.config.tools_column,)

    def score_one(self, completion: str, row: Mapping[str, Any]) -> RewardResult:
        return RewardResult.unscorable(
            "tool_call_validity needs the transcript's messages (their tool calls), got plain text: give it the "
            "conversational completion directly, not through a composite that passes text"
        )

    def score_turns(self, turns: list[list[Turn]], rows: list[dict[str, Any]]) -> list[list[RewardResult]]:
        column = self.config.tools_column
        out = []
        for sample, row in zip(turns, rows or [{} for _ in turns], strict=True):
            schemas = tool_schemas(row.get(column))
            if schemas is None:
                why = f"column {column!r} is missing or not an OpenAI tools list"
                out.append([RewardResult.unscorable(why) for _ in sample])
                continue
            out.append([self._turn(turn, schemas) for turn in sample])
        return out

    def _turn(self, turn: Turn, schemas: dict[str, Any]) -> RewardResult:
        if not turn.tool_calls:
            return RewardResult(score=self.config.no_call_score, reason="no tool call")
        for call in turn.tool_calls:
            problem = self._problem(call, schemas)
            if isinstance(problem, RewardResult):
                return problem
            if problem:
                return RewardResult(score=0.0, reason=f"call {call.name!r}: {problem}")
        names = ", ".join(str(c.name) for c in turn.tool_calls)
        return RewardResult(score=1.0, reason=f"{len(turn.tool_calls)} valid call(s): {names}")

    def _problem(self, call: ToolCall, schemas: dict[str, Any]) -> str | RewardResult | None:
        from jsonschema import SchemaError
        from jsonschema.exceptions import best_match
        from jsonschema.validators import validator_for

        if call.name is None or call.name not in schemas:
            return f"no declared tool of that name (declared: {', '.join(sorted(schemas)) or 'none'})"
        if isinstance(call.arguments, str) and len(call.arguments) > self.config.max_argument_chars:
            return f"arguments of {len(call.arguments)} chars > max_argument_chars={self.config.max_argument_chars}"
        arguments, why = call.parsed_arguments()
        if arguments is None:
            return why
        schema = schemas[call.name]
        try:
            validator = validator_for(schema)
            validator.check_schema(schema)
            error = best_match(validator(schema).iter_errors(arguments))
        except SchemaError as exc:
            return RewardResult.unscorable(f"tool {call.name!r} declares an invalid schema: {exc.message}")
        except RecursionError:
            return "arguments nested too deep to validate"
        if error is not None:
            where = "/".join(str(p) for p in error.absolute_path) or "arguments"
            return f"{where}: {error.message[:200]}"
        return None


class PerTurnConfig(RewardConfig):
    reward: Any = Field(description="the completion reward applied to each assistant turn's text")

    @field_validator("reward")
    @classmethod
    def _parse(cls, value: Any) -> Any:
        return as_term(value)


@register_reward("per_turn")
class PerTurn(_TurnReward):
    """``reward`` applied to the text of each assistant turn (a format check per turn, say)."""

    Config = PerTurnConfig
    config: PerTurnConfig

    def __init__(self, config: Any = None, **overrides: Any) -> None:
        super().__init__(config, **overrides)
        self.inner = build_reward(self.config.reward)

    def score_one(self, completion: str, row: Mapping[str, Any]) -> RewardResult:
        return score_rows(self.inner, [completion], [dict(row)])[0]

    def score_turns(self, turns: list[list[Turn]], rows: list[dict[str, Any]]) -> list[list[RewardResult]]:
        rows = rows or [{} for _ in turns]
        texts: list[str | None] = [turn.text for sample in turns for turn in sample]
        repeated = [row for sample, row in zip(turns, rows, strict=True) for _ in sample]
        flat = score_rows(self.inner, texts, repeated) if texts else []
        out, start = [], 0
        for sample in turns:
            out.append(list(flat[start : start + len(sample)]))
            start += len(sample)
        return out
