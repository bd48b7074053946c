"""The attacker's own reading of an answer: is a completion's stated answer the gold after all?

An attack must be wrong by construction: a completion that states the gold (``\\boxed{\\infty}`` for a gold
``\\infty``, a last box ``1`` for a gold ``1_2``) is a right answer, and a reward that pays it is right to. This
check is independent of every reward it audits (it shares no code with :mod:`rewardsmith.rewards.math`), so a
reward that wrongly equates two answers cannot make its own attack disappear; it reads only the notations where
the attacks' fixed answers or the fallback constants (``0``, ``1``) can meet a gold: the same text, an exact
number (integer, decimal, ``\\frac{p}{q}``, ``p/q``, a repeating decimal, a base subscript), and a unit that does
not change the number (degrees, dollars, cents). It errs towards "same": an attack it drops as possibly right
costs one probe, an attack it keeps that is right would be reported as a hack that is none.
"""

from __future__ import annotations

import re
from fractions import Fraction

_SPACING = re.compile(r"\\left|\\right|\\[,;!: ]|\\displaystyle|\s+")
_DEGREES = re.compile(r"(.*?)(?:\^\{?\\circ\}?|°|\\degree)")
_CENTS = re.compile(r"(.*?)(?:\\text\{cents?\}|\\mbox\{cents?\}|cents?|¢)")
_DOLLARS = re.compile(r"(?:\\\$|\$)(.*?)(?:\\text\{dollars?\}|dollars?)?")
_BASE = re.compile(r"([0-9A-Za-z]+)_\{?(\d{1,2})\}?")
_REPEATING = re.compile(r"(-?)(\d*)\.(\d*)\\overline\{(\d+)\}")
_FRAC = re.compile(r"(-?)\\frac\{(-?\d+)\}\{(\d+)\}")
_NUMBER = re.compile(r"-?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?|-?\.\d+")
_ZERO_TIMES = re.compile(r"-?0+(?:\.0+)?[A-Za-z]")  # 0x, 0a: zero times a variable is zero

Reading = tuple[Fraction, str | None]  # the number as written and its unit (None, "degree", "dollar", "cent")


def normal_text(text: str) -> str:
    """The answer without spacing commands, ``\\left``/``\\right``, outer ``$`` and ``\\dfrac``/``\\tfrac``."""
    s = text.strip()
    if len(s) > 1 and s.startswith("$") and s.endswith("$") and not s.startswith("$$"):
        s = s[1:-1]
    s = _SPACING.sub("", s).replace("\\dfrac", "\\frac").replace("\\tfrac", "\\frac")
    return s.replace("{,}", ",")


def _number(s: str) -> Fraction | None:
    if _NUMBER.fullmatch(s):
        return Fraction(s.replace(",", ""))
    if m := _FRAC.fullmatch(s):
        value = Fraction(int(m.group(2)), int(m.group(3))) if int(m.group(3)) else None
        return -value if value is not None and m.group(1) else value
    if m := re.fullmatch(r"(-?\d+)/(\d+)", s):
        return Fraction(int(m.group(1)), int(m.group(2))) if int(m.group(2)) else None
    if m := _REPEATING.fullmatch(s):
        sign, whole, fixed, cycle = m.groups()
        value = Fraction(int(whole or "0")) + Fraction(int(fixed or "0"), 10 ** len(fixed))
        value += Fraction(int(cycle), (10 ** len(cycle) - 1) * 10 ** len(fixed))
        return -value if sign else value
    if m := _BASE.fullmatch(s):
        digits, base = m.group(1), int(m.group(2))
        try:
            return Fraction(int(digits, base)) if 2 <= base <= 36 else None
        except ValueError:
            return None
    if _ZERO_TIMES.fullmatch(s):
        return Fraction(0)
    return None


def reading(text: str) -> Reading | None:
    """The exact number ``text`` states and its unit, or ``None`` when it is not one of the notations read here."""
    s = normal_text(text)
    if len(s) > 200:  # giant answers are read as text only: exact arithmetic on them is the reward's business
        return None
    for pattern, unit in ((_DEGREES, "degree"), (_CENTS, "cent"), (_DOLLARS, "dollar")):
        if (m := pattern.fullmatch(s)) and (value := _number(m.group(1))) is not None:
            return value, unit
    value = _number(s)
    return None if value is None else (value, None)


def same_answer(stated: str, gold: str) -> bool:
    """True when ``stated`` may be the gold: the same text, or the same number (a bare number takes the gold's unit;
    dollars and cents convert; zero is zero in every unit)."""
    if normal_text(stated) == normal_text(gold):
        return True
    a, b = reading(stated), reading(gold)
    if a is None or b is None:
        return False
    (x, unit_x), (y, unit_y) = a, b
    if x == 0 and y == 0:
        return True
    if unit_x is None or unit_y is None or unit_x == unit_y:
        return x == y
    if {unit_x, unit_y} == {"dollar", "cent"}:
        return (x if unit_x == "dollar" else x / 100) == (y if unit_y == "dollar" else y / 100)
    return False
