r"""Meaning-preserving cleanup of a LaTeX answer, and the canonical string form answers are compared by.

>>> clean_latex(r"\dfrac12 \text{ cm}")
'\\frac{1}{2}'
>>> compare_key(r"x = 2 \text{ or } x = 3")
'x=2,x=3'
"""

from __future__ import annotations

import re

from rewardkit.rewards.math.extract import strip_math_delimiters

#: Longest answer the structural fast path parses; longer ones are compared as normalised strings.
MAX_PARSE_CHARS = 2000

_SIZING = re.compile(r"\\(?:displaystyle|textstyle|scriptstyle|left|right|[bB]igg?[lr]?)(?![A-Za-z])")
_SPACING = re.compile(r"(?<!\\)\\[,;:! ]|~|\\q?quad(?![A-Za-z])|\\hspace\{[^{}]*\}")
_FRAC_VARIANT = re.compile(r"\\[dtc]frac(?![A-Za-z])")
_DEGREES = re.compile(r"\^\s*\{?\s*\\circ\s*\}?|°|\\degree(?![A-Za-z])|\\circ(?![A-Za-z])")
_TEXT_CMD = re.compile(r"\\(?:text|textbf|textit|textrm|mathrm|mathbf|mbox|operatorname)\s*\{([^{}]*)\}")
# 1e-5, 2.5E+3: a decimal mantissa at a token start, an integer exponent, nothing word-like after it
# (sympy would read 1e-5 as Euler's number: 1*E - 5).
_SCIENTIFIC_E = re.compile(r"(?<![\w\\.])(\d+(?:\.\d*)?|\.\d+)[eE]\+?(-?\d+)(?![\w.^{(])")
_THOUSANDS = re.compile(r"^[+-]?\d{1,3}(?:,\d{3})+(?:\.\d+)?$")
_UNIT_TAIL = re.compile(r"(?P<num>.*?\S)\s+(?P<unit>[A-Za-z][A-Za-z\s/\-]*)", re.S)
_KNOWN_UNITS = {
    "cm", "mm", "km", "m", "kg", "g", "mg", "s", "sec", "min", "h", "hr", "hrs", "l", "ml", "in", "ft", "yd", "mi",
    "mph", "kmh", "degrees", "degree", "units", "sq", "cents", "dollars", "euros", "pounds", "usd", "percent",
}  # fmt: skip


def clean_latex(text: str) -> str:
    r"""Light, meaning-preserving cleanup; spaces are kept (math-verify receives this form).

    ``\dfrac``/``\tfrac`` → ``\frac``, ``\frac12`` → ``\frac{1}{2}``, sizing and spacing commands,
    degrees, currency, ``\text{}`` units after a value and unit words (``5 cm``), ``{,}`` and
    ``1,000`` thousands separators, a trailing full stop; ``1e-5``/``2.5E+3`` become ``\times10^{…}``.
    """
    s = strip_math_delimiters(text)
    if len(s) > MAX_PARSE_CHARS:  # too long to be an answer worth normalising; keeps every step linear
        return s
    s = _SIZING.sub("", s)
    s = _SCIENTIFIC_E.sub(r"\1\\times10^{\2}", s)
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
