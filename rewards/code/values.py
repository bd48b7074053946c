"""Values a sandboxed program reported, decoded on the host with every cost bounded, and compared type-strictly.

Everything here reads bytes the solution controls, so every step is linear in the size of what it printed (itself
capped by ``Limits.output_bytes``) and refuses, per sample, what it cannot take: JSON nested deeper than
:data:`MAX_DEPTH`, integers longer than :data:`MAX_INT_DIGITS`, more than :data:`MAX_NODES` values, and sets or
dict keys holding more than :data:`MAX_SAME_HASH` values of one hash (building such a set is quadratic: 40,000
colliding integers take minutes). A refusal is :class:`PlainValueError`, which the reward turns into a failed test
(0.0 with the reason), never an exception that reaches the neighbours of that sample.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from typing import Any

from rewardsmith.rewards.code.case_formats import CallTest

MAX_DEPTH = 200
MAX_INT_DIGITS = 4000
MAX_NODES = 1_000_000
MAX_SAME_HASH = 32


class PlainValueError(ValueError):
    """A reported value that is not the tagged-plain JSON the harness writes, or one too costly to decode."""


def _bounded_int(text: str) -> int:
    if len(text) > MAX_INT_DIGITS + 1:
        raise PlainValueError(f"integer with more than {MAX_INT_DIGITS} digits")
    return int(text)


def load_json(data: bytes | str) -> Any:
    """``json.loads`` that refuses deep nesting and long integers with :class:`PlainValueError` (linear time)."""
    try:
        return json.loads(data, parse_int=_bounded_int)
    except PlainValueError:
        raise
    except RecursionError:
        raise PlainValueError("value nested too deeply") from None
    except (ValueError, UnicodeDecodeError, MemoryError) as exc:
        raise PlainValueError(f"malformed JSON ({type(exc).__name__})") from None


class _Budget:
    """Counts decoded values so a reply of many tiny values is refused as a whole, not decoded forever."""

    __slots__ = ("left",)

    def __init__(self) -> None:
        self.left = MAX_NODES

    def take(self) -> None:
        self.left -= 1
        if self.left < 0:
            raise PlainValueError(f"more than {MAX_NODES} values")


def _check_hashes(items: list[Any], what: str) -> None:
    """Refuse a set (or dict keys) whose elements share one hash beyond :data:`MAX_SAME_HASH`: inserting *n*
    values of one hash costs *n²* comparisons. Counting the hashes first is linear (distinct hash values have
    distinct full hashes, so the counter's own table cannot collide)."""
    if len(items) <= MAX_SAME_HASH:
        return
    try:
        counts = Counter(hash(item) for item in items)
    except TypeError as exc:
        raise PlainValueError(f"unhashable {what}: {exc}") from None
    if counts and max(counts.values()) > MAX_SAME_HASH:
        raise PlainValueError(f"{what} with more than {MAX_SAME_HASH} values of one hash (quadratic to build)")


def decode_plain(obj: Any, depth: int = 0, budget: _Budget | None = None) -> Any:
    """Inverse of the harness encoder, strictly validated (unknown shapes raise :class:`PlainValueError`)."""
    budget = budget or _Budget()
    budget.take()
    if depth > MAX_DEPTH:
        raise PlainValueError("value nested too deeply")
    if obj is None or type(obj) in (bool, str, float):
        return obj
    if type(obj) is int:
        if obj.bit_length() > MAX_INT_DIGITS * 10 // 3:
            raise PlainValueError(f"integer with more than {MAX_INT_DIGITS} digits")
        return obj
    if type(obj) is list:
        return [decode_plain(v, depth + 1, budget) for v in obj]
    if type(obj) is dict and len(obj) == 1:
        ((tag, body),) = obj.items()
        if tag == "$float" and body in ("nan", "inf", "-inf"):
            return float(body)
        if tag == "$tuple" and type(body) is list:
            return tuple(decode_plain(v, depth + 1, budget) for v in body)
        if tag == "$complex" and type(body) is list and len(body) == 2:
            real, imag = (decode_plain(v, depth + 1, budget) for v in body)
            if type(real) is float and type(imag) is float:
                return complex(real, imag)
        if tag == "$set" and type(body) is list:
            items = [decode_plain(v, depth + 1, budget) for v in body]
            _check_hashes(items, "set element")
            try:
                return set(items)
            except TypeError as exc:
                raise PlainValueError(f"unhashable set element: {exc}") from None
        if tag == "$dict" and type(body) is list and all(type(p) is list and len(p) == 2 for p in body):
            pairs = [(decode_plain(k, depth + 1, budget), decode_plain(v, depth + 1, budget)) for k, v in body]
            _check_hashes([k for k, _ in pairs], "dict key")
            try:
                return dict(pairs)
            except TypeError as exc:
                raise PlainValueError(f"unhashable dict key: {exc}") from None
    raise PlainValueError(f"not a harness value (a {type(obj).__name__})")


def strict_equal(actual: Any, expected: Any, rel_tol: float = 1e-9) -> bool:
    """Type-strict equality: ``True != 1``, ``1 != 1.0``, ``(1,) != [1]``; floats within ``rel_tol``.

    Dict keys and set members are compared type-strictly too, and exactly (no float tolerance: a key is found
    by hash): Python's own ``==`` finds ``{True: 'a'}`` equal to ``{1: 'a'}`` and ``{1, 2.0}`` equal to
    ``{1.0, 2}``, which would let a wrong type pass wherever the expected value holds a dict or a set.
    """
    if type(actual) is not type(expected):
        return False
    if type(expected) is float:
        if math.isnan(expected):
            return math.isnan(actual)
        return actual == expected or math.isclose(actual, expected, rel_tol=rel_tol, abs_tol=0.0)
    if type(expected) in (list, tuple):
        if len(actual) != len(expected):
            return False
        return all(strict_equal(a, e, rel_tol) for a, e in zip(actual, expected, strict=True))
    if type(expected) is dict:
        keys = _matching_members(actual.keys(), expected.keys())
        return keys is not None and all(
            strict_equal(actual[keys[i]], v, rel_tol) for i, v in enumerate(expected.values())
        )
    if type(expected) in (set, frozenset):
        return _matching_members(actual, expected) is not None
    return actual == expected


def _matching_members(actual: Any, expected: Any) -> list[Any] | None:
    """For each member of ``expected`` (a set or dict keys), the member of ``actual`` it strictly equals, or ``None``
    when some member has no strict match. Python's hash lookup finds the one member ``==`` to it (a set never
    holds two ``==`` members), so this is linear; the strict comparison then decides it."""
    if len(actual) != len(expected):
        return None
    try:
        index = {member: member for member in actual}
    except TypeError:
        return None
    nans = [m for m in actual if type(m) is float and math.isnan(m)]
    found = []
    for member in expected:
        twin = nans[0] if type(member) is float and math.isnan(member) and nans else index.get(member, _MISSING)
        if twin is _MISSING or not _strict_key(twin, member):
            return None
        found.append(twin)
    return found


_MISSING = object()


def _strict_key(actual: Any, expected: Any) -> bool:
    """Exact, type-strict equality of hashable members (recursing into tuples and frozensets)."""
    if type(actual) is not type(expected):
        return False
    if type(expected) is float and math.isnan(expected):
        return math.isnan(actual)
    if type(expected) is tuple:
        return len(actual) == len(expected) and all(_strict_key(a, e) for a, e in zip(actual, expected, strict=True))
    if type(expected) is frozenset:
        return _matching_members(actual, expected) is not None
    return bool(actual == expected)


def python_equal(actual: Any, expected: Any) -> bool:
    """Python's own ``==`` (``1 == 1.0 == True``), safe here: both sides are decoded plain values, so no
    solution-defined ``__eq__`` takes part. Used where the test itself is Python (``assert f(x) == 4``)."""
    try:
        return bool(actual == expected)
    except RecursionError:
        return False


def as_json_data(value: Any) -> Any:
    """What a value looks like after a JSON round trip (tuples become lists), for expectations stored as JSON."""
    if type(value) in (list, tuple):
        return [as_json_data(v) for v in value]
    if type(value) is dict:
        return {k: as_json_data(v) for k, v in value.items()}
    return value


def call_matches(actual: Any, test: CallTest) -> bool:
    if not test.from_json:
        return strict_equal(actual, test.expected)
    normalised, expected = as_json_data(actual), as_json_data(test.expected)
    if strict_equal(normalised, expected):
        return True
    return test.apps_unwrap and type(expected) is list and len(expected) == 1 and strict_equal(normalised, expected[0])
