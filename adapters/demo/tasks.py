"""Procedural verifiable tasks: endless, seeded, checkable rows for demos, tests and benchmarks.

Every generator is a pure function of ``(n, seed, ...)`` returning plain dict rows, so the same call gives
the same data on any machine. Rows carry a ``task`` column (for ``route``) and the gold under
``solution`` (the column name TRL's own math reward reads).

- :func:`arithmetic` – "What is 7 + 5?" with the integer answer as gold (for ``math_equivalence``).
- :func:`arithmetic_pairs` – DPO/IPO/ORPO pairs: a correct boxed answer (chosen) vs an off-by-k one (rejected).
- :func:`arithmetic_unpaired` – KTO rows: ``completion`` + boolean ``label``.
- :func:`digit_run` with the :class:`CharacterShare` reward – a toy task a *random* tiny model can learn in a
  few GRPO steps on a CPU (write digits); arithmetic itself is far beyond such a model.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any, Literal

from pydantic import Field

from rewardsmith.registry import register_reward
from rewardsmith.reward import Reward, RewardConfig
from rewardsmith.types import RewardResult

_OPS = {"+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b}


def _prompt(text: str, conversational: bool) -> Any:
    return [{"role": "user", "content": text}] if conversational else text


def _problem(rng: random.Random, ops: str, max_operand: int) -> tuple[str, int]:
    a, b = rng.randint(0, max_operand), rng.randint(0, max_operand)
    op = rng.choice(ops)
    return f"{a} {op} {b}", _OPS[op](a, b)


def _check_ops(ops: str) -> None:
    unknown = set(ops) - set(_OPS)
    if not ops or unknown:
        raise ValueError(f"ops must be a non-empty subset of {''.join(_OPS)!r}, got {ops!r}")


def arithmetic(
    n: int, *, seed: int = 0, ops: str = "+-*", max_operand: int = 20, conversational: bool = True
) -> list[dict[str, Any]]:
    """``n`` rows ``{prompt, solution, task}``: "What is a op b?" with the exact integer result as gold.

    >>> arithmetic(1, seed=0, conversational=False)[0]["prompt"]
    'What is 12 + 13? Put the final answer in \\\\boxed{}.'
    """
    _check_ops(ops)
    rng = random.Random(seed)
    rows = []
    for _ in range(n):
        expr, value = _problem(rng, ops, max_operand)
        text = f"What is {expr}? Put the final answer in \\boxed{{}}."
        rows.append({"prompt": _prompt(text, conversational), "solution": str(value), "task": "arithmetic"})
    return rows


def _answer(expr: str, value: int) -> str:
    return f"<think>{expr} = {value}</think> The answer is \\boxed{{{value}}}."


def _wrong(rng: random.Random, value: int) -> int:
    return value + rng.choice([-3, -2, -1, 1, 2, 3])


def arithmetic_pairs(
    n: int, *, seed: int = 0, ops: str = "+-", max_operand: int = 20, conversational: bool = False
) -> list[dict[str, Any]]:
    """``n`` preference rows ``{prompt, chosen, rejected, task}``: the right result vs a near miss."""
    _check_ops(ops)
    rng = random.Random(seed)
    rows = []
    for _ in range(n):
        expr, value = _problem(rng, ops, max_operand)
        chosen, rejected = _answer(expr, value), _answer(expr, _wrong(rng, value))
        prompt = f"What is {expr}?"
        if conversational:
            rows.append(
                {
                    "prompt": _prompt(prompt, True),
                    "chosen": [{"role": "assistant", "content": chosen}],
                    "rejected": [{"role": "assistant", "content": rejected}],
                    "task": "arithmetic",
                }
            )
        else:
            rows.append({"prompt": prompt, "chosen": chosen, "rejected": rejected, "task": "arithmetic"})
    return rows


def arithmetic_unpaired(
    n: int, *, seed: int = 0, ops: str = "+-", max_operand: int = 20, desirable_share: float = 0.5
) -> list[dict[str, Any]]:
    """``n`` KTO rows ``{prompt, completion, label}``; about ``desirable_share`` of them are correct."""
    _check_ops(ops)
    if not 0.0 <= desirable_share <= 1.0:
        raise ValueError(f"desirable_share must be in [0, 1], got {desirable_share}")
    rng = random.Random(seed)
    rows = []
    for _ in range(n):
        expr, value = _problem(rng, ops, max_operand)
        good = rng.random() < desirable_share
        completion = _answer(expr, value if good else _wrong(rng, value))
        rows.append({"prompt": f"What is {expr}?", "completion": completion, "label": good, "task": "arithmetic"})
    return rows


def digit_run(n: int, *, seed: int = 0, conversational: bool = True) -> list[dict[str, Any]]:
    """``n`` rows asking for a run of digits; score them with ``character_share`` (digits by default)."""
    rng = random.Random(seed)
    rows = []
    for _ in range(n):
        k = rng.randint(3, 9)
        rows.append({"prompt": _prompt(f"Write {k} digits.", conversational), "task": "digit_run"})
    return rows


TaskName = Literal["arithmetic", "digit_run"]

#: Prompt-only tasks the GRPO trainer can draw from, and the reward each is checked with by default.
PROMPT_TASKS = {"arithmetic": (arithmetic, "math_equivalence"), "digit_run": (digit_run, "character_share")}


class CharacterShareConfig(RewardConfig):
    characters: str = Field("0123456789", min_length=1, description="characters that count")


@register_reward("character_share")
class CharacterShare(Reward[CharacterShareConfig]):
    """Share of the completion's non-space characters that belong to ``characters``.

    ``score = |{c in text, c not space, c in characters}| / |{c in text, c not space}|``; an empty
    completion scores 0.0. A dense, verifiable signal a random tiny model can climb in a few steps.

    >>> CharacterShare()(["12ab"])
    [0.5]
    """

    def score_one(self, completion: str, row: Mapping[str, Any]) -> RewardResult:
        allowed = set(self.config.characters)
        visible = [c for c in completion if not c.isspace()]
        if not visible:
            return RewardResult(score=0.0, reason="empty completion")
        hits = sum(c in allowed for c in visible)
        return RewardResult(score=hits / len(visible), reason=f"{hits}/{len(visible)} characters match")
