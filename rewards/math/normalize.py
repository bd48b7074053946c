r"""Meaning-preserving cleanup of a LaTeX answer, and the canonical string form answers are compared by.

>>> clean_latex(r"\dfrac12 \text{ cm}")
'\\frac{1}{2}'
>>> compare_key(r"x = 2 \text{ or } x = 3")
'x=2,x=3'
"""

from __future__ import annotations

import re
import unicodedata

from rewardsmith.rewards.math.extract import closing_brace, strip_math_delimiters
from rewardsmith.rewards.math.number_words import number_from_words
from rewardsmith.rewards.math.numerals import repeating_to_fraction, scale_by_words

#: Longest answer the structural fast path parses; longer ones are compared as normalised strings.
MAX_PARSE_CHARS = 2000

_SIZING = re.compile(r"\\(?:displaystyle|textstyle|scriptstyle|left|right|[bB]igg?[lr]?)(?![A-Za-z])")
_SPACING = re.compile(r"(?<!\\)\\[,;: ]|~|\\q?quad(?![A-Za-z])|\\hspace\{[^{}]*\}")
_NEGATIVE_SPACE = re.compile(r"(?<!\\)\\!\s*")  # MATH writes 10,\!000: a negative thin space, not a gap
# \\frac from a twice-escaped dataset cell; a matrix row break is followed by a space or a digit, not these
_DOUBLED_BACKSLASH = re.compile(
    r"(?<!\\)\\\\(?=(?:left|right|frac|dfrac|tfrac|sqrt|cdot|times|pi|infty|text)(?![A-Za-z]))"
)
_TUPLE_LABEL = re.compile(r"^\s*\(\s*[A-Za-z](?:\s*,\s*[A-Za-z])+\s*\)\s*=\s*")  # "(x, y) = (5, 8)"
_VULGAR = {"½": "1/2", "⅓": "1/3", "⅔": "2/3", "¼": "1/4", "¾": "3/4", "⅕": "1/5", "⅖": "2/5", "⅗": "3/5",
           "⅘": "4/5", "⅙": "1/6", "⅚": "5/6", "⅛": "1/8", "⅜": "3/8", "⅝": "5/8", "⅞": "7/8"}  # fmt: skip
_EMPTY_SET = re.compile(r"\\(?:varnothing|emptyset)(?![A-Za-z])(?:\{\})?|∅|\\\{\s*\\\}")
_ENUMERATION_AND = re.compile(r",?\s+(?:or|and)\s+")
_DECIMAL_COMMA = re.compile(r"([+-]?\d+),(\d+)")
_FRAC_SHORTHAND = re.compile(r"\\frac\s*([0-9A-Za-z])\s*([0-9A-Za-z])")
_PLAIN_PI = re.compile(r"(?<![\\A-Za-z])pi(?![A-Za-z])")
_FRAC_VARIANT = re.compile(r"\\[dtc]frac(?![A-Za-z])")
#: A degree mark; a brace is taken only with the one it closes (``^{\circ}``), never a wrapper's (``\text{90^\circ}``).
_DEGREES = re.compile(r"\^\s*(?:\{\s*\\circ\s*\}|\\circ(?![A-Za-z]))|°|\\degree(?![A-Za-z])|\\circ(?![A-Za-z])")
# 1e-5, 2.5E+3: a decimal mantissa at a token start, an integer exponent, nothing word-like after it
# (sympy would read 1e-5 as Euler's number: 1*E - 5).
_SCIENTIFIC_E = re.compile(r"(?<![\w\\.])(\d+(?:\.\d*)?|\.\d+)[eE]\+?(-?\d+)(?![\w.^{(])")
_THOUSANDS = re.compile(r"^[+-]?[1-9]\d{0,2}(?:,\d{3})+(?:\.\d+)?$")
_UNIT_TAIL = re.compile(r"(?P<num>.*?\S)\s+(?P<unit>[A-Za-z][A-Za-z\s/\-]*?)\s*(?:\^\{?[23]\}?|[²³])?", re.S)
#: Words that make a trailing text a hedge or a second answer (``5 \text{ or more}``), never a unit.
_HEDGE = re.compile(
    r"\b(?:or|and|more|less|least|most|than|about|approx\w*|around|roughly|nearly|almost|over|under|not|to|maybe)\b",
    re.I,
)
_TRAILING_UNIT_MARKUP = re.compile(
    r"(?<=[\d}\s])\s*\\(?:text[a-z]*|mbox|mathrm)\s*\{\s*(?P<unit>[A-Za-z][A-Za-z\s.]*)\}(?:\^\{?(?P<power>\d)\}?)?\s*$"
)
#: ``5 m`` written with the unit the other side marks up (``5\text{ m}``): that lone letter is the unit.
_LONE_LETTER_TAIL = re.compile(
    r"(?P<num>[+-]?(?:\d+(?:\.\d*)?|\.\d+))\s*(?P<unit>[A-Za-z])(?:\^\{?(?P<power>[23])\}?)?"
)


