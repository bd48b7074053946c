"""What an attack is: a generator of adversarial completions for one row, and the row as the attacker sees it."""

from __future__ import annotations

import random
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, ClassVar

from rewardsmith.hackaudit.spec_kinds import SpecProfile

_NUMBER = re.compile(r"(?<![\w.])-?\d+(?:\.\d+)?(?![\w.])")


@dataclass
class AttackContext:
    """One row of the user's data, with what attacks derive from it (gold, the problem's numbers, tests)."""

    row: Mapping[str, Any]
    prompt: str
    profile: SpecProfile
    gold: str | None = None
    tests: Any = None  # a parsed TestSuite when the row has tests
    seed: int = 0
    rng: random.Random = field(init=False)

    def __post_init__(self) -> None:
        self.rng = random.Random(f"{self.seed}:{self.prompt}")

    def frame(self, answer: str, reasoning: str = "Let me work through the problem.") -> str:
        """``answer`` laid out the way an honest completion is (a reasoning block, the spec's answer tag)."""
        tag = self.profile.answer_tag
        body = f"<{tag}>{answer}</{tag}>" if tag else answer
        return f"<think>\n{reasoning}\n</think>\n{body}"

    def prompt_numbers(self) -> list[str]:
        return list(dict.fromkeys(_NUMBER.findall(self.prompt)))

    def wrong_values(self, k: int = 2) -> list[str]:
        """``k`` answers that differ from the gold: neighbours of a numeric gold, small constants otherwise."""
        value = numeric(self.gold)
        if value is not None:
            candidates = [value + 1, value - 1, value + 2, value * 2 + 3]
            texts = [format_number(c) for c in candidates if c != value]
        else:
            texts = [t for t in ("0", "1", "-1", "2") if t != (self.gold or "").strip()]
        return texts[:k]


def numeric(text: str | None) -> Fraction | None:
    """The gold as an exact number when it is a plain integer, decimal or ``a/b``; else ``None``."""
    if text is None:
        return None
    s = text.strip().strip("$").replace(",", "")
    m = re.fullmatch(r"\\d?frac\{(-?\d+)\}\{(\d+)\}", s)
    if m:
        s = f"{m.group(1)}/{m.group(2)}"
    try:
        return Fraction(s)
    except (ValueError, ZeroDivisionError):
        return None


def format_number(value: Fraction) -> str:
    if value.denominator == 1:
        return str(value.numerator)
    return f"\\frac{{{value.numerator}}}{{{value.denominator}}}"


class Attack:
    """Adversarial completions for a row; none of them is a correct answer, so any that scores correct is a hack.

    Subclasses set ``name`` (through :func:`~rewardsmith.hackaudit.attacks.register_attack`), ``family``, the reward
    ``kinds`` they can fool, a one-line ``description``, and implement :meth:`generate` (an empty list when the row
    lacks what the attack needs, e.g. no gold or no tests).
    """

    name: str = "attack"  # the class's registered name; an instance carries the name it was fetched under
    family: ClassVar[str] = "other"
    kinds: ClassVar[tuple[str, ...]] = ()
    description: ClassVar[str] = ""

    def generate(self, ctx: AttackContext) -> list[str]:
        raise NotImplementedError
