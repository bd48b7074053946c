"""Is an extracted answer equal to the gold? Normalisation, exact fast paths, then math-verify + sympy.

Grading runs in two stages so that the common case never touches sympy:

1. :func:`fast_verdict` (in-process, pure Python, linear in the input): normalised string equality,
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

from rewardkit.rewards.math_extract import strip_math_delimiters

#: Longest answer the structural fast path parses; longer ones are compared as normalised strings.
MAX_PARSE_CHARS = 2000
#: Largest power ``a^b`` evaluated exactly on the fast path, in bits of the result.
MAX_POWER_BITS = 13_000  # about 3,900 digits, below the BigInt threshold
_MAX_DEPTH = 12


@dataclass(frozen=True)
class Verdict:
    """``equal`` is True/False when decided, ``None`` when this stage cannot decide; ``why`` says how."""

    equal: bool | None
    why: str


# -- normalisation -----------------------------------------------------------------------------
_SIZING = re.compile(r"\\(?:displaystyle|textstyle|scriptstyle|left|right|[bB]igg?[lr]?)(?![A-Za-z])")
_SPACING = re.compile(r"(?<!\\)\\[,;:! ]|~|\\q?quad(?![A-Za-z])|\\hspace\{[^{}]*\}")
_FRAC_VARIANT = re.compile(r"\\[dtc]frac(?![A-Za-z])")
_DEGREES = re.compile(r"\^\s*\{?\s*\\circ\s*\}?|°|\\degree(?![A-Za-z])|\\circ(?![A-Za-z])")
_TEXT_CMD = re.compile(r"\\(?:text|textbf|textit|textrm|mathrm|mathbf|mbox|operatorname)\s*\{([^{}]*)\}")
_THOUSANDS = re.compile(r"^[+-]?\d{1,3}(?:,\d{3})+(?:\.\d+)?$")
_UNIT_TAIL = re.compile(r"(?P<num>.*?\S)\s+(?P<unit>[A-Za-z][A-Za-z\s/\-]*)", re.S)
_KNOWN_UNITS = {
    "cm", "mm", "km", "m", "kg", "g", "mg", "s", "sec", "min", "h", "hr", "hrs", "l", "ml", "in", "ft", "yd", "mi",
    "mph", "kmh", "degrees", "degree", "units", "sq", "cents", "dollars", "euros", "pounds", "usd", "percent",
}


def clean_latex(text: str) -> str:
    r"""Light, meaning-preserving cleanup; spaces are kept (math-verify receives this form).

    ``\dfrac``/``\tfrac`` → ``\frac``, ``\frac12`` → ``\frac{1}{2}``, sizing and spacing commands,
    degrees, currency, ``\text{}`` units after a value and unit words (``5 cm``), ``{,}`` and
    ``1,000`` thousands separators, a trailing full stop.
    """
    s = strip_math_delimiters(text)
    if len(s) > MAX_PARSE_CHARS:  # too long to be an answer worth normalising; keeps every step linear
        return s
    s = _SIZING.sub("", s)
    s = _SPACING.sub(" ", s)
    s = _FRAC_VARIANT.sub(r"\\frac", s)
    s = re.sub(r"\\frac\s*(\d)\s*(\d)", r"\\frac{\1}{\2}", s)
    s = re.sub(r"\\frac\s*(\d)\s*(\{)", r"\\frac{\1}\2", s)
    s = re.sub(r"\\frac\s*(\{[^{}]*\})\s*(\d)", r"\\frac\1{\2}", s)
    s = re.sub(r"\\sqrt\s*(\d)", r"\\sqrt{\1}", s)
    s = _DEGREES.sub("", s)
    s = s.replace(r"\$", "").replace("$", "").replace("€", "").replace("£", "")
    s = s.replace("{,}", "").replace(r"\lbrace", r"\{").replace(r"\rbrace", r"\}")
    s = re.sub(r"\\(?:le|leqslant)(?![A-Za-z])", r"\\leq", s)
    s = re.sub(r"\\(?:ge|geqslant)(?![A-Za-z])", r"\\geq", s)
    s = _strip_text_units(s.strip())
    s = re.sub(r"\s+(?:or|and)\s+", ", ", s)  # "x = 2 or x = 3" lists its solutions
    s = s.strip().rstrip(".").strip()
    if _THOUSANDS.match(s):
        s = s.replace(",", "")
    return s


def _strip_text_units(s: str) -> str:
    whole = re.fullmatch(r"\\(?:text|textbf|textit|textrm|mathrm|mbox)\s*\{([^{}]*)\}", s)
    if whole:
        return whole.group(1).strip()
    # A \text{...} after a value is a unit (5\text{ cm}, 10\mbox{ apples}); inside an expression it is a name.
    s = re.sub(r"(?<=[\d}\s])\s*\\(?:text|mbox|mathrm)\s*\{\s*[A-Za-z][A-Za-z\s.]*\}(\^\{?\d\}?)?\s*$", "", s)
    s = _TEXT_CMD.sub(lambda m: m.group(1), s)
    s = re.sub(r"\s*(?:\\%|%)\s*$", r"\\%", s)
    unit = _UNIT_TAIL.fullmatch(s)
    if unit and re.fullmatch(r"[^A-Za-z\\]*\d[^A-Za-z\\]*", unit.group("num").replace(r"\frac", "")):
        words = unit.group("unit").strip().lower()
        if (len(words) >= 2 or words in _KNOWN_UNITS) and not re.search(r"\b(?:or|and)\b", words):
            return unit.group("num").strip()
    return s


def compare_key(text: str) -> str:
    """The canonical string form: :func:`clean_latex` without any whitespace."""
    return re.sub(r"\s+", "", clean_latex(text))


# -- values ------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Num:
    value: Fraction
    exact: bool  # False for decimals, which compare with a relative tolerance
    percent: bool = False


@dataclass(frozen=True)
class BigInt:
    digits: str  # sign + digits without leading zeros, compared exactly at any size


@dataclass(frozen=True)
class Surd:
    coef: Fraction  # the value is coef * sqrt(radicand), radicand square-free and > 1 (a canonical form)
    radicand: int


@dataclass(frozen=True, eq=False)  # identity equality: two such powers are compared by sympy, not by size
class Huge:
    log10: float  # a power too large to evaluate (10^{10^{10}}): only its size is known


@dataclass(frozen=True)
class Inf:
    sign: int


@dataclass(frozen=True)
class Cplx:
    real: Num
    imag: Num


@dataclass(frozen=True)
class Seq:
    open: str  # "(", "[", "{" (set) or "" (bare list)
    close: str
    items: tuple

    @property
    def unordered(self) -> bool:
        return self.open in ("{", "")


@dataclass(frozen=True)
class Union:
    parts: tuple


@dataclass(frozen=True)
class Matrix:
    rows: tuple


@dataclass(frozen=True)
class Equation:
    lhs: str
    rhs: object


@dataclass(frozen=True)
class Opaque:
    key: str  # an expression or text the fast path cannot evaluate


_DEC = r"(?:\d+(?:\.\d*)?|\.\d+)"
_PLAIN_NUMBER = re.compile(
    rf"(?P<sign>[+-]?)(?P<mant>{_DEC})(?:(?:e|E)(?P<e>[+-]?\d+)|(?:\\times|\\cdot|\*)10\^(?:\{{(?P<p>[+-]?\d+)\}}|(?P<p1>\d)))?"
)
_FRAC = re.compile(rf"(?P<sign>[+-]?)\\frac\{{(?P<n>[+-]?{_DEC})\}}\{{(?P<d>[+-]?{_DEC})\}}")
_SLASH = re.compile(rf"(?P<sign>[+-]?)(?P<n>{_DEC})/(?P<d>{_DEC})")
_MIXED = re.compile(r"(?P<sign>[+-]?)(?P<w>\d+)\\frac\{(?P<n>\d+)\}\{(?P<d>\d+)\}")
_POWER = re.compile(r"(?P<sign>[+-]?)(?P<b>\d+)\^(?:\{(?P<e>.+)\}|(?P<e1>\d))")
_INTEGER = re.compile(r"[+-]?\d+")
_INFINITY = re.compile(r"(?P<sign>[+-]?)(?:\\infty|\\inf|oo|∞)")
_MATRIX = re.compile(r"\\begin\{(?P<env>[pbBvV]?matrix|array)\}(?:\{[^{}]*\})?(?P<body>.*)\\end\{(?P=env)\}", re.S)
_INEQ_TWO = re.compile(
    r"(?P<a>[^<>=]+?)(?P<r1><|\\leq|\\lt)(?P<var>[a-zA-Z])(?P<r2><|\\leq|\\lt)(?P<b>[^<>=]+)"
)
_INEQ_ONE = re.compile(r"(?P<var>[a-zA-Z])(?P<rel><|>|\\leq|\\geq|\\lt|\\gt)(?P<b>[^<>=]+)")
_SIMPLE_LHS = re.compile(r"[a-zA-Z](?:_\{?\w+\}?)?|\\[a-zA-Z]+")
_WORDS = re.compile(r"[A-Za-z][A-Za-z\s'\-]*")


def _dec(text: str) -> tuple[Fraction, bool]:
    return Fraction(text), "." not in text


_SURDS = (
    re.compile(r"(?P<sign>[+-]?)(?P<c>\d*)\\sqrt\{(?P<n>\d+)\}"),
    re.compile(r"(?P<sign>[+-]?)\\frac\{(?P<c>\d*)\\sqrt\{(?P<n>\d+)\}\}\{(?P<d>\d+)\}"),
    re.compile(r"(?P<sign>[+-]?)\\frac\{(?P<c>\d+)\}\{(?P<d>\d+)\}\\sqrt\{(?P<n>\d+)\}"),
    re.compile(r"(?P<sign>[+-]?)(?P<c>\d*)\\sqrt\{(?P<n>\d+)\}/(?P<d>\d+)"),
)
_MAX_RADICAND = 10**8


def parse_surd(key: str) -> Surd | Num | None:
    r"""``a\sqrt{n}``, ``\frac{a\sqrt{n}}{d}``, ``\frac{a}{d}\sqrt{n}``, ``\sqrt{n}/d`` in canonical form
    (``\sqrt{112}`` and ``4\sqrt{7}`` become the same ``Surd``; ``\sqrt{16}`` becomes the number 4)."""
    for pattern in _SURDS:
        if m := pattern.fullmatch(key):
            n, c = int(m.group("n")), int(m.group("c") or 1)
            d = int(m.groupdict().get("d") or 1)
            if n > _MAX_RADICAND or d == 0:
                return None
            root, radicand = _split_square(n)
            coef = Fraction(c * root, d) * (-1 if m.group("sign") == "-" else 1)
            return Num(coef, True) if radicand in (0, 1) else Surd(coef, radicand)
    return None


def _split_square(n: int) -> tuple[int, int]:
    """``n = root**2 * radicand`` with ``radicand`` square-free (trial division; n <= 10**8)."""
    if n == 0:
        return 0, 0
    root, radicand, f = 1, n, 2
    while f * f <= radicand:
        while radicand % (f * f) == 0:
            radicand //= f * f
            root *= f
        f += 1
    return root, radicand


def parse_number(key: str) -> Num | BigInt | Huge | Inf | None:
    """An exact rational (or a huge integer, or ±∞) from a compare key; ``None`` when it is not one."""
    percent = key.endswith(r"\%")
    body = key[:-2] if percent else key
    if _INTEGER.fullmatch(body) and len(body) > 4000:
        sign = "-" if body.startswith("-") else ""
        digits = body.lstrip("+-").lstrip("0") or "0"
        return None if percent else BigInt(("" if digits == "0" else sign) + digits)
    if len(body) > 4000:
        return None
    if m := _INFINITY.fullmatch(body):
        return Inf(-1 if m.group("sign") == "-" else 1)
    try:
        if m := _PLAIN_NUMBER.fullmatch(body):
            value, exact = _dec(m.group("mant"))
            exponent = m.group("e") or m.group("p") or m.group("p1")
            if exponent is not None:
                if abs(int(exponent)) > 400:
                    return None
                value *= Fraction(10) ** int(exponent)
            return Num(-value if m.group("sign") == "-" else value, exact, percent)
        if m := _MIXED.fullmatch(body):
            n, d = int(m.group("n")), int(m.group("d"))
            if d == 0 or n >= d:
                return None
            value = int(m.group("w")) + Fraction(n, d)
            return Num(-value if m.group("sign") == "-" else value, True, percent)
        if m := (_FRAC.fullmatch(body) or _SLASH.fullmatch(body)):
            (n, n_exact), (d, d_exact) = _dec(m.group("n")), _dec(m.group("d"))
            if d == 0:
                return None
            value = n / d
            return Num(-value if m.group("sign") == "-" else value, n_exact and d_exact, percent)
        if m := _POWER.fullmatch(body):
            base = int(m.group("b"))
            power = parse_number(m.group("e") or m.group("e1"))
            if isinstance(power, Huge) and base > 1 and not percent:
                return Huge(math.inf)
            if not isinstance(power, Num) or power.value.denominator != 1:
                return None
            exponent = int(power.value)
            if base > 1 and abs(exponent) * math.log2(base) > MAX_POWER_BITS:
                # Never evaluated: its size alone settles a comparison with any ordinary number.
                return Huge(exponent * math.log10(base)) if exponent > 0 and not percent else None
            if base == 0 and exponent < 0:
                return None
            value = Fraction(base) ** exponent
            return Num(-value if m.group("sign") == "-" else value, True, percent)
    except (ValueError, ZeroDivisionError, OverflowError):
        return None
    return None


def _parse_complex(key: str) -> Cplx | None:
    if "i" not in key or len(key) > 200 or not re.fullmatch(r"[-+\d./i\\{}frac*]+", key):
        return None
    terms = re.findall(r"[+-]?[^+-]+", key)
    real, imag = Fraction(0), Fraction(0)
    exact_r = exact_i = True
    seen_imag = False
    for term in terms:
        if term.endswith("i"):
            coef = term[:-1].rstrip("*")
            if coef in ("", "+", "-"):
                coef += "1"
            number = parse_number(coef)
            if not isinstance(number, Num) or number.percent:
                return None
            imag += number.value
            exact_i = exact_i and number.exact
            seen_imag = True
        else:
            number = parse_number(term)
            if not isinstance(number, Num) or number.percent:
                return None
            real += number.value
            exact_r = exact_r and number.exact
    if not seen_imag:
        return None
    return Cplx(Num(real, exact_r), Num(imag, exact_i))


def _matching_close(key: str, start: int) -> int | None:
    """Index of the bracket closing the one at ``start`` (any of ([{ count), ``None`` when unbalanced."""
    depth = 0
    for i in range(start, len(key)):
        ch = key[i]
        if ch in "([{«":
            depth += 1
        elif ch in ")]}»":
            depth -= 1
            if depth == 0:
                return i
            if depth < 0:
                return None
    return None


def split_top_level(key: str, separator: str) -> list[str] | None:
    """Split on ``separator`` outside any brackets; ``None`` when brackets do not balance."""
    parts, depth, last, i = [], 0, 0, 0
    n, width = len(key), len(separator)
    while i < n:
        ch = key[i]
        if ch in "([{«":
            depth += 1
        elif ch in ")]}»":
            depth -= 1
            if depth < 0:
                break
        elif depth == 0 and key.startswith(separator, i):
            parts.append(key[last:i])
            last = i + width
            i += width
            continue
        i += 1
    # Half-open intervals close with the "wrong" bracket, so only the overall count must match.
    if sum(key.count(c) for c in "([{«") != sum(key.count(c) for c in ")]}»"):
        return None
    parts.append(key[last:])
    return parts


def parse_value(key: str, depth: int = 0) -> object:
    """The structure of a compare key: number, complex, interval/tuple/set, union, matrix, equation or opaque."""
    if len(key) > MAX_PARSE_CHARS and _INTEGER.fullmatch(key):
        return parse_number(key) or Opaque(key)  # integers of any length compare exactly, in linear time
    if depth > _MAX_DEPTH or len(key) > MAX_PARSE_CHARS:
        return Opaque(key)
    key = key.replace(r"\{", "«").replace(r"\}", "»")
    while len(key) >= 2 and key[0] == "{" and _matching_close(key, 0) == len(key) - 1:
        key = key[1:-1]
    if member := re.match(r"[a-zA-Z]?\\in(?![a-zA-Z])", key):
        key = key[member.end() :]
    number = parse_number(key)
    if number is not None:
        return number
    if surd := parse_surd(key):
        return surd
    if plus_minus := _plus_minus(key, depth):
        return plus_minus
    if complex_value := _parse_complex(key):
        return complex_value
    if m := _MATRIX.fullmatch(key):
        rows = [r for r in m.group("body").split(r"\\") if r.strip()]
        return Matrix(tuple(tuple(parse_value(c, depth + 1) for c in r.split("&")) for r in rows))
    sides = split_top_level(key, "=")
    if sides and len(sides) == 2 and _SIMPLE_LHS.fullmatch(sides[0]):
        return Equation(sides[0], parse_value(sides[1], depth + 1))
    union = split_top_level(key, r"\cup")
    if union and len(union) > 1:
        return Union(tuple(parse_value(p, depth + 1) for p in union))
    items = split_top_level(key, ",")
    if items and len(items) > 1:
        return Seq("", "", tuple(parse_value(p, depth + 1) for p in items))
    if key and key[0] in "([«" and key[-1] in ")]»" and _matching_close(key, 0) == len(key) - 1:
        parts = split_top_level(key[1:-1], ",")
        if parts is not None:
            values = tuple(parse_value(p, depth + 1) for p in parts)
            opening = "{" if key[0] == "«" else key[0]
            closing = "}" if key[-1] == "»" else key[-1]
            if len(values) == 1 and opening != "{":
                return values[0]
            return Seq(opening, closing, values)
    if inequality := _inequality(key, depth):
        return inequality
    return Opaque(key)


def _plus_minus(key: str, depth: int) -> Seq | None:
    r"""``\pm 2`` → the list {2, -2}; ``1 \pm \sqrt{2}`` → {1+\sqrt{2}, 1-\sqrt{2}} (a plain right-hand term)."""
    parts = split_top_level(key, r"\pm")
    if not parts or len(parts) != 2 or _sum_terms(parts[1]) != ["+" + parts[1]]:
        return None
    left, right = parts
    if not left:
        values = (parse_value(right, depth + 1), parse_value("-" + right, depth + 1))
    else:
        values = (parse_value(f"{left}+{right}", depth + 1), parse_value(f"{left}-{right}", depth + 1))
    return Seq("", "", values)


def _sum_terms(key: str) -> list[str] | None:
    """The signed top-level terms of a sum, e.g. ``2x-1`` → ``["+2x", "-1"]``; ``None`` for relations."""
    if any(c in key for c in "=<>,|") or r"\\" in key:
        return None
    terms, depth, start = [], 0, 0
    for i, ch in enumerate(key):
        if ch in "([{«":
            depth += 1
        elif ch in ")]}»":
            depth -= 1
        elif ch in "+-" and depth == 0 and i > 0:
            before = key[i - 1]
            if before in "^_+-*/" or key[:i].endswith((r"\cdot", r"\times", r"\pm")):
                continue  # a sign, not a term boundary
            if before in "eE" and i > 1 and key[i - 2].isdigit():
                continue  # 1e-3
            terms.append(key[start:i])
            start = i
    terms.append(key[start:])
    return [t if t[:1] in "+-" else "+" + t for t in terms if t]


def _same_terms(gold: str, answer: str) -> bool:
    """Equal as sums whose terms are the same strings in another order (``2x+1`` and ``1+2x``)."""
    g, a = _sum_terms(gold), _sum_terms(answer)
    return g is not None and a is not None and len(g) > 1 and sorted(g) == sorted(a)


def _inequality(key: str, depth: int) -> Seq | None:
    if m := _INEQ_TWO.fullmatch(key):
        low, high = parse_value(m.group("a"), depth + 1), parse_value(m.group("b"), depth + 1)
        return Seq("(" if m.group("r1") in ("<", r"\lt") else "[", ")" if m.group("r2") in ("<", r"\lt") else "]",
                   (low, high))
    if m := _INEQ_ONE.fullmatch(key):
        bound = parse_value(m.group("b"), depth + 1)
        rel = m.group("rel")
        if rel in (">", r"\gt", r"\geq"):
            return Seq("(" if rel in (">", r"\gt") else "[", ")", (bound, Inf(1)))
        return Seq("(", ")" if rel in ("<", r"\lt") else "]", (Inf(-1), bound))
    return None


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
        Num: "numbers", Surd: "square roots", BigInt: "integers", Cplx: "complex numbers", Seq: "tuples/intervals/sets",
        Opaque: "expressions or words", Union: "unions of intervals", Matrix: "matrices", Equation: "equations",
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
    if len(answer_key) > MAX_PARSE_CHARS and not _INTEGER.fullmatch(answer_key):
        return Verdict(False, f"answer of {len(answer_key)} characters differs from the gold as a string")
    g, a = parse_value(gold_key), parse_value(answer_key)
    verdict = compare_values(g, a, rel_tol)
    if verdict is None:
        return Verdict(None, "needs symbolic comparison")
    if isinstance(g, Huge) or isinstance(a, Huge):
        digits = (g if isinstance(g, Huge) else a).log10  # type: ignore[union-attr]
        return Verdict(verdict, f"{'equal' if verdict else 'different'}: a power with about {digits + 1:.3g} digits "
                                f"(not evaluated) against {_describe(a if isinstance(g, Huge) else g)}")
    kind = _describe(g) if type(g) is type(a) else f"{_describe(g)} vs {_describe(a)}"
    return Verdict(verdict, f"{'equal' if verdict else 'different'} as {kind}")


def _choice_letter(key: str) -> str | None:
    key = re.sub(r"\\text(?:bf)?\{([^{}]*)\}", r"\1", key).strip()
    if len(key) <= 3 and (m := re.fullmatch(r"\(?([A-J])\)?[.:]?", key)):
        return m.group(1)
    if m := re.fullmatch(r"\(([A-J])\)\s*\S.*", key, re.S):
        return m.group(1)
    return None


_WORD_ANSWERS = {"yes", "no", "none", "true", "false", "odd", "even", "both", "neither", "undefined"}


def _is_words(key: str) -> bool:
    """Text such as ``Monday`` or ``yes``; short lowercase runs (``xy``, ``abc``) are products of variables."""
    if not _WORDS.fullmatch(key):
        return False
    return key.lower() in _WORD_ANSWERS or len(key) >= 4 or (len(key) >= 2 and not key.islower())


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
    answer_parsed = parse(f"${answer}$", extraction_config=config, fallback_mode="no_fallback",
                          parsing_timeout=None)
    if not answer_parsed:
        return Verdict(False, "math-verify could not parse the answer")
    equal = verify(gold_parsed[0], answer_parsed[0], float_rounding=float_rounding, timeout_seconds=None,
                   allow_set_relation_comp=True)
    shown = f"{_short(gold_parsed[0])} vs {_short(answer_parsed[0])}"
    return Verdict(bool(equal), f"sympy: {'equal' if equal else 'not equal'} ({shown})")


def _short(value: object) -> str:
    try:
        text = str(value)
    except Exception:
        return "?"
    return text if len(text) <= 60 else text[:57] + "..."
