"""Is an extracted answer equal to the gold? Normalisation, exact fast paths, then math-verify + sympy.

Grading runs in two stages so that the common case never touches sympy:

1. :func:`fast_verdict` (in-process, pure Python, linear in the input): normalised string equality
   (:mod:`~rewardkit.rewards.math_normalize`), then the values of both sides
   (:mod:`~rewardkit.rewards.math_values`) compared structurally:
   exact integers of any size, rationals (``\\frac``, ``a/b``, decimals, percent, mixed numbers,
   scientific notation), complex numbers ``a+bi``, intervals and inequalities, ordered tuples,
   unordered sets and "find all" lists, matrices, ``x = 5`` against ``5``, words and choice letters.
   It answers ``True``/``False`` or ``None`` ("needs algebra").
2. :func:`symbolic_verdict` (meant for a hard-timeout worker process): math-verify parses each side
   once and compares the *first* parse of each (no cross product) with sympy.

>>> fast_verdict(r"\\dfrac12", "0.5", rel_tol=1e-6).equal
True
>>> fast_verdict("(1, 2)", "(2, 1)", rel_tol=1e-6).equal
False
"""

from __future__ import annotations

import logging
import math
import re
from dataclasses import dataclass
from fractions import Fraction

from rewardkit.rewards.math_normalize import MAX_PARSE_CHARS, compare_key
from rewardkit.rewards.math_values import (
    INTEGER,
    BigInt,
    Cplx,
    Equation,
    Huge,
    Inf,
    Matrix,
    Num,
    Opaque,
    Seq,
    Surd,
    Union,
    parse_value,
    sum_terms,
)


@dataclass(frozen=True)
class Verdict:
    """``equal`` is True/False when decided, ``None`` when this stage cannot decide; ``why`` says how."""

    equal: bool | None
    why: str


# -- comparison --------------------------------------------------------------------------------
def numbers_equal(gold: Num, answer: Num, rel_tol: float) -> bool:
    """Exact for exact forms; a decimal on either side compares within ``rel_tol``; percent either way."""
    golds = [gold.value] + ([gold.value / 100] if gold.percent else [])
    answers = [answer.value] + ([answer.value / 100] if answer.percent else [])
    exact = gold.exact and answer.exact
    tol = Fraction(rel_tol) if not exact else Fraction(0)
    for g in golds:
        for a in answers:
            if g == a or (tol and abs(g - a) <= tol * max(abs(g), abs(a))):
                return True
    return False


def compare_values(gold: object, answer: object, rel_tol: float) -> bool | None:
    """Structural equality of two parsed values; ``None`` when an opaque part needs algebra."""
    if gold == answer:
        return True
    if isinstance(gold, Equation) and isinstance(answer, Equation):
        return compare_values(gold.rhs, answer.rhs, rel_tol) if gold.lhs == answer.lhs else False
    if isinstance(answer, Equation):
        return compare_values(gold, answer.rhs, rel_tol)
    if isinstance(gold, Equation):
        return compare_values(gold.rhs, answer, rel_tol)
    if isinstance(gold, Opaque) and isinstance(answer, Opaque):
        if _is_words(gold.key) and _is_words(answer.key):
            return gold.key.lower() == answer.key.lower()
        if _same_terms(gold.key, answer.key):
            return True
    if isinstance(gold, Opaque) or isinstance(answer, Opaque):
        return None
    if isinstance(gold, Num) and isinstance(answer, Num):
        return numbers_equal(gold, answer, rel_tol)
    if isinstance(gold, Huge) or isinstance(answer, Huge):
        return _compare_huge(gold, answer)
    if isinstance(gold, Surd) or isinstance(answer, Surd):
        return _compare_surd(gold, answer, rel_tol)
    if isinstance(gold, (Num, Cplx)) and isinstance(answer, (Num, Cplx)):
        g, a = _as_complex(gold), _as_complex(answer)
        return numbers_equal(g.real, a.real, rel_tol) and numbers_equal(g.imag, a.imag, rel_tol)
    if isinstance(gold, Seq) and isinstance(answer, Seq):
        return _compare_seqs(gold, answer, rel_tol)
    if isinstance(gold, Union) and isinstance(answer, Union):
        return _unordered_equal(gold.parts, answer.parts, rel_tol)
    if isinstance(gold, Matrix) and isinstance(answer, Matrix):
        if [len(r) for r in gold.rows] != [len(r) for r in answer.rows]:
            return False
        cells = [(g, a) for gr, ar in zip(gold.rows, answer.rows, strict=True) for g, a in zip(gr, ar, strict=True)]
        return _all_equal(cells, rel_tol)
    return False  # different kinds of object (a number against an interval, a set against a tuple, ...)


