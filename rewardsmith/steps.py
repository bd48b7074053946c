"""Per-step rewards over multi-turn transcripts: one value per assistant turn, from any reward or composite.

The face is :func:`step_rewards` (values) and :func:`step_details` (values with reasons)::

    step_rewards(reward, transcripts, **columns) -> list[list[float | None]]   # aligned to assistant turns

A reward that judges turns itself implements :class:`TurnReward` (``score_turns``): the built-ins are
``tool_call_validity`` (each turn's calls name a declared tool and their arguments validate against its schema) and
``per_turn`` (any completion reward applied to each turn's text). Every other reward is an *outcome* reward: it
scores the transcript's final assistant turn, and ``credit`` says how that verdict reaches the turns:

- ``final`` (default): the sparse reward of RL — the last turn gets the outcome, earlier turns 0.0;
- ``every``: every turn gets the outcome (a turn's return under gamma = 1);
- ``discounted``: turn ``k`` of ``T`` gets ``gamma ** (T - 1 - k)`` times the outcome.

An unscorable outcome makes every turn ``None`` (the sample carries no signal), never 0.0. Composites work per turn:
``weighted_sum`` sums its parts turn by turn over the parts that scored, ``gate`` decides turn by turn, ``route``
picks a target per transcript. The outcome of each sample is still what :meth:`Reward.details` returns for it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal, Protocol, runtime_checkable

from rewardsmith.compose import Gate, Route, WeightedSum
from rewardsmith.reward import Reward
from rewardsmith.transcripts import Turn, assistant_turns
from rewardsmith.types import RewardResult

Credit = Literal["final", "every", "discounted"]
CREDITS: tuple[Credit, ...] = ("final", "every", "discounted")


@runtime_checkable
class TurnReward(Protocol):
    """A reward that scores each assistant turn of a transcript itself (rather than only its outcome)."""

    def score_turns(self, turns: list[list[Turn]], rows: list[dict[str, Any]]) -> list[list[RewardResult]]:
        """One result per turn of each transcript, aligned with ``turns``."""
        ...


def step_rewards(
    reward: Reward, transcripts: Sequence[Any], *, credit: Credit = "final", gamma: float = 1.0, **columns: Any
) -> list[list[float | None]]:
    """Per-turn values of ``reward`` for each transcript (see the module doc for the rule)."""
    details = step_details(reward, transcripts, credit=credit, gamma=gamma, **columns)
    return [[r.score for r in turns] for turns in details]


def step_details(
    reward: Reward, transcripts: Sequence[Any], *, credit: Credit = "final", gamma: float = 1.0, **columns: Any
) -> list[list[RewardResult]]:
    """Per-turn results (value and reason) of ``reward`` for each transcript."""
    if credit not in CREDITS:
        raise ValueError(f"credit={credit!r}: use one of {', '.join(CREDITS)}")
    if not 0.0 < gamma <= 1.0:
        raise ValueError(f"gamma={gamma}: use a discount in (0, 1]")
    turns = [assistant_turns(t) for t in transcripts]
    rows = _rows(len(transcripts), columns)
    return _steps(reward, turns, rows, credit, gamma)


def _rows(n: int, columns: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Row dicts from TRL-style aligned column lists (a column that is not a list of ``n`` is left out)."""
    aligned = {k: list(v) for k, v in columns.items() if isinstance(v, Sequence) and not isinstance(v, str)}
    aligned = {k: v for k, v in aligned.items() if len(v) == n}
    return [{k: v[i] for k, v in aligned.items()} for i in range(n)]


def _columns(rows: list[dict[str, Any]]) -> dict[str, list[Any]]:
    names = sorted({k for row in rows for k in row})
    return {k: [row.get(k) for row in rows] for k in names}


def _steps(
    reward: Reward, turns: list[list[Turn]], rows: list[dict[str, Any]], credit: Credit, gamma: float
) -> list[list[RewardResult]]:
    if not turns:
        return []
    if isinstance(reward, WeightedSum):
        return _weighted(reward, turns, rows, credit, gamma)
    if isinstance(reward, Gate):
        return _gated(reward, turns, rows, credit, gamma)
    if isinstance(reward, Route):
        return _routed(reward, turns, rows, credit, gamma)
    if isinstance(reward, TurnReward):
        return reward.score_turns(turns, rows)
    return _outcome(reward, turns, rows, credit, gamma)


