"""Is an extracted answer equal to the gold? The in-process fast stage; sympy is :mod:`.symbolic`'s job.

Grading runs in two stages so that the common case never touches sympy:

1. :func:`fast_verdict` (in-process, pure Python, linear in the input): normalised string equality
   (:mod:`~rewardsmith.rewards.math.normalize`), then the values of both sides
   (:mod:`~rewardsmith.rewards.math.values`) compared structurally (:mod:`~rewardsmith.rewards.math.compare`):
   exact integers of any size, rationals (``\\frac``, ``a/b``, decimals, percent, mixed numbers,
   scientific notation), complex numbers ``a+bi``, intervals and inequalities, ordered tuples,
   unordered sets and "find all" lists, matrices, ``x = 5`` against ``5``, words and choice letters.
   It answers ``True``/``False`` or ``None`` ("needs algebra") with the parts sympy must compare: the
   whole pair when a side is an expression, else each undecided item or cell on its own, so a list is
   never judged by one of its items.
2. :func:`~rewardsmith.rewards.math.symbolic.symbolic_verdict` (in a hard-timeout worker process) compares
   those parts; the verdicts then go back to :func:`fast_verdict` as its ``oracle``.

>>> fast_verdict(r"\\dfrac12", "0.5", rel_tol=1e-6).equal
True
>>> fast_verdict("(1, 2)", "(2, 1)", rel_tol=1e-6).equal
False
"""

from __future__ import annotations

import re
from fractions import Fraction
from typing import cast

from rewardsmith.rewards.math.compare import choice_letter, compare_values, describe_kind, numbers_equal
from rewardsmith.rewards.math.normalize import (
    MAX_PARSE_CHARS,
    agree_units,
    angles_agree,
    clean_latex_with_unit,
    decimal_comma_reading,
    different_units,
    hedged,
    malformed_number,
    nesting_depth,
)
from rewardsmith.rewards.math.symbolic import symbolic_verdict
from rewardsmith.rewards.math.values import (
    INTEGER,
    BigInt,
    Cplx,
    Equation,
    Huge,
    Inf,
    Num,
    Opaque,
    Scientific,
    Surd,
    enclosing_layers,
    parse_value,
)
from rewardsmith.rewards.math.verdict import Verdict

__all__ = ["MAX_SYMBOLIC_PARTS", "Verdict", "fast_verdict", "render_latex", "symbolic_verdict"]

_WHITESPACE = re.compile(r"\s+")
#: Most sympy comparisons one pair may ask for (two lists of 8 undecided items ask for up to 64).
MAX_SYMBOLIC_PARTS = 64
#: Deepest bracket nesting an answer may have; deeper ones (which no gold has) break the symbolic stage's parser.
MAX_NESTING = 40