def _compare_huge(gold: object, answer: object) -> bool | None:
    """A power with thousands of digits against an ordinary number differs; two such powers need sympy."""
    huge, other = (gold, answer) if isinstance(gold, Huge) else (answer, gold)
    if isinstance(other, Num):
        return False  # a Num has at most ~4,000 digits, a Huge more than that
    if isinstance(other, BigInt) and math.isfinite(huge.log10):
        return None if abs(len(other.digits.lstrip("-")) - (huge.log10 + 1)) < 2 else False
    return None if isinstance(other, (Huge, BigInt)) else False


def _compare_surd(gold: object, answer: object, rel_tol: float) -> bool:
    """Canonical surds are equal iff identical; against a decimal they compare within ``rel_tol``."""
    if isinstance(gold, Surd) and isinstance(answer, Surd):
        return gold == answer
    surd, other = (gold, answer) if isinstance(gold, Surd) else (answer, gold)
    if not isinstance(other, Num) or other.exact or other.percent:
        return False  # an irrational number never equals a fraction, an interval, ...
    value = float(surd.coef) * math.sqrt(surd.radicand)  # type: ignore[union-attr]
    return abs(value - float(other.value)) <= rel_tol * max(abs(value), abs(float(other.value)))


def _as_complex(value: Num | Cplx) -> Cplx:
    return value if isinstance(value, Cplx) else Cplx(value, Num(Fraction(0), True))


def _compare_seqs(gold: Seq, answer: Seq, rel_tol: float) -> bool | None:
    if gold.unordered and answer.unordered:
        return _unordered_equal(_dedupe(gold.items), _dedupe(answer.items), rel_tol)
    if (gold.open, gold.close) != (answer.open, answer.close) or len(gold.items) != len(answer.items):
        return False
    return _all_equal(list(zip(gold.items, answer.items, strict=True)), rel_tol)


def _dedupe(items: tuple) -> tuple:
    return tuple(dict.fromkeys(items))


def _all_equal(pairs: list[tuple[object, object]], rel_tol: float) -> bool | None:
    undecided = False
    for g, a in pairs:
        verdict = compare_values(g, a, rel_tol)
        if verdict is False:
            return False
        undecided = undecided or verdict is None
    return None if undecided else True


def _unordered_equal(golds: tuple, answers: tuple, rel_tol: float) -> bool | None:
    """Multiset equality by matching; a count mismatch is False even when elements are opaque."""
    if len(golds) != len(answers):
        return False
    remaining = list(answers)
    undecided = False
    for g in golds:
        maybe = False
        for i, a in enumerate(remaining):
            verdict = compare_values(g, a, rel_tol)
            if verdict:
                del remaining[i]
                break
            maybe = maybe or verdict is None
        else:
            if not maybe:
                return False  # nothing left can equal this element
            undecided = True
    return None if undecided else True


def _describe(value: object) -> str:
    if isinstance(value, Seq):
        if value.unordered:
            return "sets (order ignored)"
        if (value.open, value.close) != ("(", ")") or any(isinstance(v, Inf) for v in value.items):
            return "intervals"
        return "tuples (order kept)"
    return {
        Num: "numbers",
        Surd: "square roots",
        BigInt: "integers",
        Cplx: "complex numbers",
        Seq: "tuples/intervals/sets",
        Opaque: "expressions or words",
        Union: "unions of intervals",
        Matrix: "matrices",
        Equation: "equations",
        Inf: "infinities",
    }.get(type(value), "values")


