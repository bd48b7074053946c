"""The trusted stand-in for ``pytest.approx``, shipped as source inside each translated KodCode test program.

The trusted check runs with the standard library only (no pytest), so the programs carry this class instead. It
reproduces pytest 9's ``approx`` for what a test can compare a solution's plain values with: numbers (bools are
compared exactly, ``nan`` equal to ``nan`` only with ``nan_ok``, infinities only to themselves), ``Decimal``,
flat lists and tuples of them, and dicts of them. An absolute tolerance given without a relative one is the only
tolerance (pytest's rule; ``max(rel·|e|, abs)`` would be looser for large values). What pytest refuses (sets,
nested lists of the same type, nested dicts) raises ``TypeError`` here as there.
"""

from __future__ import annotations

APPROX_HELPER = """
class _PytestApprox:
    def __init__(self, expected, rel=None, abs=None, nan_ok=False):
        import decimal
        self.expected, self.rel, self.abs, self.nan_ok = expected, rel, abs, nan_ok
        if isinstance(expected, dict):
            self.kind = "map"
            if any(isinstance(v, dict) for v in expected.values()):
                raise TypeError("pytest.approx() does not support nested dictionaries")
        elif isinstance(expected, (list, tuple)):
            self.kind = "seq"
            if any(isinstance(x, type(expected)) for x in expected):
                raise TypeError("pytest.approx() does not support nested data structures")
        elif isinstance(expected, (set, frozenset)):
            raise TypeError("pytest.approx() only supports ordered sequences")
        else:
            self.kind = "scalar"
        self._decimal = decimal.Decimal

    def _scalar(self, actual, expected):
        import math
        import numbers
        number = (numbers.Complex, self._decimal)
        if isinstance(expected, bool) and not isinstance(actual, bool):
            return False
        if actual == expected:
            return True
        if isinstance(expected, bool) or not (isinstance(expected, number) and isinstance(actual, number)):
            return False
        if math.isnan(abs(expected)):
            return self.nan_ok and math.isnan(abs(actual))
        if math.isinf(abs(expected)):
            return False
        decimal = isinstance(expected, self._decimal)
        absolute = self.abs if self.abs is not None else (self._decimal("1e-12") if decimal else 1e-12)
        if absolute < 0 or math.isnan(absolute):
            raise ValueError("absolute tolerance can't be negative or NaN")
        if self.rel is None and self.abs is not None:
            tolerance = absolute
        else:
            relative = (self.rel if self.rel is not None else (self._decimal("1e-6") if decimal else 1e-6)) * abs(
                expected
            )
            if relative < 0 or math.isnan(relative):
                raise ValueError("relative tolerance can't be negative or NaN")
            tolerance = max(relative, absolute)
        return abs(expected - actual) <= tolerance

    def __eq__(self, actual):
        if self.kind == "scalar":
            return self._scalar(actual, self.expected)
        if self.kind == "map":
            try:
                if set(actual.keys()) != set(self.expected.keys()):
                    return False
            except AttributeError:
                return False
            return all(self._scalar(actual[k], self.expected[k]) for k in self.expected)
        try:
            if len(actual) != len(self.expected):
                return False
        except TypeError:
            return False
        return all(self._scalar(a, e) for a, e in zip(actual, self.expected))

    def __ne__(self, actual):
        return not (actual == self)

    __hash__ = None
"""
