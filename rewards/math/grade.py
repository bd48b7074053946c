"""Is an extracted answer equal to the gold? Normalisation, exact fast paths, then math-verify + sympy.

Grading runs in two stages so that the common case never touches sympy:

1. :func:`fast_verdict` (in-process, pure Python, linear in the input): normalised string equality
   (:mod:`~rewardkit.rewards.math.normalize`), then the values of both sides
   (:mod:`~rewardkit.rewards.math.values`) compared structurally:
   exact integers of any size, rationals (``\\frac``, ``a/b``, decimals, percent, mixed numbers,
   scientific notation), complex numbers ``a+bi``, intervals and inequalities, ordered tuples,
   unordered sets and "find all" lists, matrices, ``x = 5`` against ``5``, words and choice letters.
   It answers ``True``/``False`` or ``None`` ("needs algebra") with the parts sympy must compare: the
   whole pair when a side is an expression, else each undecided item or cell on its own, so a list is
   never judged by one of its items.
2. :func:`symbolic_verdict` (meant for a hard-timeout worker process): math-verify parses each side
   once and compares the *first* parse of each (no cross product) with sympy; its "equal" stands only
   when :func:`prove_equal` confirms it exactly (math-verify rounds to 6 places, so ``1/2004!`` and
   ``1/2006!`` look equal to it). The verdicts then go back to :func:`fast_verdict` as its ``oracle``.

>>> fast_verdict(r"\\dfrac12", "0.5", rel_tol=1e-6).equal
True
>>> fast_verdict("(1, 2)", "(2, 1)", rel_tol=1e-6).equal
False
"""

from __future__ import annotations

import logging
import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from fractions import Fraction

from rewardkit.rewards.math.normalize import MAX_PARSE_CHARS, clean_latex, decimal_comma_reading
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
    is_labelled_list,
    parse_value,
    sum_terms,
)


@dataclass(frozen=True)
class Verdict:
    """``equal`` is True/False when decided, ``None`` when this stage cannot decide; ``why`` says how."""

    equal: bool | None
    why: str
    timed_out: bool = False  # the comparison itself overran its hard timeout
    #: When undecided: the (gold, answer) LaTeX parts the symbolic stage must compare, one pair each.
    parts: tuple[tuple[str, str], ...] = field(default=(), compare=False)


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
    if isinstance(gold, Opaque) and isinstance(answer, Opaque):
        if _is_words(gold.key) and _is_words(answer.key):
            return gold.key.lower() == answer.key.lower()
        if _same_terms(gold.key, answer.key):
            return True
    if isinstance(gold, Opaque) or isinstance(answer, Opaque):
        if _is_prose(gold) or _is_prose(answer):
            return False  # a sentence is not a value; sympy would read a number out of it
        opaque, other = (gold, answer) if isinstance(gold, Opaque) else (answer, gold)
        if not isinstance(other, Opaque) and _is_words(opaque.key):  # type: ignore[attr-defined]
            return False  # a word is never a number, an interval or a tuple
        return ask(gold, answer) if ask is not None else None
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
        return _compare_seqs(gold, answer, rel_tol, ask)
    if isinstance(gold, Union) and isinstance(answer, Union):
        return _unordered_equal(gold.parts, answer.parts, rel_tol, ask)
    if isinstance(gold, Matrix) and isinstance(answer, Matrix):
        if [len(r) for r in gold.rows] != [len(r) for r in answer.rows]:
            return False
        cells = [(g, a) for gr, ar in zip(gold.rows, answer.rows, strict=True) for g, a in zip(gr, ar, strict=True)]
        return _all_equal(cells, rel_tol, ask)
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


_WHITESPACE = re.compile(r"\s+")
#: Most sympy comparisons one pair may ask for (two lists of 8 undecided items ask for up to 64).
MAX_SYMBOLIC_PARTS = 64


