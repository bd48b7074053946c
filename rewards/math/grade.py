"""Is an extracted answer equal to the gold? Normalisation, exact fast paths, then math-verify + sympy.

Grading runs in two stages so that the common case never touches sympy:

1. :func:`fast_verdict` (in-process, pure Python, linear in the input): normalised string equality
   (:mod:`~rewardkit.rewards.math.normalize`), then the values of both sides
   (:mod:`~rewardkit.rewards.math.values`) compared structurally:
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

from rewardkit.rewards.math.normalize import MAX_PARSE_CHARS, compare_key
from rewardkit.rewards.math.values import (
    INTEGER,
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
    parse_value,
    sum_terms,
)


@dataclass(frozen=True)
class Verdict:
    """``equal`` is True/False when decided, ``None`` when this stage cannot decide; ``why`` says how."""

    equal: bool | None
    why: str
    timed_out: bool = False  # the comparison itself overran its hard timeout


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
    if isinstance(gold, Scientific) or isinstance(answer, Scientific):
        return _compare_scientific(gold, answer, rel_tol)
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
    kind = _describe(g) if _describe(g) == _describe(a) else f"{_describe(g)} vs {_describe(a)}"
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
    if not equal and difference_is_zero(gold_parsed[0], answer_parsed[0]):
        return Verdict(True, f"sympy: equal, their difference simplifies to 0 ({shown})")
    return Verdict(bool(equal), f"sympy: {'equal' if equal else 'not equal'} ({shown})")


#: Largest power with a numeric base that :func:`difference_is_zero` lets sympy evaluate, in bits.
SYMBOLIC_MAX_POWER_BITS = 1 << 22  # about 1.3 million digits: well under a second to compute
#: Largest exponent of a symbolic base (``(x+1)^{200}``) it lets sympy expand.
SYMBOLIC_MAX_EXPANDED_EXPONENT = 200


def difference_is_zero(gold: object, answer: object) -> bool:
    """``simplify(gold - answer) == 0`` for two scalar sympy expressions, math-verify's blind spot
    (``x`` against ``(x+1)^2-(x+1)^2+x``); refused for powers too large to evaluate safely."""
    import sympy

    if not all(isinstance(e, sympy.Expr) and not isinstance(e, sympy.MatrixBase) for e in (gold, answer)):
        return False
    if _has_huge_power(gold) or _has_huge_power(answer):
        return False
    try:
        difference = sympy.expand(gold - answer)  # type: ignore[operator]
        return bool(difference == 0 or sympy.simplify(difference) == 0)
    except Exception:  # sympy raises many types on odd input; undecided means "not shown equal"
        return False


def _has_huge_power(expr: object) -> bool:
    import sympy

    for node in sympy.preorder_traversal(expr):
        if not isinstance(node, sympy.Pow):
            continue
        base, exponent = node.args
        if not exponent.is_number:
            return True  # x^n: no bound on what expanding it costs
        if exponent.has(sympy.Pow) and not exponent.is_Rational:
            return True  # a tower such as 10^{10^{10}}
        try:
            size = abs(float(exponent))
        except (TypeError, ValueError, OverflowError):
            return True
        if base.is_number:
            magnitude = abs(complex(base.evalf(15))) if base.is_finite else 0.0
            if size * max(math.log2(magnitude) if magnitude > 0 else 0.0, 1.0) > SYMBOLIC_MAX_POWER_BITS:
                return True
        elif size > SYMBOLIC_MAX_EXPANDED_EXPONENT:
            return True
    return False


def _short(value: object) -> str:
    try:
        text = str(value)
    except Exception:
        return "?"
    return text if len(text) <= 60 else text[:57] + "..."
