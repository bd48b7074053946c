"""Structural equality of two parsed answers (:mod:`~rewardsmith.rewards.math.values`), exact where it can be.

Numbers compare exactly (a decimal within ``rel_tol`` only where it stands for a value no decimal can
write), lists item by item, sets as multisets, intervals by their brackets; a part that needs algebra
is handed to an ``ask`` callback (the symbolic stage's verdicts), so an enumeration is never judged by
one of its items.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from fractions import Fraction
from typing import cast

from rewardsmith.rewards.math.numerals import Based, read_in_base
from rewardsmith.rewards.math.values import (
    BigInt,
    Cplx,
    Equation,
    Huge,
    Inf,
    Matrix,
    Num,
    Opaque,
    Scientific,
    Seq,
    Surd,
    Union,
    is_labelled_list,
    sum_terms,
)


# -- comparison --------------------------------------------------------------------------------
def numbers_equal(gold: Num, answer: Num, rel_tol: float) -> bool:
    """Exact, except for a decimal standing for a value no decimal can write; percent either way.

    Two rationals are equal only if they are the same number: ``2000001.0`` is exactly 2000001, not
    2000000, and ``0.5000001`` is not ``\\frac12``. ``rel_tol`` applies only when one side is a decimal
    and the other a fraction whose decimal expansion never ends (``0.3333333`` for ``\\frac13``), since
    such a decimal can only be a rounding.
    """
    golds = [gold.value] + ([gold.value / 100] if gold.percent else [])
    answers = [answer.value] + ([answer.value / 100] if answer.percent else [])
    for g in golds:
        for a in answers:
            if g == a:
                return True
            rounded = (not answer.exact and _unending(g)) or (not gold.exact and _unending(a))
            if rounded and rel_tol and abs(g - a) <= Fraction(rel_tol) * max(abs(g), abs(a)):
                return True
    return False


def _unending(value: Fraction) -> bool:
    """True when ``value`` has no finite decimal expansion (its denominator has a prime factor other than 2, 5)."""
    d = value.denominator
    for p in (2, 5):
        while d % p == 0:
            d //= p
    return d != 1


Ask = Callable[[object, object], "bool | None"]


def compare_values(gold: object, answer: object, rel_tol: float, ask: Ask | None = None) -> bool | None:
    """Structural equality of two parsed values; ``None`` when an opaque part needs algebra.

    ``ask(gold_part, answer_part)`` is consulted for each such part (an item of a list, a cell of a
    matrix), so a symbolic stage compares parts one by one and never a whole enumeration at once.
    """
    if gold == answer:
        return True
    if isinstance(gold, Equation) and isinstance(answer, Equation):
        return compare_values(gold.rhs, answer.rhs, rel_tol, ask) if gold.lhs == answer.lhs else False
    if isinstance(answer, Equation):
        return compare_values(gold, answer.rhs, rel_tol, ask)
    if isinstance(gold, Equation):
        return compare_values(gold.rhs, answer, rel_tol, ask)
    if isinstance(gold, Based) or isinstance(answer, Based):
        return _compare_based(gold, answer)
    if isinstance(gold, Opaque) and isinstance(answer, Opaque):
        if _is_words(gold.key) and _is_words(answer.key):
            return gold.key.lower() == answer.key.lower()
        if _same_terms(gold.key, answer.key):
            return True
    if isinstance(gold, Opaque) or isinstance(answer, Opaque):
        if _is_prose(gold) or _is_prose(answer):
            return False  # a sentence is not a value; sympy would read a number out of it
        opaque, other = (gold, answer) if isinstance(gold, Opaque) else (cast(Opaque, answer), gold)  # one is
        if not isinstance(other, Opaque) and _is_words(opaque.key):
            return False  # a word is never a number, an interval or a tuple
        return ask(gold, answer) if ask is not None else None
    if isinstance(gold, Num) and isinstance(answer, Num):
        return numbers_equal(gold, answer, rel_tol)
    if isinstance(gold, Scientific) or isinstance(answer, Scientific):
        return _compare_scientific(gold, answer, rel_tol)
    if isinstance(gold, Huge) or isinstance(answer, Huge):
        settled = _compare_huge(gold, answer)  # two numbers of similar size: sympy's, exactly (2004! vs 2006!)
        return settled if settled is not None or ask is None else ask(gold, answer)
    if isinstance(gold, Surd) or isinstance(answer, Surd):
        return _compare_surd(gold, answer, rel_tol)
    if isinstance(gold, (Num, Cplx)) and isinstance(answer, (Num, Cplx)):
        g, a = _as_complex(gold), _as_complex(answer)
        return numbers_equal(g.real, a.real, rel_tol) and numbers_equal(g.imag, a.imag, rel_tol)
    if isinstance(gold, Seq) and isinstance(answer, Seq):
        return _compare_seqs(gold, answer, rel_tol, ask)
    if isinstance(gold, Union) and isinstance(answer, Union):
        return _unordered_equal(gold.parts, answer.parts, rel_tol, ask)
    if isinstance(gold, Matrix) and isinstance(answer, Matrix):
        if [len(r) for r in gold.rows] != [len(r) for r in answer.rows]:
            return False
        cells = [(g, a) for gr, ar in zip(gold.rows, answer.rows, strict=True) for g, a in zip(gr, ar, strict=True)]
        return _all_equal(cells, rel_tol, ask)
    return False  # different kinds of object (a number against an interval, a set against a tuple, ...)


def _compare_based(gold: object, answer: object) -> bool:
    """A numeral with a base subscript equals a numeral of the same value *in the gold's base*.

    A plain gold is in base 10, so ``10_8`` (eight) and ``1011_{10}`` are wrong for golds ``10`` and ``1011_2``
    even where the value is right: the question asked for a base, and a copy of the question's own numeral
    must not pass. A plain whole-number answer to a gold in base ``b`` is read in base ``b`` (MATH writes the
    answer in the asked base without its subscript). Nothing else (an expression, a decimal) equals a numeral.
    """
    gold_base, gold_value = _base_and_value(gold, None)
    answer_base, answer_value = _base_and_value(answer, gold_base)
    if gold_base is None or answer_base is None or gold_value is None or answer_value is None:
        return False
    return gold_base == answer_base and gold_value == answer_value


def _base_and_value(value: object, plain_base: int | None) -> tuple[int | None, int | None]:
    """(base, value) of a numeral; a plain whole-number literal is read in ``plain_base`` (10 when ``None``)."""
    if isinstance(value, Based):
        return value.base, value.value
    if isinstance(value, Num) and value.digits is not None:
        base = plain_base or 10
        read = read_in_base(value.digits, base)
        return base, None if read is None else (-read if value.value < 0 else read)
    return None, None


def _compare_huge(gold: object, answer: object) -> bool | None:
    """A power with thousands of digits against an ordinary number differs; two such powers need sympy."""
    huge, other = (gold, answer) if isinstance(gold, Huge) else (cast(Huge, answer), gold)  # the caller checked
    if isinstance(other, Num):
        return False  # a Num has at most ~4,000 digits, a Huge more than that
    if isinstance(other, BigInt) and math.isfinite(huge.log10):
        return None if abs(len(other.digits.lstrip("-")) - (huge.log10 + 1)) < 2 else False
    return None if isinstance(other, (Huge, BigInt)) else False


def _compare_scientific(gold: object, answer: object, rel_tol: float) -> bool | None:
    """Exact comparison with a number in scientific notation whose exponent is too large to expand.

    Orders of magnitude settle most pairs without arithmetic; close ones are expanded exactly (the
    other side is then an ordinary number, so the expansion is small).
    """
    sci, other = (gold, answer) if isinstance(gold, Scientific) else (answer, gold)
    assert isinstance(sci, Scientific)
    if isinstance(other, Scientific):
        return (sci.digits, sci.exp10) == (other.digits, other.exp10)
    if isinstance(other, BigInt):
        core = other.digits.lstrip("-").rstrip("0")
        zeros = len(other.digits.lstrip("-")) - len(core)
        negative = other.digits.startswith("-")
        return (negative, core, zeros) == (sci.digits < 0, str(abs(sci.digits)), sci.exp10)
    if isinstance(other, Huge):
        return None if abs(other.log10 - sci.magnitude) < 2 else False
    if not isinstance(other, Num) or other.value == 0:
        return False
    value = other.value
    approx = (abs(value.numerator).bit_length() - value.denominator.bit_length()) * math.log10(2)
    if abs(approx - sci.magnitude) > 3:
        return False
    expanded = Num(Fraction(sci.digits) * Fraction(10) ** sci.exp10, sci.exact)
    return numbers_equal(other, expanded, rel_tol) if other is gold else numbers_equal(expanded, other, rel_tol)


def _compare_surd(gold: object, answer: object, rel_tol: float) -> bool:
    """Canonical surds are equal iff identical; against a decimal they compare within ``rel_tol``."""
    if isinstance(gold, Surd) and isinstance(answer, Surd):
        return gold == answer
    surd, other = (gold, answer) if isinstance(gold, Surd) else (cast(Surd, answer), gold)  # the caller checked
    if not isinstance(other, Num) or other.exact or other.percent:
        return False  # an irrational number never equals a fraction, an interval, ...
    value = float(surd.coef) * math.sqrt(surd.radicand)
    return abs(value - float(other.value)) <= rel_tol * max(abs(value), abs(float(other.value)))


def _as_complex(value: Num | Cplx) -> Cplx:
    return value if isinstance(value, Cplx) else Cplx(value, Num(Fraction(0), True))


def _compare_seqs(gold: Seq, answer: Seq, rel_tol: float, ask: Ask | None) -> bool | None:
    if gold.unordered and answer.unordered:
        return _unordered_equal(_dedupe(gold.items), _dedupe(answer.items), rel_tol, ask)
    if len(gold.items) != len(answer.items):
        return False
    if (gold.open, gold.close) == ("(", ")") and (answer.open == "{" or is_labelled_list(answer)):
        # A gold tuple may stand for a set ("(1,3)" for "x = 1 or 3"): like math-verify, a set or a labelled
        # list (p=5, q=2) answering it is read in the order written.
        return _all_equal(list(zip(gold.items, answer.items, strict=True)), rel_tol, ask)
    if (gold.open, gold.close) != (answer.open, answer.close):
        return False
    return _all_equal(list(zip(gold.items, answer.items, strict=True)), rel_tol, ask)


def _dedupe(items: tuple) -> tuple:
    return tuple(dict.fromkeys(items))


def _all_equal(pairs: list[tuple[object, object]], rel_tol: float, ask: Ask | None) -> bool | None:
    undecided = False
    for g, a in pairs:
        verdict = compare_values(g, a, rel_tol, ask)
        if verdict is False:
            return False
        undecided = undecided or verdict is None
    return None if undecided else True


def _unordered_equal(golds: tuple, answers: tuple, rel_tol: float, ask: Ask | None) -> bool | None:
    """Multiset equality by matching; a count mismatch is False even when elements are opaque."""
    if len(golds) != len(answers):
        return False
    remaining = list(answers)
    undecided = False
    for g in golds:
        maybe = False
        for i, a in enumerate(remaining):
            verdict = compare_values(g, a, rel_tol, ask)
            if verdict:
                del remaining[i]
                break
            maybe = maybe or verdict is None
        else:
            if not maybe:
                return False  # nothing left can equal this element
            undecided = True
    return None if undecided else True


def describe_kind(value: object) -> str:
    if isinstance(value, Seq):
        if value.unordered:
            return "sets (order ignored)"
        if (value.open, value.close) != ("(", ")") or any(isinstance(v, Inf) for v in value.items):
            return "intervals"
        return "tuples (order kept)"
    return {
        Num: "numbers",
        Scientific: "numbers",
        Surd: "square roots",
        BigInt: "integers",
        Cplx: "complex numbers",
        Seq: "tuples/intervals/sets",
        Opaque: "expressions or words",
        Union: "unions of intervals",
        Matrix: "matrices",
        Equation: "equations",
        Inf: "infinities",
        Based: "numerals in a base",
    }.get(type(value), "values")


_CHOICE_WORD = re.compile(r"^(?:choice|option)\s*:?\s*(?=\(?[A-J]\)?\.?$)", re.I)


def choice_letter(key: str) -> str | None:
    key = re.sub(r"\\text(?:bf)?\{([^{}]*)\}", r"\1", key).strip()
    key = _CHOICE_WORD.sub("", key).rstrip(".").strip()  # "Choice (A)." names A as "(A)" does
    if len(key) <= 3 and (m := re.fullmatch(r"\(?([A-J])\)?[.:]?", key)):
        return m.group(1)
    if (m := re.fullmatch(r"\(([A-J])\)\s*\S.*", key, re.S)) and not re.search(r"\([A-J]\)", key[3:]):
        return m.group(1)  # "(B) 12" names B; "(A) or (B)" names no one choice
    return None


_WORDS = re.compile(r"[A-Za-z][A-Za-z\s'\-]*")
_WORD_ANSWERS = {"yes", "no", "none", "true", "false", "odd", "even", "both", "neither", "undefined"}


def _is_words(key: str) -> bool:
    """Text such as ``Monday`` or ``yes``; short lowercase runs (``xy``, ``abc``) are products of variables."""
    if not _WORDS.fullmatch(key):
        return False
    return key.lower() in _WORD_ANSWERS or len(key) >= 4 or (len(key) >= 2 and not key.islower())


_PROSE_RUN = re.compile(r"(?<![\\A-Za-z])[A-Za-z]{8,}")


def _is_prose(value: object) -> bool:
    """Words run together in a compare key (``thatJaneplanted3rows``): eight letters no command owns."""
    return isinstance(value, Opaque) and not _is_words(value.key) and bool(_PROSE_RUN.search(value.key))


def _same_terms(gold: str, answer: str) -> bool:
    """Equal as sums whose terms are the same strings in another order (``2x+1`` and ``1+2x``)."""
    g, a = sum_terms(gold), sum_terms(answer)
    return g is not None and a is not None and len(g) > 1 and sorted(g) == sorted(a)