_TRIG_DEGREES = re.compile(
    r"(?P<fn>\\(?:sin|cos|tan|cot|sec|csc))\s*(?P<open>\(?)\s*(?P<n>[+-]?\d+(?:\.\d+)?)\s*"
    r"(?:\^\s*(?:\{\s*\\circ\s*\}|\\circ(?![A-Za-z]))|°|\\degree(?![A-Za-z]))\s*(?P<close>\)?)"
)
_CURRENCY = ((r"\$", "dollars"), ("$", "dollars"), ("€", "euros"), ("£", "pounds"), ("¢", "cents"))
_DISJUNCTION = re.compile(r"\\(?:lor|vee)(?![A-Za-z])|\band/or\b")
#: One plain number (``90``, ``-2.5``, ``\frac{1}{2}``): what a degree mark or a currency sign is the unit of.
_ONE_NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+|\\frac\{\d+\}\{\d+\})")


def _trig_radians(m: re.Match[str]) -> str:
    r"""``\sin 60^\circ`` and ``\sin(60^\circ)`` → ``\sin(\frac{60\pi}{180})``; other brackets are kept as written."""
    angle = rf"{m.group('fn')}(\frac{{{m.group('n')}\pi}}{{180}}"
    if m.group("open"):
        return angle + m.group("close")  # \sin(60^\circ + x) keeps its own closing bracket for later
    return angle + ")" + m.group("close")


#: Signs written with other code points: the minus sign, small and fullwidth hyphen-minus, en dash used as minus.
_MINUS_LIKE = str.maketrans({"\u2212": "-", "\ufe63": "-", "\uff0d": "-", "\u2013": "-"})


def fold_lookalikes(text: str) -> str:
    """Fullwidth forms (``１``, ``＋``), other scripts' decimal digits (``٣``) and minus-like signs as their ASCII
    selves. The symbolic reader drops characters it does not know, so ``-3−１`` (−4) read as ``-3`` and paid for a
    gold ``-3``; read as ASCII it is what it says. Superscripts and other digit-like marks keep their meaning."""
    if text.isascii():
        return text
    out = []
    for ch in text.translate(_MINUS_LIKE):
        code = ord(ch)
        if 0xFF01 <= code <= 0xFF5E:  # the fullwidth block mirrors printable ASCII
            out.append(chr(code - 0xFEE0))
        elif ch.isdecimal() and not ch.isascii():
            out.append(str(unicodedata.decimal(ch)))
        else:
            out.append(ch)
    return "".join(out)


def clean_latex(text: str) -> str:
    r"""Light, meaning-preserving cleanup; spaces are kept (math-verify receives this form).

    ``\dfrac``/``\tfrac`` → ``\frac``, ``\frac12`` → ``\frac{1}{2}``, ``\fracabc`` → ``\frac{a}{b}c``,
    sizing and spacing commands, degrees, currency, units (see :func:`clean_latex_with_unit`), ``{,}`` and
    ``1,000`` thousands separators, a trailing full stop; ``1e-5``/``2.5E+3`` become ``\times10^{…}``.
    """
    return clean_latex_with_unit(text)[0]


