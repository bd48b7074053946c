r"""Numbers whose notation changes their value: repeating decimals, base subscripts, multiplier words.

Each is read exactly here, so that no later stage (least of all math-verify, which reads ``0.\overline{3}`` as
0 and ``123_5`` as 123) can drop the part of the notation that carries the value.

>>> repeating_to_fraction(r"0.\overline{12}")
'\\frac{4}{33}'
>>> repeating_to_fraction(r"0.\overline{9}")
'1'
>>> parse_based("123_4")
Based(digits='123', base=4, value=27)
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from fractions import Fraction

from rewardsmith.rewards.math.number_words import number_from_words

#: Longest repeating block (and non-repeating part) read exactly; longer ones are left as written.
_MAX_REPEAT_DIGITS = 200
# 0.\overline{12}, 1.2\overline{3}, .\bar{3}, 0.\overline3, 0.\dot{1}\dot{2}, 0.1\dot{6}
_REPEATING = re.compile(
    r"(?<![\d.])(?P<int>\d*)\.(?P<fixed>\d*)"
    r"(?:\\(?:overline|bar|widebar)\s*(?:\{\s*(?P<rep>\d+)\s*\}|(?P<rep1>\d))"
    r"|\\dot\s*(?:\{(?P<d1>\d)\}|(?P<d1b>\d))(?:(?P<mid>\d*)\\dot\s*(?:\{(?P<d2>\d)\}|(?P<d2b>\d)))?)"
)


def repeating_to_fraction(text: str) -> str:
    r"""Every repeating decimal in ``text`` (``0.\overline{12}``, ``0.1\dot{6}``) as its exact fraction."""
    if "." not in text or "\\" not in text:
        return text
    return _REPEATING.sub(_repeating_value, text)


def _repeating_value(m: re.Match[str]) -> str:
    whole, fixed = m.group("int") or "0", m.group("fixed")
    if m.group("d1") or m.group("d1b"):
        last = m.group("d2") or m.group("d2b") or ""
        block = (m.group("d1") or m.group("d1b")) + ((m.group("mid") or "") + last if last else "")
    else:
        block = m.group("rep") or m.group("rep1")
    if len(block) + len(fixed) > _MAX_REPEAT_DIGITS:
        return m.group(0)
    value = int(whole) + Fraction(int(fixed or "0"), 10 ** len(fixed))
    value += Fraction(int(block), (10 ** len(block) - 1) * 10 ** len(fixed))
    return str(value.numerator) if value.denominator == 1 else rf"\frac{{{value.numerator}}}{{{value.denominator}}}"


@dataclass(frozen=True)
class Based:
    """A whole number written with a base subscript (``123_4``); ``value`` is ``None`` when a digit is not one
    of that base's (``129_4``), so such a numeral equals nothing but its own spelling."""

    digits: str  # as written, sign included
    base: int
    value: int | None


_BASED = re.compile(
    r"(?P<sign>[+-]?)(?P<digits>[0-9A-Z]*[0-9][0-9A-Z]*)_(?:\{\s*\(?(?P<b>\d+|[A-Za-z]+)\)?\s*\}|(?P<b1>\d))"
)
_MAX_BASED_DIGITS = 400


def parse_based(key: str) -> Based | None:
    """``123_4``, ``1011_{2}``, ``1A_{16}``, ``777_{(8)}``, ``1000_{seven}`` (a compare key) as a :class:`Based`."""
    m = _BASED.fullmatch(key)
    if m is None or len(m.group("digits")) > _MAX_BASED_DIGITS:
        return None
    written = m.group("b") or m.group("b1")
    base = int(written) if written.isdigit() else number_from_words(written)
    if base is None or not 2 <= base <= 36:
        return None
    digits = m.group("digits")
    try:
        value: int | None = int(digits, base) * (-1 if m.group("sign") == "-" else 1)
    except ValueError:
        value = None  # a digit the base does not have
    return Based(m.group("sign") + digits, base, value)


def read_in_base(digits: str, base: int) -> int | None:
    """A plain integer's written digits read in ``base`` (MATH writes ``1011`` for an answer asked in base 2)."""
    try:
        return int(digits, base)
    except ValueError:
        return None


#: Words after a number that scale it (``5 million``): they are part of the value, never a unit to drop.
MULTIPLIERS = {"hundred": 100, "thousand": 10**3, "million": 10**6, "billion": 10**9, "trillion": 10**12,
               "dozen": 12}  # fmt: skip
_PLAIN = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)")


def scale_by_words(number: str, words: str) -> tuple[str, str] | None:
    """``("5", "million dollars")`` → ``("5000000", "dollars")``; ``None`` when the words start with no multiplier."""
    parts = words.split()
    factor = 1
    while parts and parts[0].lower() in MULTIPLIERS:
        factor *= MULTIPLIERS[parts.pop(0).lower()]
    if factor == 1:
        return None
    if _PLAIN.fullmatch(number):
        value = Fraction(number) * factor
        scaled = str(value.numerator) if value.denominator == 1 else _decimal(value)
    else:
        scaled = rf"{number}\cdot {factor}"
    return scaled, " ".join(parts)


def _decimal(value: Fraction) -> str:
    """A terminating decimal's digits (``2.5``); a written decimal times an integer always terminates."""
    places = 0
    while (value * 10**places).denominator != 1:
        places += 1
    digits = str(abs((value * 10**places).numerator)).rjust(places + 1, "0")
    return ("-" if value < 0 else "") + digits[:-places] + "." + digits[-places:]