def fast_verdict(
    gold: str,
    answer: str,
    rel_tol: float,
    *,
    decimal_comma: bool = False,
    oracle: dict[tuple[str, str], Verdict] | None = None,
) -> Verdict:
    """Decide without sympy when possible (see module docstring).

    ``equal=None`` means "ask sympy": ``parts`` then lists the pairs to compare, the whole pair when
    either side is an expression, else the undecided items or cells one by one. Called again with
    ``oracle`` (those pairs' symbolic verdicts), it combines them structurally: an enumeration is
    equal only if every item is. ``decimal_comma`` also reads ``3,5`` as ``3.5``.
    """
    gold_clean, answer_clean = clean_latex(gold), clean_latex(answer)
    gold_key, answer_key = _WHITESPACE.sub("", gold_clean), _WHITESPACE.sub("", answer_clean)
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
    if decimal_comma:
        read = _decimal_comma_verdict(gold_key, answer_key, rel_tol)
        if read is not None:
            return read
    g, a = parse_value(gold_key), parse_value(answer_key)
    asker = _PartAsker(g, a, (gold_clean, answer_clean), oracle or {})
    verdict = compare_values(g, a, rel_tol, asker)
    if verdict is None:
        if asker.timed_out:
            return Verdict(None, f"timeout: {asker.timed_out}", True)
        if asker.unrenderable:
            return Verdict(None, "undecided: a part needs algebra the symbolic stage cannot be given")
        if oracle is None:
            parts = tuple(dict.fromkeys(asker.pending))
            if len(parts) > MAX_SYMBOLIC_PARTS:
                return Verdict(None, f"undecided: {len(parts)} parts would need sympy, more than {MAX_SYMBOLIC_PARTS}")
            return Verdict(None, "needs symbolic comparison", parts=parts)
        if asker.whole and asker.reasons:
            return Verdict(None, asker.reasons[0])
        return Verdict(None, "undecided: " + "; ".join(asker.reasons[:3]) if asker.reasons else "undecided")
    if isinstance(g, Huge) or isinstance(a, Huge):
        digits = (g if isinstance(g, Huge) else a).log10  # type: ignore[union-attr]
        return Verdict(
            verdict,
            f"{'equal' if verdict else 'different'}: a power with about {digits + 1:.3g} digits "
            f"(not evaluated) against {_describe(a if isinstance(g, Huge) else g)}",
        )
    if asker.whole and asker.reasons:
        return Verdict(verdict, asker.reasons[0])
    if isinstance(g, Scientific) or isinstance(a, Scientific):
        sci, other = (g, a) if isinstance(g, Scientific) else (a, g)
        return Verdict(
            verdict,
            f"{'equal' if verdict else 'different'}: a number of order 10^{sci.magnitude} "  # type: ignore[union-attr]
            f"(not evaluated) against {_describe(other)}",
        )
    kind = _describe(g) if _describe(g) == _describe(a) else f"{_describe(g)} vs {_describe(a)}"
    how = f"{'equal' if verdict else 'different'} as {kind}"
    if asker.reasons:
        how += f" ({len(asker.used)} part(s) by sympy, item by item: " + "; ".join(asker.reasons[:3]) + ")"
    return Verdict(verdict, how)


def _decimal_comma_verdict(gold_key: str, answer_key: str, rel_tol: float) -> Verdict | None:
    """``3,5`` against a single number, read with a decimal comma; ``None`` to go on with the usual rules."""
    for side, key, other in (("answer", answer_key, gold_key), ("gold", gold_key, answer_key)):
        reading = decimal_comma_reading(key)
        if reading is None:
            continue
        other_value, value = parse_value(other), parse_value(reading)
        if isinstance(other_value, Num) and isinstance(value, Num):
            pair = (other_value, value) if side == "answer" else (value, other_value)
            if numbers_equal(*pair, rel_tol):
                return Verdict(True, f"equal as numbers, {side} {key!r} read with a decimal comma")
    return None


class _PartAsker:
    """The ``ask`` of :func:`compare_values`: looks parts up in the symbolic verdicts, or records them."""

    def __init__(self, gold: object, answer: object, whole: tuple[str, str], oracle: dict) -> None:
        self.top = (gold, answer)
        self.whole_pair = whole
        self.oracle = oracle
        self.pending: list[tuple[str, str]] = []
        self.used: list[tuple[str, str]] = []
        self.reasons: list[str] = []
        self.timed_out = ""
        self.unrenderable = False
        self.whole = False

    def __call__(self, gold: object, answer: object) -> bool | None:
        if self._is_top(gold, answer):
            pair: tuple[str, str] | None = self.whole_pair
            self.whole = True
        else:
            g, a = render_latex(gold), render_latex(answer)
            pair = (g, a) if g is not None and a is not None else None
        if pair is None:
            self.unrenderable = True
            return None
        verdict = self.oracle.get(pair)
        if verdict is None:
            self.pending.append(pair)
            return None
        self.used.append(pair)
        if verdict.timed_out and not self.timed_out:
            self.timed_out = verdict.why
        if verdict.equal is not None or not verdict.timed_out:
            self.reasons.append(verdict.why if self.whole else f"{pair[1]!r} vs {pair[0]!r}: {verdict.why}")
        return verdict.equal

    def _is_top(self, gold: object, answer: object) -> bool:
        tg, ta = self.top
        g_top = gold is tg or (isinstance(tg, Equation) and gold is tg.rhs)
        a_top = answer is ta or (isinstance(ta, Equation) and answer is ta.rhs)
        return g_top and a_top


