"""Compare keys parsed into exact values: numbers, surds, complex numbers, intervals, tuples and sets,
unions, matrices and equations; whatever cannot be evaluated exactly stays an :class:`Opaque` string.

>>> parse_value(r"\\frac{3}{4}")
Num(value=Fraction(3, 4), exact=True, percent=False)
>>> interval = parse_value("[1,2)")
>>> interval.open, interval.close, [item.value for item in interval.items]
('[', ')', [Fraction(1, 1), Fraction(2, 1)])
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from fractions import Fraction
from typing import TypeGuard, cast

from rewardsmith.rewards.math.normalize import MAX_PARSE_CHARS
from rewardsmith.rewards.math.numerals import parse_based

#: Largest power ``a^b`` evaluated exactly on the fast path, in bits of the result.
MAX_POWER_BITS = 13_000  # about 3,900 digits, below the BigInt threshold
_MAX_DEPTH = 12
#: Largest ``|exponent|`` of scientific notation expanded into a fraction; beyond it a :class:`Scientific`.
MAX_EXPANDED_EXPONENT = 400


@dataclass(frozen=True)
class Num:
    value: Fraction
    exact: bool  # False for decimals, which compare with a relative tolerance
    percent: bool = False
    #: The digits as written when the number is a plain whole-number literal (``1011``), else ``None``: a gold
    #: in base 2 reads them in base 2, never the value of ``\frac{2022}{2}``.
    digits: str | None = field(default=None, compare=False)


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
class Scientific:
    """``digits × 10**exp10`` with an exponent too large to expand (``1e-99999999``), compared exactly."""

    digits: int  # signed, non-zero, no trailing zeros: one form per value
    exp10: int
    exact: bool  # False when the mantissa was written with a decimal point

    @property
    def magnitude(self) -> int:
        """``floor(log10(abs(value)))``."""
        return len(str(abs(self.digits))) - 1 + self.exp10


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
INTEGER = re.compile(r"[+-]?\d+")
_FACTORIAL = re.compile(r"(?P<sign>[+-]?)(?P<n>\d{1,30})!")
#: Largest ``n!`` evaluated exactly (2,568 digits); a larger one is only its size (:class:`Huge`).
MAX_EXACT_FACTORIAL = 1000
_INFINITY = re.compile(r"(?P<sign>[+-]?)(?:\\infty|\\inf|oo|∞)")
_MATRIX = re.compile(
    r"\\begin\{(?P<env>[pbBvV]?matrix|array)\}(?:\{[^{}]*\})?(?P<body>(?:(?!\\begin\{|\\end\{).)*)\\end\{(?P=env)\}",
    re.S,
)
_INEQ_TWO = re.compile(r"(?P<a>[^<>=]+?)(?P<r1><|\\leq|\\lt)(?P<var>[a-zA-Z])(?P<r2><|\\leq|\\lt)(?P<b>[^<>=]+)")
_INEQ_ONE = re.compile(r"(?P<var>[a-zA-Z])(?P<rel><|>|\\leq|\\geq|\\lt|\\gt)(?P<b>[^<>=]+)")
_SIMPLE_LHS = re.compile(r"[a-zA-Z](?:_\{?\w+\}?)?|\\[a-zA-Z]+")


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


def parse_number(key: str) -> Num | Scientific | BigInt | Huge | Inf | None:
    """An exact rational (or a huge integer, or ±∞) from a compare key; ``None`` when it is not one."""
    percent = key.endswith(r"\%")
    body = key[:-2] if percent else key
    if INTEGER.fullmatch(body) and len(body) > 4000:
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
                if abs(int(exponent)) > MAX_EXPANDED_EXPONENT:
                    return None if percent else _scientific(m.group("sign"), value, int(exponent), exact)
                value *= Fraction(10) ** int(exponent)
            literal = m.group("mant") if exponent is None and m.group("mant").isdigit() and not percent else None
            return Num(-value if m.group("sign") == "-" else value, exact, percent, literal)
        if m := _FACTORIAL.fullmatch(body):
            return None if percent else _factorial(m.group("sign"), int(m.group("n")))
        if m := _MIXED.fullmatch(body):
            num, den = int(m.group("n")), int(m.group("d"))
            if den == 0 or num >= den:
                return None
            mixed = int(m.group("w")) + Fraction(num, den)
            return Num(-mixed if m.group("sign") == "-" else mixed, True, percent)
        if m := (_FRAC.fullmatch(body) or _SLASH.fullmatch(body)):
            (n, n_exact), (d, d_exact) = _dec(m.group("n")), _dec(m.group("d"))
            if d == 0:
                return None
            value = n / d
            return Num(-value if m.group("sign") == "-" else value, n_exact and d_exact, percent)
        if m := _POWER.fullmatch(body):
            base = int(m.group("b"))
            power = parse_number(m.group("e") or m.group("e1"))
            tower = isinstance(power, Huge) or (isinstance(power, Scientific) and power.digits > 0 < power.exp10)
            if tower and base > 1 and not percent:
                return Huge(math.inf)  # a tower: its exponent alone has more than 400 digits
            if not isinstance(power, Num) or power.value.denominator != 1:
                return None
            exponent = int(power.value)
            if base == 10 and abs(exponent) > MAX_EXPANDED_EXPONENT and not percent:
                return _scientific(m.group("sign"), Fraction(1), exponent, True)  # exact at any size
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


def _factorial(sign: str, n: int) -> Num | Huge:
    """``n!`` exactly up to :data:`MAX_EXACT_FACTORIAL`; beyond it only its size, from ``lgamma`` (never computed:
    ``99999999999!`` has about 10**12 digits)."""
    if n <= MAX_EXACT_FACTORIAL:
        value = Fraction(math.factorial(n))
        return Num(-value if sign == "-" else value, True)
    return Huge(math.lgamma(n + 1) / math.log(10))  # like a huge power's, its sign never decides a comparison


def _scientific(sign: str, mantissa: Fraction, exponent: int, exact: bool) -> Scientific | Num:
    """``mantissa × 10**exponent`` in the one canonical form of :class:`Scientific` (0 stays a :class:`Num`)."""
    if mantissa == 0:
        return Num(Fraction(0), exact)
    while mantissa.denominator != 1:  # a decimal mantissa: at most one step per written digit
        mantissa *= 10
        exponent -= 1
    digits = int(mantissa)
    while digits % 10 == 0:
        digits //= 10
        exponent += 1
    return Scientific(-digits if sign == "-" else digits, exponent, exact)


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
    if len(key) > MAX_PARSE_CHARS and INTEGER.fullmatch(key):
        return parse_number(key) or Opaque(key)  # integers of any length compare exactly, in linear time
    if depth > _MAX_DEPTH or len(key) > MAX_PARSE_CHARS:
        return Opaque(key)
    key = key.replace(r"\{", "«").replace(r"\}", "»")
    if layers := enclosing_layers(key, "{", "}"):
        key = key[layers:-layers]
        items = split_top_level(key, ",")
        if items and len(items) > 1:  # {1,3}: braces around a list are a set written without \{ \}
            return Seq("{", "}", tuple(parse_value(p, depth + 1) for p in items))
    if (layers := enclosing_layers(key, "(", ")")) > 1:  # keep one: (1,2) is a tuple, (7) a number
        key = key[layers - 1 : 1 - layers]
    if member := re.match(r"[a-zA-Z]?\\in(?![a-zA-Z])", key):
        key = key[member.end() :]
    number = parse_number(key)
    if number is not None:
        return number
    if based := parse_based(key):
        return based
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
    groups = split_top_level(key, ";")
    if groups and len(groups) > 1 and all(groups):
        return Seq("", "", tuple(_labelled_tuple(parse_value(p, depth + 1)) for p in groups))
    items = split_top_level(key, ",")
    if items and len(items) > 1:
        return Seq("", "", tuple(parse_value(p, depth + 1) for p in items))
    if key and key[0] in "([«" and key[-1] in ")]»" and _matching_close(key, 0) == len(key) - 1:
        parts = split_top_level(key[1:-1], ",")
        if parts is not None and len(parts) == 1 and ";" in key:
            parts = split_top_level(key[1:-1], ";")  # (0;-2;6): a tuple with semicolons
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


def enclosing_layers(key: str, opening: str, closing: str) -> int:
    """How many ``opening … closing`` pairs enclose the whole of ``key``, in one linear pass.

    ``((7))`` has 2, ``(1)+(2)`` has 0; hundreds of layers cost microseconds, not a recursion each.
    """
    j = min(len(key) - len(key.lstrip(opening)), len(key) - len(key.rstrip(closing)), len(key) // 2)
    if j == 0:
        return 0
    depth = low = 0
    for ch in key[j : len(key) - j]:
        if ch in "([{«":
            depth += 1
        elif ch in ")]}»":
            depth -= 1
            low = min(low, depth)
    return max(0, j + low)


def is_labelled_list(value: object) -> TypeGuard[Seq]:
    """``p=5, q=2``: a bare list of assignments to distinct names, i.e. a tuple written with labels."""
    if not (isinstance(value, Seq) and value.open == "" and len(value.items) > 1):
        return False
    names = [item.lhs for item in value.items if isinstance(item, Equation)]
    return len(names) == len(value.items) and len(set(names)) == len(names)


def _labelled_tuple(value: object) -> object:
    """One group of ``p=5,q=2; p=7,q=2`` as the ordered tuple ``(5, 2)``."""
    if is_labelled_list(value):
        return Seq("(", ")", tuple(cast(Equation, item).rhs for item in value.items))  # all are (is_labelled_list)
    return value


def _plus_minus(key: str, depth: int) -> Seq | None:
    r"""``\pm 2`` → the list {2, -2}; ``1 \pm \sqrt{2}`` → {1+\sqrt{2}, 1-\sqrt{2}} (a plain right-hand term)."""
    parts = split_top_level(key, r"\pm")
    if not parts or len(parts) != 2 or sum_terms(parts[1]) != ["+" + parts[1]]:
        return None
    left, right = parts
    if not left:
        values = (parse_value(right, depth + 1), parse_value("-" + right, depth + 1))
    else:
        values = (parse_value(f"{left}+{right}", depth + 1), parse_value(f"{left}-{right}", depth + 1))
    return Seq("", "", values)


def sum_terms(key: str) -> list[str] | None:
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


def _inequality(key: str, depth: int) -> Seq | None:
    if m := _INEQ_TWO.fullmatch(key):
        low, high = parse_value(m.group("a"), depth + 1), parse_value(m.group("b"), depth + 1)
        return Seq(
            "(" if m.group("r1") in ("<", r"\lt") else "[", ")" if m.group("r2") in ("<", r"\lt") else "]", (low, high)
        )
    if m := _INEQ_ONE.fullmatch(key):
        bound = parse_value(m.group("b"), depth + 1)
        rel = m.group("rel")
        if rel in (">", r"\gt", r"\geq"):
            return Seq("(" if rel in (">", r"\gt") else "[", ")", (bound, Inf(1)))
        return Seq("(", ")" if rel in ("<", r"\lt") else "]", (Inf(-1), bound))
    return None