def clean_latex_with_unit(text: str) -> tuple[str, str | None]:
    r""":func:`clean_latex`, and the unit it removed (``"cm"`` for ``5\text{ cm}`` or ``5 cm``), if any.

    What counts as a unit: a ``\text{}``/``\mbox{}``/``\mathrm{}`` after a value (``5\text{ m}``), or a unit word
    after a number (``5 cm``, ``12 apples``: a known short unit or a word of four letters or more; ``5 ab`` is a
    product). A lone letter is a variable: ``2s``, ``3t``,
    ``5 m`` and ``x+2t`` keep it (``2s`` is twice ``s``); only :func:`agree_units` reads one as a unit, when
    the other side writes that same unit as a unit.
    """
    s = strip_math_delimiters(text)
    if len(s) > MAX_PARSE_CHARS:  # too long to be an answer worth normalising; keeps every step linear
        return s, None
    s = fold_lookalikes(s)
    s = _DOUBLED_BACKSLASH.sub(r"\\", s)
    s = _SIZING.sub("", s)
    s = repeating_to_fraction(s)  # 0.\overline{12} is 4/33, never 0.12 or 0
    s = _SCIENTIFIC_E.sub(r"\1\\times10^{\2}", s)
    s = _NEGATIVE_SPACE.sub("", s)
    s = _TUPLE_LABEL.sub("", s)
    s = re.sub(r"_\{(\w)\}", r"_\1", s)  # y_{1} is y_1
    s = _SPACING.sub(" ", s)
    s = _EMPTY_SET.sub(r"\\emptyset", s)
    s = re.sub(r"(\d?)([½⅓⅔¼¾⅕⅖⅗⅘⅙⅚⅛⅜⅝⅞])", _vulgar_fraction, s)
    s = s.replace("²", "^2").replace("³", "^3")
    s = _FRAC_VARIANT.sub(r"\\frac", s)
    s = _PLAIN_PI.sub(r"\\pi", s)  # 2*pi written as text is 2\pi, not 2 times p times i
    s = _FRAC_SHORTHAND.sub(r"\\frac{\1}{\2}", s)  # \frac12, MATH's \fracab (TeX reads one token each)
    s = re.sub(r"\\frac\s*([0-9A-Za-z])\s*(\{)", r"\\frac{\1}\2", s)
    s = re.sub(r"\\frac\s*(\{[^{}]*\})\s*([0-9A-Za-z])", r"\\frac\1{\2}", s)
    s = re.sub(r"\\sqrt\s*(\d)", r"\\sqrt{\1}", s)
    s = _TRIG_DEGREES.sub(_trig_radians, s)  # \sin 60^\circ: the argument in radians, as sin reads it
    degrees = _DEGREES.search(s) is not None
    s = _DEGREES.sub("", s)
    currency = next((name for mark, name in _CURRENCY if mark in s), None)
    s = s.replace(r"\$", "").replace("$", "").replace("€", "").replace("£", "").replace("¢", "")
    s = s.replace("{,}", "").replace(r"\lbrace", r"\{").replace(r"\rbrace", r"\}")
    s = re.sub(r"\\(?:le|leqslant)(?![A-Za-z])", r"\\leq", s)
    s = re.sub(r"\\(?:ge|geqslant)(?![A-Za-z])", r"\\geq", s)
    s = _DISJUNCTION.sub(" or ", s)  # a \lor b lists both, as "a or b" does
    s, unit = _strip_text_units(s.strip())
    if unit is None and (degrees or currency) and _ONE_NUMBER.fullmatch(s.strip()):
        unit = "°" if degrees else currency  # 90^\circ, \$5, 5¢: a unit that other units must agree with
    if s[:1].isalpha() and (named := number_from_words(s)) is not None:
        s = str(named)  # "one hundred and five" before its "and" reads as a list
    s = _ENUMERATION_AND.sub(", ", s)  # "x = 2 or x = 3", "19, 46, and 82" list their items
    s = s.strip().rstrip(".").strip()
    if _THOUSANDS.match(s):
        s = s.replace(",", "")
    return s, unit


#: Names of one unit, to tell ``5\\text{ cm}`` from ``5\\text{ m}``; a unit not listed is not compared.
_UNIT_NAMES = {
    "m": ("m", "meter", "meters", "metre", "metres"), "cm": ("cm", "centimeter", "centimeters", "centimetre"),
    "mm": ("mm", "millimeter", "millimeters"), "km": ("km", "kilometer", "kilometers", "kilometre"),
    "g": ("g", "gram", "grams"), "kg": ("kg", "kilogram", "kilograms"), "s": ("s", "sec", "second", "seconds"),
    "min": ("min", "minute", "minutes"), "h": ("h", "hr", "hrs", "hour", "hours"), "ft": ("ft", "foot", "feet"),
    "in": ("in", "inch", "inches"), "l": ("l", "liter", "liters", "litre", "litres"), "ml": ("ml", "milliliter"),
    "cents": ("cent", "cents", "¢"), "dollars": ("dollar", "dollars", "usd"), "days": ("day", "days"),
    "euros": ("euro", "euros", "eur"), "pounds": ("pound", "pounds", "gbp"), "yen": ("yen", "jpy"),
    "°": ("°", "deg", "degree", "degrees"), "rad": ("rad", "radian", "radians"),
}  # fmt: skip
_UNIT_CANONICAL = {name: unit for unit, names in _UNIT_NAMES.items() for name in names}