def render_latex(value: object) -> str | None:
    """LaTeX for one parsed part, for the symbolic stage; ``None`` for structures (compared part by part)."""
    if isinstance(value, Opaque):
        return value.key
    if isinstance(value, Num):
        v = value.value
        text = str(v.numerator) if v.denominator == 1 else rf"\frac{{{v.numerator}}}{{{v.denominator}}}"
        if not value.exact and v.denominator != 1:
            text = _exact_decimal(v) or text
        return text + (r"\%" if value.percent else "")
    if isinstance(value, Surd):
        return rf"{render_latex(Num(value.coef, True))}\sqrt{{{value.radicand}}}"
    if isinstance(value, BigInt):
        return value.digits
    if isinstance(value, Inf):
        return r"\infty" if value.sign > 0 else r"-\infty"
    if isinstance(value, Cplx):
        real, imag = render_latex(value.real), render_latex(value.imag)
        return f"{real}+({imag})i"
    if isinstance(value, Equation):
        rhs = render_latex(value.rhs)
        return None if rhs is None else f"{value.lhs}={rhs}"
    return None


def _exact_decimal(value: Fraction) -> str | None:
    """A decimal's own digits (``0.5``), so sympy sees a Float where the answer wrote one."""
    for places in range(1, 40):
        scaled = value * 10**places
        if scaled.denominator == 1:
            sign = "-" if scaled < 0 else ""
            digits = str(abs(scaled.numerator)).rjust(places + 1, "0")
            return f"{sign}{digits[:-places]}.{digits[-places:]}"
    return None


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


_PROSE_RUN = re.compile(r"(?<![\\A-Za-z])[A-Za-z]{8,}")


def _is_prose(value: object) -> bool:
    """Words run together in a compare key (``thatJaneplanted3rows``): eight letters no command owns."""
    return isinstance(value, Opaque) and not _is_words(value.key) and bool(_PROSE_RUN.search(value.key))


def _same_terms(gold: str, answer: str) -> bool:
    """Equal as sums whose terms are the same strings in another order (``2x+1`` and ``1+2x``)."""
    g, a = sum_terms(gold), sum_terms(answer)
    return g is not None and a is not None and len(g) > 1 and sorted(g) == sorted(a)