def fast_verdict(gold: str, answer: str, rel_tol: float) -> Verdict:
    """Decide without sympy when possible (see module docstring); ``equal=None`` means "ask sympy"."""
    gold_key, answer_key = compare_key(gold), compare_key(answer)
    if gold_key == answer_key:
        return Verdict(True, "identical after normalisation")
    if not gold_key:
        return Verdict(None, "gold is empty after normalisation")
    if not answer_key:
        return Verdict(False, "answer is empty after normalisation")
    if choice := _choice_letter(gold_key):
        picked = _choice_letter(answer_key) or _choice_letter(answer.strip())
        if picked:
            return Verdict(picked == choice, f"choice {picked} vs {choice}")
        return Verdict(False, f"gold is choice {choice}; answer names no choice letter")
    if len(answer_key) > MAX_PARSE_CHARS and not INTEGER.fullmatch(answer_key):
        return Verdict(False, f"answer of {len(answer_key)} characters differs from the gold as a string")
    g, a = parse_value(gold_key), parse_value(answer_key)
    verdict = compare_values(g, a, rel_tol)
    if verdict is None:
        return Verdict(None, "needs symbolic comparison")
    if isinstance(g, Huge) or isinstance(a, Huge):
        digits = (g if isinstance(g, Huge) else a).log10  # type: ignore[union-attr]
        return Verdict(
            verdict,
            f"{'equal' if verdict else 'different'}: a power with about {digits + 1:.3g} digits "
            f"(not evaluated) against {_describe(a if isinstance(g, Huge) else g)}",
        )
    kind = _describe(g) if type(g) is type(a) else f"{_describe(g)} vs {_describe(a)}"
    return Verdict(verdict, f"{'equal' if verdict else 'different'} as {kind}")


def _choice_letter(key: str) -> str | None:
    key = re.sub(r"\\text(?:bf)?\{([^{}]*)\}", r"\1", key).strip()
    if len(key) <= 3 and (m := re.fullmatch(r"\(?([A-J])\)?[.:]?", key)):
        return m.group(1)
    if m := re.fullmatch(r"\(([A-J])\)\s*\S.*", key, re.S):
        return m.group(1)
    return None


_WORDS = re.compile(r"[A-Za-z][A-Za-z\s'\-]*")
_WORD_ANSWERS = {"yes", "no", "none", "true", "false", "odd", "even", "both", "neither", "undefined"}


def _is_words(key: str) -> bool:
    """Text such as ``Monday`` or ``yes``; short lowercase runs (``xy``, ``abc``) are products of variables."""
    if not _WORDS.fullmatch(key):
        return False
    return key.lower() in _WORD_ANSWERS or len(key) >= 4 or (len(key) >= 2 and not key.islower())


def _same_terms(gold: str, answer: str) -> bool:
    """Equal as sums whose terms are the same strings in another order (``2x+1`` and ``1+2x``)."""
    g, a = sum_terms(gold), sum_terms(answer)
    return g is not None and a is not None and len(g) > 1 and sorted(g) == sorted(a)


# -- symbolic stage (runs in a worker process) -------------------------------------------------
def symbolic_verdict(gold: str, answer: str, float_rounding: int) -> Verdict:
    """math-verify + sympy on the cleaned LaTeX of both sides, first parse of each only.

    Runs without math-verify's SIGALRM timeouts: the caller is expected to run it in a
    :class:`rewardkit.hard_timeout.HardTimeoutPool`, which kills it on overrun.
    """
    from math_verify import ExprExtractionConfig, LatexExtractionConfig, parse, verify

    for name in ("math_verify", "math_verify.parser", "math_verify.grader", "latex2sympy2_extended"):
        logging.getLogger(name).setLevel(logging.CRITICAL)
    config = [LatexExtractionConfig(boxed_match_priority=0), ExprExtractionConfig()]
    gold_parsed = parse(f"${gold}$", extraction_config=config, fallback_mode="no_fallback", parsing_timeout=None)
    if not gold_parsed:
        return Verdict(None, "math-verify could not parse the gold")
    answer_parsed = parse(f"${answer}$", extraction_config=config, fallback_mode="no_fallback", parsing_timeout=None)
    if not answer_parsed:
        return Verdict(False, "math-verify could not parse the answer")
    equal = verify(
        gold_parsed[0],
        answer_parsed[0],
        float_rounding=float_rounding,
        timeout_seconds=None,
        allow_set_relation_comp=True,
    )
    shown = f"{_short(gold_parsed[0])} vs {_short(answer_parsed[0])}"
    return Verdict(bool(equal), f"sympy: {'equal' if equal else 'not equal'} ({shown})")


def _short(value: object) -> str:
    try:
        text = str(value)
    except Exception:
        return "?"
    return text if len(text) <= 60 else text[:57] + "..."
