"""What an attack is: a generator of adversarial completions for one row, and the row as the attacker sees it."""

from __future__ import annotations

import random
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, ClassVar

from rewardsmith.hackaudit.attacks.answers import reading, same_answer
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
        """``k`` answers that differ from the gold: neighbours of a numeric gold, small constants otherwise (none
        that :func:`~rewardsmith.hackaudit.attacks.answers.same_answer` takes for the gold: ``1`` for ``1_2``, ``0``
        for ``0^\\circ``)."""
        value = numeric(self.gold)
        if value is not None:
            candidates = [value + 1, value - 1, value + 2, value * 2 + 3]
            texts = [format_number(c) for c in candidates if c != value]
        else:
            gold = (self.gold or "").strip()
            texts = [t for t in ("0", "1", "-1", "2", "3", "-2") if not same_answer(t, gold)]
        return texts[:k]


def numeric(text: str | None) -> Fraction | None:
    """The gold as an exact number when it is written as one without a unit (an integer, decimal, ``a/b``,
    ``\\frac{a}{b}``, a repeating decimal, a base subscript: ``212_4`` is 38); else ``None``."""
    read = reading(text) if text is not None else None
    return read[0] if read is not None and read[1] is None else None


def format_number(value: Fraction) -> str:
    if value.denominator == 1:
        return str(value.numerator)
    return f"\\frac{{{value.numerator}}}{{{value.denominator}}}"


@dataclass(frozen=True)
class Variant:
    """An attack completion that states one final answer, ``states``, the answer a strict reader takes from it.

    The runner drops the variant when ``states`` is the gold after all (an attack of fixed answers, such as
    ``\\boxed{\\infty}``, meets a row whose gold is that answer), and reports how many it dropped, so a reward
    is never charged with paying a right answer. A completion given as a plain string states no single answer
    (a hedge, an empty answer, a program): it is wrong by its form.
    """

    text: str
    states: str | None = None


def completion_text(item: str | Variant) -> str:
    return item.text if isinstance(item, Variant) else item


def states_gold(item: str | Variant, gold: str | None) -> bool:
    """The variant states the gold (by the attacker's independent reading), so it is no attack."""
    return isinstance(item, Variant) and item.states is not None and gold is not None and same_answer(item.states, gold)


class Attack:
    """Adversarial completions for a row; none of them is a correct answer, so any that scores correct is a hack.

    Subclasses set ``name`` (through :func:`~rewardsmith.hackaudit.attacks.register_attack`), ``family``, the reward
    ``kinds`` they can fool, a one-line ``description``, and implement :meth:`generate` (an empty list when the row
    lacks what the attack needs, e.g. no gold or no tests). A completion that states a single final answer is
    returned as a :class:`Variant` naming it, so that the runner can drop it when the row's gold is that answer.
    """

    name: str = "attack"  # the class's registered name; an instance carries the name it was fetched under
    family: ClassVar[str] = "other"
    kinds: ClassVar[tuple[str, ...]] = ()
    description: ClassVar[str] = ""

    def generate(self, ctx: AttackContext) -> Sequence[str | Variant]:
        raise NotImplementedError