def different_units(gold_unit: str | None, answer_unit: str | None) -> str | None:
    """``"cm vs m"`` when both sides name known units that differ; ``None`` when they agree or one is unknown."""
    if not gold_unit or not answer_unit:
        return None
    g, a = (_canonical_unit(u) for u in (gold_unit, answer_unit))
    return f"{answer_unit} vs {gold_unit}" if g and a and g != a else None


#: Unit words shorter than four letters; any other short run of letters after a number (``5 ab``) is a product.
_SHORT_UNIT_WORDS = frozenset({
    "cm", "mm", "km", "kg", "mg", "ml", "dm", "nm", "ft", "in", "yd", "mi", "hr", "hrs", "min", "sec", "lb", "lbs",
    "oz", "sq", "mph", "kmh", "day", "yr", "yrs", "cup", "usd", "eur", "deg", "rad", "gal", "pct",
})  # fmt: skip


def _is_unit_word(words: str) -> bool:
    """``5 cm``, ``5 apples``, ``5 square units``: a known short unit or words of four letters or more."""
    parts = words.lower().split()
    return bool(parts) and all(w in _SHORT_UNIT_WORDS or len(w) >= 4 for w in parts)


def _canonical_unit(unit: str) -> str | None:
    """``"meters^2"`` → ``"m^2"``; ``None`` for a unit not in :data:`_UNIT_NAMES`."""
    name, _, power = unit.partition("^")
    canonical = _UNIT_CANONICAL.get(re.sub(r"[\s.]", "", name).lower())
    return None if canonical is None else canonical + (f"^{power}" if power and power != "1" else "")


_HEDGE_WORD = re.compile(
    r"(?<![\\A-Za-z])(?:approx\w*|about|roughly|nearly|almost|around|maybe|perhaps|probably|least|most|more|less"
    r"|than|not|between|either|whether|possibly|likely|guess|might|could|or|to)(?![A-Za-z])|\?|'"
    r"|\\mid(?![A-Za-z])|^(?:[<>]|\\(?:[lg]eq?|approx|neq?|sim)(?![A-Za-z]))",
    re.I,
)


def hedged(gold_key: str, answer_key: str) -> str | None:
    """The hedge or mark in an answer the gold does not share (``approx``, ``at least``, ``?``, a relation with
    nothing on its left such as ``\\neq 3``,
    a prime ``f'``): math-verify would drop it and compare what is left."""
    found = _HEDGE_WORD.search(answer_key)
    if found is None and answer_key.count("|") % 2 and not gold_key.count("|") % 2:
        return "|"  # 0|90: a bar that is no absolute value's, "either", read by math-verify as one side
    if found is None or _HEDGE_WORD.search(gold_key):
        return None
    return found.group(0)


_MALFORMED_NUMBER = re.compile(r"\d\.(?!\d)(?=.)|\d\.\d+\.\d")


def malformed_number(key: str) -> str | None:
    """A number with a stray point (``-3.-3.-3``, ``3.3.3``): math-verify would read its first part only."""
    found = _MALFORMED_NUMBER.search(key)
    return key[max(0, found.start() - 3) : found.end() + 3] if found else None


def agree_units(gold: str, gold_unit: str | None, answer: str, answer_unit: str | None) -> tuple[str, str]:
    """Cleaned gold and answer, where a number with a lone letter on one side (``5 m``) is that number in the
    unit the other side wrote as a unit (``5\\text{ m}``); everywhere else the letter stays a variable."""
    for unit, side in ((gold_unit, "answer"), (answer_unit, "gold")):
        text = answer if side == "answer" else gold
        if unit is None or len(unit.split("^")[0]) != 1:
            continue
        m = _LONE_LETTER_TAIL.fullmatch(text)
        if m and m.group("unit") + (f"^{m.group('power')}" if m.group("power") else "") == unit:
            if side == "answer":
                answer = m.group("num")
            else:
                gold = m.group("num")
    return gold, answer


def angles_agree(gold: str, gold_unit: str | None, answer: str, answer_unit: str | None) -> tuple[str, str]:
    r"""Cleaned gold and answer, where an angle in degrees (``30^\circ``) against a value written with ``\pi``
    (``\frac{\pi}{6}``) is that angle in radians. A plain number is never read as degrees or radians: ``30``
    and ``\frac{\pi}{6}`` differ, as do ``30^\circ`` and ``30\text{ rad}``."""
    degrees = [_canonical_unit(unit) == "°" if unit else False for unit in (gold_unit, answer_unit)]
    has_pi = [r"\pi" in text for text in (gold, answer)]
    if degrees[0] and not degrees[1] and has_pi[1] and not has_pi[0]:
        gold = rf"\frac{{{gold}\pi}}{{180}}"
    elif degrees[1] and not degrees[0] and has_pi[0] and not has_pi[1]:
        answer = rf"\frac{{{answer}\pi}}{{180}}"
    return gold, answer