# -- symbolic stage (runs in a worker process) -------------------------------------------------
def symbolic_verdict(gold: str, answer: str, float_rounding: int, rel_tol: float = 1e-6) -> Verdict:
    """math-verify + sympy on the cleaned LaTeX of both sides, first parse of each only.

    math-verify's "equal" is then checked by :func:`prove_equal`: it rounds numbers to
    ``float_rounding`` places, which calls ``1/2004!`` and ``1/2006!`` equal (both round to 0). Its
    "not equal" is checked the other way by :func:`difference_is_zero`. Runs without math-verify's
    SIGALRM timeouts: the caller runs it in a :class:`rewardkit.hard_timeout.HardTimeoutPool`, which
    kills it on overrun.
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
    g, a = gold_parsed[0], answer_parsed[0]
    equal = verify(g, a, float_rounding=float_rounding, timeout_seconds=None, allow_set_relation_comp=True)
    shown = f"{_short(g)} vs {_short(a)}"
    if equal:
        proof = prove_equal(g, a, rel_tol)
        if proof is None:
            return Verdict(
                None, f"undecided: math-verify's rounded comparison says equal, not proven exactly ({shown})"
            )
        if not proof:
            return Verdict(False, f"sympy: not equal, exact arithmetic tells apart what rounding did not ({shown})")
        return Verdict(True, f"sympy: equal ({shown})")
    if _simplify_skipped(g, a) and difference_is_zero(g, a):
        return Verdict(True, f"sympy: equal, their difference simplifies to 0 ({shown})")
    return Verdict(False, f"sympy: not equal ({shown})")


def _simplify_skipped(gold: object, answer: object) -> bool:
    """math-verify simplifies ``gold - answer`` itself, except when a side is a bare symbol (``x`` against
    ``(x+1)^2-(x+1)^2+x``): only then is a second simplify worth its time."""
    import sympy

    return isinstance(gold, sympy.Symbol) or isinstance(answer, sympy.Symbol)


#: Digits sympy evaluates a numeric difference to; mpmath's exponent range is unbounded (no underflow).
_PROOF_DIGITS = 50


def prove_equal(gold: object, answer: object, rel_tol: float) -> bool | None:
    """Confirm math-verify's "equal": exactly, or within ``rel_tol`` where a side was written as a decimal.

    True when proven, False when exact arithmetic (or a 50-digit evaluation) shows a difference,
    None when neither can be shown. Sets, tuples and matrices are checked element by element;
    relations and intervals are taken as math-verify compared them.
    """
    import sympy

    matrices = (sympy.MatrixBase, sympy.MatrixExpr)
    if isinstance(gold, matrices) and isinstance(answer, matrices):
        try:
            gold, answer = sympy.Matrix(gold.doit()), sympy.Matrix(answer.doit())  # a product or sum, evaluated
        except Exception:
            return None
        if gold.shape != answer.shape:
            return False
        return _all_proven([prove_equal(g, a, rel_tol) for g, a in zip(gold, answer, strict=True)])
    if isinstance(gold, sympy.MatrixBase) and isinstance(answer, sympy.MatrixBase):
        if gold.shape != answer.shape:
            return False
        return _all_proven([prove_equal(g, a, rel_tol) for g, a in zip(gold, answer, strict=True)])
    if isinstance(gold, sympy.Tuple) and isinstance(answer, (sympy.Tuple, sympy.FiniteSet)):
        items = answer.args if isinstance(answer, sympy.Tuple) else getattr(answer, "_unsorted_args", answer.args)
        if len(gold.args) != len(items):
            return None
        return _all_proven([prove_equal(g, a, rel_tol) for g, a in zip(gold.args, items, strict=True)])
    if isinstance(gold, sympy.FiniteSet) and isinstance(answer, (sympy.FiniteSet, sympy.Tuple)):
        remaining = list(answer.args)
        verdicts = []
        for g in gold.args:
            found = next((i for i, a in enumerate(remaining) if prove_equal(g, a, rel_tol)), None)
            verdicts.append(found is not None or None)
            if found is not None:
                del remaining[found]
        return _all_proven(verdicts) if not remaining else None
    if not (isinstance(gold, sympy.Expr) and isinstance(answer, sympy.Expr)):
        return True  # relations, intervals, unions: math-verify's own structural comparison
    if gold == answer:
        return True
    if _has_huge_power(gold) or _has_huge_power(answer):
        return None
    try:
        if gold.free_symbols or answer.free_symbols:
            return True if difference_is_zero(gold, answer) or not _has_float(gold, answer) else None
        if not _has_float(gold, answer):
            exact = sympy.expand((gold - answer).doit())  # type: ignore[operator]
            if exact.is_Rational:  # integers and fractions: settled exactly, however large
                return bool(exact == 0)
        g_value, a_value = sympy.N(gold, _PROOF_DIGITS), sympy.N(answer, _PROOF_DIGITS)
        difference = abs(sympy.N(gold - answer, _PROOF_DIGITS))
        scale = max(abs(g_value), abs(a_value))
        if not (difference.is_number and scale.is_number):
            return None
        if _has_float(gold, answer):
            return bool(difference <= sympy.Float(rel_tol) * scale)  # a decimal stands for a rounding
        if difference == 0:
            return True
        if scale > 0 and difference > scale * sympy.Float(10) ** (10 - _PROOF_DIGITS):
            return False
        return True if difference_is_zero(gold, answer) else None
    except Exception:  # sympy raises many types on odd input: undecided, never equal
        return None


def _has_float(*exprs: object) -> bool:
    import sympy

    return any(e.has(sympy.Float) for e in exprs)  # type: ignore[attr-defined]


def _all_proven(verdicts: list[bool | None]) -> bool | None:
    if any(v is False for v in verdicts):
        return False
    return None if any(v is None for v in verdicts) else True


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
        if difference == 0:
            return True
        if _differs_at_a_point(difference, gold, answer):
            return False  # simplify would only spend time failing to reach 0
        return bool(sympy.simplify(difference) == 0)
    except Exception:  # sympy raises many types on odd input; undecided means "not shown equal"
        return False


def _differs_at_a_point(difference: object, gold: object, answer: object) -> bool:
    """True when the difference is clearly non-zero at one rational point (a 30-digit evaluation)."""
    import sympy

    symbols = sorted(difference.free_symbols, key=str)  # type: ignore[attr-defined]
    point = {s: sympy.Rational(37 + 11 * i, 101 + 7 * i) for i, s in enumerate(symbols)}
    try:
        value = abs(sympy.N(difference.subs(point), 30))  # type: ignore[attr-defined]
        scale = max(abs(sympy.N(gold.subs(point), 30)), abs(sympy.N(answer.subs(point), 30)), 1)  # type: ignore[attr-defined]
        return bool(value.is_number and value.is_finite and value > scale * sympy.Float(10) ** -20)
    except Exception:
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
            value = abs(base.evalf(15)) if base.is_finite else sympy.Integer(0)
            # log2 in sympy: a base such as 2004! overflows a float but not an mpmath number
            try:
                bits = float(sympy.log(value, 2).evalf(15)) if value.is_positive else 0.0
            except (TypeError, ValueError, OverflowError):
                return True
            if size * max(bits, 1.0) > SYMBOLIC_MAX_POWER_BITS:
                return True
        elif size > SYMBOLIC_MAX_EXPANDED_EXPONENT:
            return True
    return False


def _short(value: object) -> str:
    try:
        text = " ".join(str(value).split())
    except Exception:
        return "?"
    return text if len(text) <= 60 else text[:57] + "..."
