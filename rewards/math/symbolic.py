"""The symbolic stage, run in a hard-timeout worker process: math-verify parses, sympy proves.

math-verify parses each side once and compares the *first* parse of each (no cross product); its "equal"
stands only when :func:`prove_equal` confirms it exactly (math-verify rounds to 6 places, so ``1/2004!`` and
``1/2006!`` look equal to it). Imports of math-verify and sympy happen inside the functions, so importing
this module costs nothing in the trainer process.
"""

from __future__ import annotations

import functools
import logging
import re
from typing import Any  # sympy ships no type information: its expressions are Any here

from rewardsmith.rewards.math.verdict import Verdict


def symbolic_verdict(gold: str, answer: str, float_rounding: int, rel_tol: float = 1e-6) -> Verdict:
    """math-verify + sympy on the cleaned LaTeX of both sides, first parse of each only.

    math-verify's "equal" is then checked by :func:`prove_equal`: it rounds numbers to
    ``float_rounding`` places, which calls ``1/2004!`` and ``1/2006!`` equal (both round to 0). Its
    "not equal" is checked the other way by :func:`difference_is_zero`. Runs without math-verify's
    SIGALRM timeouts: the caller runs it in a :class:`rewardsmith.hard_timeout.HardTimeoutPool`, which
    kills it on overrun.
    """
    from math_verify import parse, verify

    for name in ("math_verify", "math_verify.parser", "math_verify.grader", "latex2sympy2_extended"):
        logging.getLogger(name).setLevel(logging.CRITICAL)
    config = _extraction_config()
    gold_parsed = parse(f"${gold}$", extraction_config=config, fallback_mode="no_fallback", parsing_timeout=None)
    if not gold_parsed:
        return Verdict(None, "math-verify could not parse the gold")
    answer_parsed = parse(f"${answer}$", extraction_config=config, fallback_mode="no_fallback", parsing_timeout=None)
    if not answer_parsed:
        return Verdict(False, "math-verify could not parse the answer")
    g, a = _imaginary_unit(gold_parsed[0]), _imaginary_unit(answer_parsed[0])
    equal = verify(g, a, float_rounding=float_rounding, timeout_seconds=None, allow_set_relation_comp=True)
    shown = f"{_short(g)} vs {_short(a)}"
    if equal:
        for side, text, parsed in (("gold", gold, g), ("answer", answer, a)):
            if lost := lost_letters(text, parsed):
                return Verdict(
                    None,
                    f"undecided: math-verify's reading of the {side} {text!r} has no {', '.join(lost)}, "
                    f"so its 'equal' is not trusted ({shown})",
                )
        if _symbols_differ(g, a) and not difference_is_zero(g, a):
            return Verdict(False, f"sympy: not equal, the two sides have different variables ({shown})")
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


def _imaginary_unit(parsed: Any) -> Any:
    """The letter ``i`` read as the imaginary unit, as the fast stage reads ``2+3i``: math-verify keeps it a
    symbol, so ``i^2`` and ``e^{i\\pi}`` would never equal ``-1``. Both sides are read alike."""
    import sympy

    if not isinstance(parsed, sympy.Basic):
        return parsed
    letters = [s for s in parsed.free_symbols if isinstance(s, sympy.Symbol) and s.name == "i"]
    if not letters:  # latex2sympy's i carries assumptions (not real, ...): matched by name
        return parsed
    unit = {letter: sympy.I for letter in letters}
    try:
        if isinstance(parsed, sympy.core.relational.Relational):  # e^{i\\pi} = -1 stays a relation, not True
            return parsed.func(parsed.lhs.subs(unit), parsed.rhs.subs(unit), evaluate=False)
        return parsed.subs(unit)
    except Exception:  # sympy raises many types on odd input: keep the reading as it was
        return parsed


def parse_alone(text: str) -> bool:
    """``text`` read and simplified on its own, as the symbolic stage would read that side of any pair: True when
    it is, False when math-verify finds no value or the value holds a power too large to evaluate
    (``10^{10^{10}} - 1``). Run in a hard-timeout worker: an overrun here is the side's own cost."""
    import sympy
    from math_verify import parse

    config = _extraction_config()
    parsed = parse(f"${text}$", extraction_config=config, fallback_mode="no_fallback", parsing_timeout=None)
    if not parsed:
        return False
    value = _imaginary_unit(parsed[0])
    if isinstance(value, sympy.Expr) and not isinstance(value, sympy.MatrixBase):
        if _has_huge_power(value):
            return False
        sympy.simplify(value)
    return True


#: Commands whose braced argument is a name, not variables (``\\text{cm}``, ``\\mathbb{R}``, ``\\begin{pmatrix}``).
_NAME_ARGUMENT = re.compile(
    r"\\(?:text\w*|math(?:rm|bb|cal|frak|sf|tt|it|bf)|operatorname|mbox|begin|end|hspace|color)\s*\{[^{}]*\}"
)
_COMMAND = re.compile(r"\\[A-Za-z]+")
_LONE_LETTER = re.compile(r"(?<![A-Za-z])[A-Za-z](?![A-Za-z])")  # a run such as "or" or "ac" is not checked
_RELATION = re.compile(r"[=<>:]|\\(?:approx|leq?|geq?|neq?|lt|gt|to|in|sim|equiv|iff|implies|Rightarrow)(?![A-Za-z])")
#: Letters latex2sympy reads as constants, not symbols: Euler's e and the imaginary unit.
_CONSTANT_LETTERS = frozenset("eiEI")


