"""Stdio verdicts: the program's output against the expected text, decided on the host in linear time.

Exact lines: line by line with an exact line count; trailing whitespace per line (incl. ``\\r``) and trailing empty
lines are ignored; leading whitespace and inner blank lines count. Special judges ``tokens``/``float`` compare
whitespace-separated tokens. Output that is not UTF-8 fails.

``float`` applies its tolerances only where the expected token is written as a decimal fraction or with an exponent
(``0.5``, ``-3.``, ``.25``, ``1e-9``), and only to an output token written in the same plain decimal grammar
(ASCII digits, an optional ``-``, a point, an exponent). Every other expected token compares as text, exactly: an
integer (``1000000000``: a count or an index, where "close" is wrong), ``nan``, ``inf``, ``+1.5``, ``0x1p3``, words.
Python's ``float()`` would also read ``nan``, ``inf``, ``1_000.5``, ``+1.5`` and non-ASCII digits; none of them is
read as a number here, so none can land inside a tolerance.
"""

from __future__ import annotations

import math
import re

from rewardsmith.rewards.code.case_formats import Checker


def output_lines(text: str) -> list[str]:
    lines = [line.rstrip() for line in text.split("\n")]
    while lines and not lines[-1]:
        lines.pop()
    return lines


def stdout_matches(stdout: bytes, expected: str) -> bool:
    try:
        text = stdout.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return output_lines(text) == output_lines(expected)


def tokens_match(stdout: bytes, expected: str, checker: Checker) -> bool:
    """The ``tokens``/``float`` special judges, decided here from the output's text."""
    try:
        actual = stdout.decode("utf-8").split()
    except UnicodeDecodeError:
        return False
    wanted = expected.split()
    if len(actual) != len(wanted):
        return False
    return all(
        a == w or (checker.kind == "float" and _close(a, w, checker)) for a, w in zip(actual, wanted, strict=True)
    )


#: a number as the ``float`` checker reads it: optional ``-``, ASCII digits, a point and/or an exponent
_DECIMAL = re.compile(r"-?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]+)?")
_INTEGER = re.compile(r"-?[0-9]+")


def tolerant_token(expected: str) -> bool:
    """True when the expected token is a number written as a float (tolerance applies); integers compare exactly."""
    return _DECIMAL.fullmatch(expected) is not None and _INTEGER.fullmatch(expected) is None


def _close(actual: str, expected: str, checker: Checker) -> bool:
    if not tolerant_token(expected) or _DECIMAL.fullmatch(actual) is None:
        return False
    a, e = float(actual), float(expected)
    if not (math.isfinite(a) and math.isfinite(e)):
        return False
    return abs(a - e) <= checker.abs_tol or abs(a - e) <= checker.rel_tol * abs(e)
