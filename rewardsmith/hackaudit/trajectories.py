"""Multi-turn audit: mutate honest agent transcripts and measure how often a reward pays the mutant as much.

A transcript reward can be fooled by what the policy leaves out or makes up as well as by its final text: it may
pay a trajectory whose work turns are gone, whose tool calls were never made, whose answer is wrong, whose final
turn is repeated to pad a per-turn mean, or that quotes a tool result no tool produced. Each mutation below is
applied to every honest transcript it fits; the mutant is scored by the same face as the honest one
(:func:`rewardsmith.steps.step_rewards` folded by ``face``, or the reward's ordinary per-sample face), and the
audit reports per mutation the share of transcripts where the mutant was paid **at least as much as the honest
transcript**, with its 95 % Wilson interval (:func:`rewardsmith.audit.stats.rate_estimate`).

Not every paid mutation is a bug, and the report does not pretend it is: an outcome-only reward pays a transcript
with its work dropped by design (it reads only the answer). The audit's job is to show which of these a reward
cannot tell apart, so that a reward meant to check the process (``tool_call_validity`` beside an outcome) can be
seen to do so. A corrupted final answer paid as much as the right one is a real hole in any reward that has an
outcome term. Only transcripts whose honest value was scored and above zero count: a mutant "as good as" an
honest zero says nothing.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from rewardsmith.audit.stats import rate_estimate
from rewardsmith.hackaudit.attacks.answers import same_answer
from rewardsmith.hackaudit.attacks.base import format_number, numeric
from rewardsmith.reward import Reward
from rewardsmith.steps import Credit, step_rewards

Face = Literal["sum", "mean", "last", "sample"]
FACES: tuple[Face, ...] = ("sum", "mean", "last", "sample")
#: Columns read as the transcript, first found wins (the chat-messages forms of TRL and OpenAI datasets).
TRANSCRIPT_COLUMNS = ("messages", "transcript", "completion")
Messages = list[dict[str, Any]]


@dataclass(frozen=True)
class Mutation:
    """A rewrite of an honest transcript that should not be paid as much; ``None`` where it does not apply."""

    name: str
    description: str
    apply: Callable[[Messages, str | None], Messages | None]


def _role(message: Mapping[str, Any]) -> str:
    return str(message.get("role", "assistant"))


def _is_work(message: Mapping[str, Any]) -> bool:
    return _role(message) == "tool" or (_role(message) == "assistant" and bool(message.get("tool_calls")))


def _final_index(messages: Messages) -> int | None:
    finals = [i for i, m in enumerate(messages) if _role(m) == "assistant"]
    return finals[-1] if finals else None


def drop_work_turns(messages: Messages, gold: str | None) -> Messages | None:
    """Every assistant turn that called a tool and every tool result gone; the final answer kept."""
    kept = [m for i, m in enumerate(messages) if not _is_work(m) or i == _final_index(messages)]
    return kept if len(kept) < len(messages) and _final_index(kept) is not None else None


def strip_tool_calls(messages: Messages, gold: str | None) -> Messages | None:
    """The turns stay, their calls go: the tool results now answer calls that were never made."""
    if not any(_role(m) == "assistant" and m.get("tool_calls") for m in messages):
        return None
    return [{k: v for k, v in m.items() if k != "tool_calls"} if _role(m) == "assistant" else m for m in messages]


def wrong_answer(gold: str | None) -> str:
    """An answer that is not ``gold`` by the attacker's own reading (a neighbour of a number, else a constant)."""
    value = numeric(gold)
    if value is not None:
        return format_number(value + 1)
    return next(t for t in ("0", "1", "-1", "2") if gold is None or not same_answer(t, gold))


def corrupt_final_answer(messages: Messages, gold: str | None) -> Messages | None:
    """The final turn states a wrong answer: the gold in its text replaced, else the whole turn replaced."""
    last = _final_index(messages)
    if last is None:
        return None
    out = copy.deepcopy(messages)
    text = out[last].get("content")
    wrong = wrong_answer(gold)
    text = text if isinstance(text, str) else ""
    boxed = re.sub(r"\\boxed\{[^{}]*\}", lambda _: f"\\boxed{{{wrong}}}", text)
    if boxed != text:
        text = boxed
    elif gold and gold.strip() and gold.strip() in text:
        text = text.replace(gold.strip(), wrong)
    else:
        text = f"The answer is \\boxed{{{wrong}}}."
    out[last] = {**out[last], "content": text}
    return out


def duplicate_final_answer(messages: Messages, gold: str | None) -> Messages | None:
    """The final turn said three more times: padding that raises a per-turn mean or a per-turn sum."""
    last = _final_index(messages)
    return None if last is None else [*messages, *(copy.deepcopy(messages[last]) for _ in range(3))]


def fabricated_tool_result(messages: Messages, gold: str | None) -> Messages | None:
    """The work dropped, and a tool result no call asked for put before the final answer, claiming it."""
    dropped = drop_work_turns(messages, gold)
    if dropped is None:
        return None
    last = _final_index(dropped)
    assert last is not None
    forged = {"role": "tool", "tool_call_id": "call_fabricated", "name": "calculator", "content": str(gold or "done")}
    return [*dropped[:last], forged, *dropped[last:]]


MUTATIONS: tuple[Mutation, ...] = tuple(
    Mutation(f.__name__, (f.__doc__ or "").strip().split("\n")[0], f)
    for f in (drop_work_turns, strip_tool_calls, corrupt_final_answer, duplicate_final_answer, fabricated_tool_result)
)