def lost_letters(text: str, parsed: Any) -> list[str]:
    """Lone letters written in ``text`` (no relation in it) that the parse ``parsed`` no longer has.

    A parse that dropped a letter (a unit-like ``t`` in ``x+2t``, a ``c`` after ``\\frac{a}{b}``) is not a
    reading of what was written, so an equality found on it proves nothing.
    """
    import sympy
    from sympy.core.function import AppliedUndef

    if not isinstance(parsed, sympy.Basic) or _RELATION.search(text):
        return []  # math-verify keeps one side of a relation (x \approx 11 is 11): its other letters go
    bare = _COMMAND.sub(" ", _NAME_ARGUMENT.sub(" ", text))
    written = set(_LONE_LETTER.findall(bare)) - _CONSTANT_LETTERS
    if not written:
        return []
    names = [s.name for s in parsed.atoms(sympy.Symbol)]
    names += [type(f).__name__ for f in parsed.atoms(AppliedUndef)]
    kept = set(re.findall(r"[A-Za-z]", " ".join(names)))
    return sorted(written - kept)


def _symbols_differ(gold: Any, answer: Any) -> bool:
    """Two expressions with different free symbols (``a`` against ``a c``): equal only if their difference is 0."""
    import sympy

    if not (isinstance(gold, sympy.Expr) and isinstance(answer, sympy.Expr)):
        return False  # a relation is compared by its value side (x = 5 against 5), a set item by item
    return gold.free_symbols != answer.free_symbols


@functools.cache
def _extraction_config() -> list:
    """math-verify's extraction config, built once per process (its parse cache is keyed on it).

    ``units=False``: math-verify would strip a trailing c, d, g, h, m, s, t, ... as a unit (``x+2t`` read as
    ``x+2``); rewardsmith's own normalisation has already removed what is written as a unit.
    """
    from latex2sympy2_extended.latex2sympy2 import NormalizationConfig
    from math_verify import ExprExtractionConfig, LatexExtractionConfig

    normalization = NormalizationConfig(
        basic_latex=True, units=False, malformed_operators=True, nits=True, boxed="all", equations=False
    )
    return [LatexExtractionConfig(boxed_match_priority=0, normalization_config=normalization), ExprExtractionConfig()]


def _simplify_skipped(gold: Any, answer: Any) -> bool:
    """math-verify simplifies ``gold - answer`` itself, except when a side is a bare symbol (``x`` against
    ``(x+1)^2-(x+1)^2+x``): only then is a second simplify worth its time."""
    import sympy

    return isinstance(gold, sympy.Symbol) or isinstance(answer, sympy.Symbol)


#: Digits sympy evaluates a numeric difference to; mpmath's exponent range is unbounded (no underflow).
_PROOF_DIGITS = 50


def prove_equal(gold: Any, answer: Any, rel_tol: float) -> bool | None:
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
        verdicts: list[bool | None] = []
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
            exact = sympy.expand((gold - answer).doit())
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


def _has_float(*exprs: Any) -> bool:
    import sympy

    return any(e.has(sympy.Float) for e in exprs)


def _all_proven(verdicts: list[bool | None]) -> bool | None:
    if any(v is False for v in verdicts):
        return False
    return None if any(v is None for v in verdicts) else True


#: Largest power with a numeric base that :func:`difference_is_zero` lets sympy evaluate, in bits.
SYMBOLIC_MAX_POWER_BITS = 1 << 22  # about 1.3 million digits: well under a second to compute
#: Largest exponent of a symbolic base (``(x+1)^{200}``) it lets sympy expand.
SYMBOLIC_MAX_EXPANDED_EXPONENT = 200


def difference_is_zero(gold: Any, answer: Any) -> bool:
    """``simplify(gold - answer) == 0`` for two scalar sympy expressions, math-verify's blind spot
    (``x`` against ``(x+1)^2-(x+1)^2+x``); refused for powers too large to evaluate safely."""
    import sympy

    if not all(isinstance(e, sympy.Expr) and not isinstance(e, sympy.MatrixBase) for e in (gold, answer)):
        return False
    if _has_huge_power(gold) or _has_huge_power(answer):
        return False
    try:
        difference = sympy.expand(gold - answer)
        if difference == 0:
            return True
        if difference.has(sympy.I) and not difference.free_symbols and sympy.expand_complex(difference) == 0:
            return True  # \sqrt2 e^{i\pi/4} is 1+i: the polar form in its real and imaginary parts
        if _differs_at_a_point(difference, gold, answer):
            return False  # simplify would only spend time failing to reach 0
        return bool(sympy.simplify(difference) == 0)
    except Exception:  # sympy raises many types on odd input; undecided means "not shown equal"
        return False


def _differs_at_a_point(difference: Any, gold: Any, answer: Any) -> bool:
    """True when the difference is clearly non-zero at one rational point (a 30-digit evaluation)."""
    import sympy

    symbols = sorted(difference.free_symbols, key=str)
    point = {s: sympy.Rational(37 + 11 * i, 101 + 7 * i) for i, s in enumerate(symbols)}
    try:
        value = abs(sympy.N(difference.subs(point), 30))
        scale = max(abs(sympy.N(gold.subs(point), 30)), abs(sympy.N(answer.subs(point), 30)), 1)
        return bool(value.is_number and value.is_finite and value > scale * sympy.Float(10) ** -20)
    except Exception:
        return False


def _has_huge_power(expr: Any) -> bool:
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


def _short(value: Any) -> str:
    try:
        text = " ".join(str(value).split())
    except Exception:
        return "?"
    return text if len(text) <= 60 else text[:57] + "..."