_OPENERS, _CLOSERS = frozenset("([{"), frozenset(")]}")


def nesting_depth(key: str) -> int:
    """How deep brackets nest in ``key`` (one linear pass; unbalanced closers are ignored)."""
    depth = deepest = 0
    for ch in key:
        if ch in _OPENERS:
            depth += 1
            deepest = max(deepest, depth)
        elif ch in _CLOSERS and depth:
            depth -= 1
    return deepest


def _vulgar_fraction(m: re.Match[str]) -> str:
    """``½`` → ``\\frac{1}{2}``; ``2½`` → the mixed number ``2\\frac{1}{2}``."""
    n, d = _VULGAR[m.group(2)].split("/")
    return f"{m.group(1)}\\frac{{{n}}}{{{d}}}"


def decimal_comma_reading(key: str) -> str | None:
    """``3,5`` read with a decimal comma (``3.5``); ``None`` when ``key`` is not one number with one comma."""
    m = _DECIMAL_COMMA.fullmatch(key)
    return f"{m.group(1)}.{m.group(2)}" if m else None


_TEXT_OPEN = re.compile(
    r"\\(?:text(?:bf|it|rm|normal|sf|tt|up|md)?|texttt|math(?:rm|bf|tt|sf|it)|mbox|operatorname)\s*\{"
)
_MAX_UNWRAPPED = 64


def _unwrap_text(s: str) -> str:
    r"""Every ``\text{…}``-like command replaced by its contents, nested braces included, with a space on each
    side: a letter glued after it (``5\text{ cents}x``) stays a letter of its own, never part of a unit word."""
    pos = 0
    for _ in range(_MAX_UNWRAPPED):
        m = _TEXT_OPEN.search(s, pos)
        if m is None:
            break
        end = closing_brace(s, m.end() - 1)
        if end is None:
            break
        s = f"{s[: m.start()]} {s[m.end() : end]} {s[end + 1 :]}"
        pos = m.start()
    return s


def _strip_text_units(s: str) -> tuple[str, str | None]:
    whole = re.fullmatch(r"\\(?:text(?:bf|it|rm|normal|sf|tt)?|mathrm|mbox)\s*\{([^{}]*)\}", s)
    if whole:
        return whole.group(1).strip(), None
    wrapper = _TEXT_OPEN.match(s)
    if wrapper and closing_brace(s, wrapper.end() - 1) == len(s) - 1:  # \texttt{\frac{3}{2}, 0.5}: its contents
        return _strip_text_units(s[wrapper.end() : -1].strip())
    # A \text{...} after a value is a unit (5\text{ cm}, 10\mbox{ apples}); inside an expression it is a name.
    found = None
    marked = _TRAILING_UNIT_MARKUP.search(s)
    if marked and not _HEDGE.search(marked.group("unit")) and marked.group("unit").strip() not in ("e", "i", "d"):
        power = f"^{marked.group('power')}" if marked.group("power") else ""
        s, found = s[: marked.start()], marked.group("unit").strip().rstrip(".").strip() + power
        if scaled := scale_by_words(s.strip(), found):  # 5\text{ million}: a factor of the value, not a unit
            s, found = scaled[0], scaled[1] or None
    s = _unwrap_text(s)
    s = re.sub(r"\s*(?:\\%|%)\s*$", r"\\%", s)
    unit = _UNIT_TAIL.fullmatch(s)
    if unit and re.fullmatch(r"[^A-Za-z\\]*\d[^A-Za-z\\]*", unit.group("num").replace(r"\frac", "")):
        words = unit.group("unit").strip()
        if _is_unit_word(words) and not _HEDGE.search(words):  # a lone letter, or "ab", is a product
            squared_cubed = re.search(r"[23]", s[unit.end("unit") :])
            words += f"^{squared_cubed.group(0)}" if squared_cubed else ""
            if scaled := scale_by_words(unit.group("num").strip(), words):  # 5 million apples
                return scaled[0], scaled[1] or found
            return unit.group("num").strip(), words
    return s, found


def compare_key(text: str) -> str:
    """The canonical string form: :func:`clean_latex` without any whitespace."""
    return re.sub(r"\s+", "", clean_latex(text))