def transcript_column(row: Mapping[str, Any]) -> str | None:
    """The column holding a list of chat messages, or ``None`` when the row carries no transcript."""
    for name in TRANSCRIPT_COLUMNS:
        value = row.get(name)
        if isinstance(value, list) and value and all(isinstance(m, Mapping) and "role" in m for m in value):
            return name
    return None


def _value(
    reward: Reward, transcripts: list[Messages], rows: list[dict[str, Any]], face: Face, credit: Credit
) -> list[float | None]:
    columns: dict[str, Any] = {k: [row.get(k) for row in rows] for k in sorted({k for row in rows for k in row})}
    if face == "sample":
        return reward(transcripts, **columns)
    folded: list[float | None] = []
    for turns in step_rewards(reward, transcripts, credit=credit, **columns):
        if not turns or any(t is None for t in turns):
            folded.append(None if turns else 0.0)
            continue
        values = [float(t) for t in turns if t is not None]
        folded.append(sum(values) if face == "sum" else values[-1] if face == "last" else sum(values) / len(values))
    return folded


def audit_trajectories(
    reward: Reward,
    rows: Sequence[Mapping[str, Any]],
    *,
    face: Face = "sum",
    credit: Credit = "final",
    gold_column: str = "solution",
    max_fp: float = 0.0,
    mutations: Sequence[Mutation] = MUTATIONS,
) -> dict[str, Any]:
    """Score each row's honest transcript and its mutants with ``reward``; per mutation, the share paid as much.

    ``rows`` carry a transcript (a ``messages``/``transcript``/``completion`` column of chat messages) beside the
    columns the reward reads (``solution``, ``tools`` ...). ``face``: how a transcript's value is read — the sum,
    mean or last of :func:`~rewardsmith.steps.step_rewards` under ``credit``, or ``sample``, the reward's ordinary
    per-sample face. A mutation is flagged when its rate is above ``max_fp``.
    """
    if face not in FACES:
        raise ValueError(f"face={face!r}: use one of {', '.join(FACES)}")
    usable = [(dict(row), name) for row in rows if (name := transcript_column(row)) is not None]
    if not usable:
        raise ValueError(f"no row carries a transcript (a list of chat messages in {', '.join(TRANSCRIPT_COLUMNS)})")
    transcripts = [row.pop(name) for row, name in usable]
    columns = [row for row, _ in usable]
    honest = _value(reward, transcripts, columns, face, credit)
    paid = [i for i, v in enumerate(honest) if v is not None and v > 0]
    report: dict[str, Any] = {
        "face": face,
        "credit": credit,
        "rows": len(rows),
        "with_transcript": len(usable),
        "honest": {
            "paid": len(paid),
            "unscorable": sum(v is None for v in honest),
            "mean": _mean([v for v in honest if v is not None]),
        },
        "mutations": {},
    }
    for mutation in mutations:
        applied = [(i, mutation.apply(copy.deepcopy(transcripts[i]), _gold(columns[i], gold_column))) for i in paid]
        fitting = [(i, m) for i, m in applied if m is not None]
        values = _value(reward, [m for _, m in fitting], [columns[i] for i, _ in fitting], face, credit)
        wins = [v is not None and v >= (honest[i] or 0.0) - 1e-9 for (i, _), v in zip(fitting, values, strict=True)]
        estimate = rate_estimate(np.array(wins, dtype=float), np.ones(len(wins))).model_dump()
        deltas = [v - (honest[i] or 0.0) for (i, _), v in zip(fitting, values, strict=True) if v is not None]
        report["mutations"][mutation.name] = {
            "description": mutation.description,
            "n": len(fitting),
            "not_applicable": len(applied) - len(fitting),
            "paid_at_least_honest": sum(wins),
            "unscorable": sum(v is None for v in values),
            "rate": estimate["value"],
            "low": estimate.get("low"),
            "high": estimate.get("high"),
            "mean_delta": _mean(deltas),
        }
    report["flagged"] = [
        name for name, m in report["mutations"].items() if m["n"] and m["rate"] is not None and m["rate"] > max_fp
    ]
    return report


def _gold(row: Mapping[str, Any], column: str) -> str | None:
    value = row.get(column)
    return None if value is None else str(value)


def _mean(values: Sequence[float]) -> float | None:
    return round(float(np.mean(values)), 6) if values else None


def _face(report: Mapping[str, Any]) -> str:
    if report["face"] == "sample":
        return "the reward's per-sample value"
    return f"{report['face']} of per-turn values, {report['credit']} credit"


def render_markdown(report: Mapping[str, Any]) -> str:
    """The report as a table: one line per mutation, the share paid at least as much as the honest transcript."""
    lines = [
        f"Trajectory mutations ({_face(report)}): "
        f"{report['honest']['paid']} honest transcripts paid > 0 of {report['with_transcript']}.",
        "",
        "| mutation | paid ≥ honest | rate [95 % CI] | mean Δ | not applicable |",
        "|---|---|---|---|---|",
    ]
    for name, m in report["mutations"].items():
        rate = "—" if m["rate"] is None else f"{m['rate']:.2f} [{m['low']:.2f}, {m['high']:.2f}]"
        delta = "—" if m["mean_delta"] is None else f"{m['mean_delta']:+.3f}"
        lines.append(f"| {name} | {m['paid_at_least_honest']}/{m['n']} | {rate} | {delta} | {m['not_applicable']} |")
    return "\n".join(lines) + "\n"


__all__ = ["FACES", "MUTATIONS", "Mutation", "audit_trajectories", "render_markdown", "transcript_column"]
