"""Stdio verdicts: the program's output against the expected text, decided on the host in linear time.

Exact lines: line by line with an exact line count; trailing whitespace per line (incl. ``\\r``) and trailing empty
lines are ignored; leading whitespace and inner blank lines count. Special judges ``tokens``/``float`` compare
whitespace-separated tokens (``float``: numbers within the checker's tolerances). Output that is not UTF-8 fails.
"""

from __future__ import annotations

import math

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


def _close(actual: str, expected: str, checker: Checker) -> bool:
    try:
        a, e = float(actual), float(expected)
    except ValueError:
        return False
    if not (math.isfinite(a) and math.isfinite(e)):
        return False
    return abs(a - e) <= checker.abs_tol or abs(a - e) <= checker.rel_tol * abs(e)