def fast_verdict(
    gold: str,
    answer: str,
    rel_tol: float,
    *,
    decimal_comma: bool = False,
    oracle: dict[tuple[str, str], Verdict] | None = None,
    gold_unit: str | None = None,
) -> Verdict:
    """Decide without sympy when possible (see module docstring).

    ``equal=None`` means "ask sympy": ``parts`` then lists the pairs to compare, the whole pair when
    either side is an expression, else the undecided items or cells one by one. Called again with
    ``oracle`` (those pairs' symbolic verdicts), it combines them structurally: an enumeration is
    equal only if every item is. ``decimal_comma`` also reads ``3,5`` as ``3.5``. ``gold_unit``: the unit
    cleaned off the gold beforehand (:func:`~rewardsmith.rewards.math.normalize.clean_latex_with_unit`).
    """
    (gold_clean, found), (answer_clean, answer_unit) = clean_latex_with_unit(gold), clean_latex_with_unit(answer)
    gold_clean, answer_clean = agree_units(gold_clean, gold_unit or found, answer_clean, answer_unit)
    gold_clean, answer_clean = angles_agree(gold_clean, gold_unit or found, answer_clean, answer_unit)
    gold_key, answer_key = _WHITESPACE.sub("", gold_clean), _WHITESPACE.sub("", answer_clean)
    if unit_clash := different_units(gold_unit or found, answer_unit):
        return Verdict(False, f"different units: {unit_clash}")
    if gold_key == answer_key:
        return Verdict(True, "identical after normalisation")
    if not gold_key:
        return Verdict(None, "gold is empty after normalisation")
    if not answer_key:
        return Verdict(False, "answer is empty after normalisation")
    if (broken := malformed_number(answer_key)) and not malformed_number(gold_key):
        return Verdict(False, f"the answer holds a malformed number ({broken!r})")
    if hedge := hedged(gold_key, answer_key):
        return Verdict(False, f"the answer carries {hedge!r} (a hedge or a mark), the gold does not")
    if choice := choice_letter(gold_key):
        picked = choice_letter(answer_key) or choice_letter(answer.strip())
        if picked:
            return Verdict(picked == choice, f"choice {picked} vs {choice}")
        return Verdict(False, f"gold is choice {choice}; answer names no choice letter")
    if len(answer_key) > MAX_PARSE_CHARS and not INTEGER.fullmatch(answer_key):
        return Verdict(False, f"answer of {len(answer_key)} characters differs from the gold as a string")
    if (depth := nesting_depth(_unwrapped(answer_key))) > MAX_NESTING and nesting_depth(gold_key) <= MAX_NESTING:
        return Verdict(
            False, f"the answer nests brackets {depth} deep, deeper than any checkable answer ({MAX_NESTING})"
        )
    if decimal_comma:
        read = _decimal_comma_verdict(gold_key, answer_key, rel_tol)
        if read is not None:
            return read
    g, a = parse_value(gold_key), parse_value(answer_key)
    asker = _PartAsker(g, a, (gold_clean, answer_clean), oracle or {})
    verdict = compare_values(g, a, rel_tol, asker)
    if verdict is None:
        if asker.timed_out:
            return Verdict(None, f"timeout: {asker.timed_out}", True, failed=True)
        if asker.unrenderable:
            return Verdict(None, "undecided: a part needs algebra the symbolic stage cannot be given")
        if oracle is None:
            parts = tuple(dict.fromkeys(asker.pending))
            if len(parts) > MAX_SYMBOLIC_PARTS:
                return Verdict(None, f"undecided: {len(parts)} parts would need sympy, more than {MAX_SYMBOLIC_PARTS}")
            return Verdict(None, "needs symbolic comparison", parts=parts)
        if asker.whole and asker.reasons:
            return Verdict(None, asker.reasons[0], failed=asker.failed)
        why = "undecided: " + "; ".join(asker.reasons[:3]) if asker.reasons else "undecided"
        return Verdict(None, why, failed=asker.failed)
    if asker.whole and asker.reasons:
        return Verdict(verdict, asker.reasons[0])
    if isinstance(g, Huge) or isinstance(a, Huge):
        digits = (g if isinstance(g, Huge) else cast(Huge, a)).log10  # one of the two is
        return Verdict(
            verdict,
            f"{'equal' if verdict else 'different'}: a number with about {digits + 1:.3g} digits "
            f"(not evaluated) against {describe_kind(a if isinstance(g, Huge) else g)}",
        )
    if isinstance(g, Scientific) or isinstance(a, Scientific):
        sci, other = (g, a) if isinstance(g, Scientific) else (cast(Scientific, a), g)  # one of the two is
        return Verdict(
            verdict,
            f"{'equal' if verdict else 'different'}: a number of order 10^{sci.magnitude} "
            f"(not evaluated) against {describe_kind(other)}",
        )
    kind = describe_kind(g) if describe_kind(g) == describe_kind(a) else f"{describe_kind(g)} vs {describe_kind(a)}"
    how = f"{'equal' if verdict else 'different'} as {kind}"
    if asker.reasons:
        how += f" ({len(asker.used)} part(s) by sympy, item by item: " + "; ".join(asker.reasons[:3]) + ")"
    return Verdict(verdict, how)


def _unwrapped(key: str) -> str:
    """``key`` without brackets around all of it (``((7))`` is 7 however deep: compared in linear time)."""
    for opening, closing in (("(", ")"), ("{", "}"), ("(", ")")):
        if layers := enclosing_layers(key, opening, closing):
            key = key[layers : len(key) - layers]
    return key


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
        self.failed = False  # a part's comparison ran and did not finish (overrun, error, crash)
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
        self.failed = self.failed or verdict.failed or verdict.timed_out
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