def _outcome(
    reward: Reward, turns: list[list[Turn]], rows: list[dict[str, Any]], credit: Credit, gamma: float
) -> list[list[RewardResult]]:
    """The final turn's verdict, credited back to the turns."""
    finals = [t[-1].text if t else None for t in turns]
    results = reward.details(finals, **_columns(rows))
    out = []
    for sample, result in zip(turns, results, strict=True):
        n = len(sample)
        if result.score is None:
            out.append([RewardResult.unscorable(f"outcome unscorable: {result.reason}") for _ in sample])
            continue
        per_turn = []
        for k in range(n):
            if credit == "final" and k < n - 1:
                per_turn.append(RewardResult(score=0.0, reason="no reward before the final turn (final credit)"))
                continue
            value = _credited(result.score, k, n, credit, gamma)
            per_turn.append(
                RewardResult(score=value, reason=f"outcome {result.score} ({credit} credit): {result.reason}")
            )
        out.append(per_turn)
    return out


def _credited(outcome: float, k: int, n: int, credit: Credit, gamma: float) -> float:
    if credit == "every":
        return outcome
    if credit == "discounted":
        return outcome * gamma ** (n - 1 - k)
    return outcome if k == n - 1 else 0.0


def _weighted(
    reward: WeightedSum, turns: list[list[Turn]], rows: list[dict[str, Any]], credit: Credit, gamma: float
) -> list[list[RewardResult]]:
    parts = [_steps(p, turns, rows, credit, gamma) for p in reward.parts]
    out = []
    for i, sample in enumerate(turns):
        per_turn = []
        for k in range(len(sample)):
            total, scored, reasons = 0.0, 0, []
            for part, weight, results in zip(reward.parts, reward.weights, parts, strict=True):
                result = results[i][k]
                reasons.append(f"{part.__name__}={result.score} ({result.reason})")
                if result.score is None:
                    scored += reward.config.missing == "zero"
                    continue
                total += weight * result.score
                scored += 1
            per_turn.append(RewardResult(score=total if scored else None, reason="; ".join(reasons)))
        out.append(per_turn)
    return out


def _gated(
    reward: Gate, turns: list[list[Turn]], rows: list[dict[str, Any]], credit: Credit, gamma: float
) -> list[list[RewardResult]]:
    gates = _steps(reward.gate, turns, rows, credit, gamma)
    inner = _steps(reward.inner, turns, rows, credit, gamma)
    threshold, otherwise = reward.config.threshold, reward.config.otherwise
    out = []
    for gate_turns, inner_turns in zip(gates, inner, strict=True):
        per_turn = []
        for g, r in zip(gate_turns, inner_turns, strict=True):
            if g.score is None:
                per_turn.append(RewardResult.unscorable(f"gate {reward.gate.__name__} unscorable: {g.reason}"))
            elif g.score >= threshold:
                per_turn.append(RewardResult(score=r.score, reason=f"gate passed; {r.reason}"))
            else:
                reason = f"gate {reward.gate.__name__} failed ({g.score}): {g.reason}"
                per_turn.append(RewardResult(score=otherwise, reason=reason))
        out.append(per_turn)
    return out


def _routed(
    reward: Route, turns: list[list[Turn]], rows: list[dict[str, Any]], credit: Credit, gamma: float
) -> list[list[RewardResult]]:
    column = reward.config.column
    out: list[list[RewardResult] | None] = [None] * len(turns)
    plan: dict[int | None, list[int]] = {}
    for i, row in enumerate(rows or [{} for _ in turns]):
        plan.setdefault(reward.route_index(row.get(column)) if column in row else None, []).append(i)
    for index, members in plan.items():
        target = reward.targets[index] if index is not None else reward.default
        if target is None:
            for i in members:
                why = f"no route for {column}={rows[i].get(column)!r}" if rows and column in rows[i] else (
                    f"no column {column!r} to route by")  # fmt: skip
                out[i] = [RewardResult.unscorable(why) for _ in turns[i]]
            continue
        scored = _steps(target, [turns[i] for i in members], [rows[i] for i in members] if rows else [], credit, gamma)
        for i, results in zip(members, scored, strict=True):
            out[i] = results
    return [r if r is not None else [] for r in out]


__all__ = ["CREDITS", "Credit", "TurnReward", "step_details", "step_rewards"]
