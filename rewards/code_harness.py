"""Harnesses that run one test per sandboxed process, and the parent-side verdicts on what they report.

Why a pass cannot be forged:

- **Expected outputs never enter the sandbox.** Stdio runs get only the input; call runs get only the
  arguments; an assert is split (with ``ast``) into the sub-expressions that reach the solution's names and
  the checking glue, and only the former are evaluated next to the solution.
- **One test per process**: the solution cannot skip, reorder or time out other tests; a timeout fails that
  test only. A test counts only if its process reported exactly one result record after the solution ran;
  ``exit(0)`` before the tests, ``os._exit`` inside the function, a second (forged) record: all fail.
- **Values, not verdicts, come out**: the harness serialises results with an encoder that accepts only exact
  plain types (``type(x) is int``, not ``isinstance``), so ``__eq__``-always-true objects and subclasses of
  plain types are refused. The comparison runs in the parent on the decoded JSON, type-strictly.
- **Assert glue runs without the solution**: ``assert abs(f(x) - 2.5) < 1e-6`` evaluates ``f(x)`` next to the
  solution, then evaluates ``abs(v0 - 2.5) < 1e-6`` in a second sandboxed process that never loaded it
  (``assert f(x) == <literal>`` is compared directly in the parent).

Stdout comparison: line by line with an exact line count; trailing whitespace per line (incl. ``\\r``) and
trailing empty lines are ignored; leading whitespace and inner blank lines count.
"""

from __future__ import annotations

import ast
import builtins
import json
import math
import secrets
import sys
from dataclasses import dataclass
from typing import Any

from rewardkit.rewards.code_tests_format import AssertTest, CallTest, StdioTest
from rewardkit.sandboxes.base import Limits, RunRequest, RunResult, RunStatus

SPEC_FILE = "rk_spec.json"
TRUSTED_NAMES = frozenset(dir(builtins)) | frozenset(sys.stdlib_module_names)

# Runs next to the untrusted solution. Reads its spec, loads the solution, evaluates the call or the
# expressions and writes ONE record (nonce-prefixed line) straight to fd 1. Encoder accepts exact plain types.
RUNTIME = r"""
import builtins, importlib, json, math, os, sys

def _rk_encode(x, depth=0):
    if depth > 200:
        raise ValueError("value nested too deeply")
    t = type(x)
    if x is None or t is bool or t is int or t is str:
        return x
    if t is float:
        return x if math.isfinite(x) else {"$float": repr(x)}
    if t is list:
        return [_rk_encode(v, depth + 1) for v in x]
    if t is tuple:
        return {"$tuple": [_rk_encode(v, depth + 1) for v in x]}
    if t is set or t is frozenset:
        items = [_rk_encode(v, depth + 1) for v in x]
        return {"$set": sorted(items, key=lambda i: json.dumps(i, sort_keys=True))}
    if t is dict:
        return {"$dict": [[_rk_encode(k, depth + 1), _rk_encode(v, depth + 1)] for k, v in x.items()]}
    raise TypeError("not a plain value: " + t.__name__)

def _rk_decode(x):
    if isinstance(x, list):
        return [_rk_decode(v) for v in x]
    if isinstance(x, dict):
        (tag, body), = x.items()
        if tag == "$float":
            return float(body)
        if tag == "$tuple":
            return tuple(_rk_decode(v) for v in body)
        if tag == "$set":
            return {_rk_decode(v) for v in body}
        if tag == "$dict":
            return {_rk_decode(k): _rk_decode(v) for k, v in body}
        raise ValueError("unknown tag " + tag)
    return x

def _rk_main():
    with open("rk_spec.json") as handle:
        spec = json.load(handle)
    prefix = "\n" + spec["nonce"]

    def emit(record):
        data = (prefix + json.dumps(record, allow_nan=False) + "\n").encode()
        while data:
            data = data[os.write(1, data):]

    modules = {name: importlib.import_module(name) for name in spec.get("modules", [])}
    if spec["mode"] == "check":
        passed = []
        for check in spec["checks"]:
            if check["values"] is None:
                passed.append(False)
                continue
            scope = dict(modules, __builtins__=builtins, __rk_v=[_rk_decode(v) for v in check["values"]])
            try:
                passed.append(bool(eval(compile(check["source"], "<test>", "eval"), scope)))
            except Exception:
                passed.append(False)
        emit({"passed": passed})
        os._exit(0)
    with open("solution.py", encoding="utf-8") as handle:
        source = handle.read()
    scope = {"__name__": "__rk_solution__", "__builtins__": builtins, "__file__": "solution.py"}
    try:
        exec(compile(source, "solution.py", "exec"), scope)
    except BaseException as exc:
        emit({"error": "solution raised " + type(exc).__name__ + " while loading"})
        os._exit(0)
    for name, module in modules.items():
        scope.setdefault(name, module)
    try:
        if spec["mode"] == "call":
            target = scope.get(spec["fn_name"])
            if not callable(target) and isinstance(scope.get("Solution"), type):
                target = getattr(scope["Solution"](), spec["fn_name"], None)
            if not callable(target):
                emit({"error": "no function named " + spec["fn_name"]})
                os._exit(0)
            record = {"value": _rk_encode(target(*spec["args"]))}
        else:
            record = {"values": [_rk_encode(eval(compile(e, "<test>", "eval"), scope)) for e in spec["exprs"]]}
    except BaseException as exc:
        record = {"error": type(exc).__name__ + ": " + str(exc)[:200]}
    emit(record)
    os._exit(0)

_rk_main()
"""


class PlainValueError(ValueError):
    """A reported value that is not the tagged-plain JSON the harness writes."""


# --------------------------------------------------------------------------------------------- values
def decode_plain(obj: Any, depth: int = 0) -> Any:
    """Inverse of the harness encoder, strictly validated (unknown shapes raise :class:`PlainValueError`)."""
    if depth > 200:
        raise PlainValueError("value nested too deeply")
    if obj is None or type(obj) in (bool, int, str):
        return obj
    if type(obj) is float:
        return obj
    if type(obj) is list:
        return [decode_plain(v, depth + 1) for v in obj]
    if type(obj) is dict and len(obj) == 1:
        ((tag, body),) = obj.items()
        if tag == "$float" and body in ("nan", "inf", "-inf"):
            return float(body)
        if tag == "$tuple" and type(body) is list:
            return tuple(decode_plain(v, depth + 1) for v in body)
        if tag == "$set" and type(body) is list:
            try:
                return {decode_plain(v, depth + 1) for v in body}
            except TypeError as exc:
                raise PlainValueError(f"unhashable set element: {exc}") from None
        if tag == "$dict" and type(body) is list and all(type(p) is list and len(p) == 2 for p in body):
            try:
                return {decode_plain(k, depth + 1): decode_plain(v, depth + 1) for k, v in body}
            except TypeError as exc:
                raise PlainValueError(f"unhashable dict key: {exc}") from None
    raise PlainValueError(f"not a harness value: {str(obj)[:80]}")


def strict_equal(actual: Any, expected: Any, rel_tol: float = 1e-9) -> bool:
    """Type-strict equality: ``True != 1``, ``1 != 1.0``, ``(1,) != [1]``; floats within ``rel_tol``."""
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
        return actual.keys() == expected.keys() and all(strict_equal(actual[k], expected[k], rel_tol) for k in expected)
    if type(expected) in (set, frozenset):
        return actual == expected and {type(v) for v in actual} == {type(v) for v in expected}
    return actual == expected


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


def records(stdout: bytes, nonce: str) -> list[dict]:
    """Every nonce-prefixed JSON record in ``stdout``; a malformed one is returned as ``{"invalid": ...}``."""
    found = []
    marker = nonce.encode()
    for line in stdout.split(b"\n"):
        if line.startswith(marker):
            try:
                record = json.loads(line[len(marker) :])
            except (json.JSONDecodeError, UnicodeDecodeError):
                record = {"invalid": True}
            found.append(record if isinstance(record, dict) else {"invalid": True})
    return found


def single_record(result: RunResult, nonce: str) -> tuple[dict | None, str]:
    """The run's one record, or ``None`` and why (missing, duplicated, or the process did not finish)."""
    if result.status is not RunStatus.OK:
        return None, f"{result.status.value}: {result.message}".strip(": ")
    found = records(result.stdout, nonce)
    if len(found) != 1:
        return None, "no result reported" if not found else f"{len(found)} result records (forged?)"
    if "invalid" in found[0]:
        return None, "malformed result record"
    return found[0], ""


# --------------------------------------------------------------------------------------------- asserts
@dataclass(frozen=True)
class AssertPlan:
    """An assert split into what runs next to the solution (``exprs``) and the glue that judges them."""

    source: str
    exprs: tuple[str, ...]
    check: str  # expression over __rk_v[i]
    modules: tuple[str, ...]
    literal: tuple[bool, Any]  # (True, expected) when the check is ``__rk_v[0] == <literal>``


class _SplitUserParts(ast.NodeTransformer):
    def __init__(self, user_names: set[str]) -> None:
        self.user_names = user_names
        self.exprs: list[str] = []

    def _placeholder(self, node: ast.expr) -> ast.expr:
        self.exprs.append(ast.unparse(node))
        index = len(self.exprs) - 1
        return ast.Subscript(ast.Name("__rk_v", ast.Load()), ast.Constant(index), ast.Load())

    def visit_Call(self, node: ast.Call) -> ast.expr:
        if _root_name(node.func) in self.user_names:
            return self._placeholder(node)
        return self.generic_visit(node)

    def visit_Attribute(self, node: ast.Attribute) -> ast.expr:
        if _root_name(node) in self.user_names:
            return self._placeholder(node)
        return self.generic_visit(node)

    def visit_Subscript(self, node: ast.Subscript) -> ast.expr:
        if _root_name(node) in self.user_names:
            return self._placeholder(node)
        return self.generic_visit(node)

    def visit_Name(self, node: ast.Name) -> ast.expr:
        if node.id in self.user_names:
            return self._placeholder(node)
        return node


def _root_name(node: ast.expr) -> str | None:
    while isinstance(node, (ast.Attribute, ast.Call, ast.Subscript)):
        node = node.func if isinstance(node, ast.Call) else node.value
    return node.id if isinstance(node, ast.Name) else None


def plan_assert(test: AssertTest) -> AssertPlan:
    """Split ``test``; raises ``ValueError`` for asserts whose solution calls sit inside their own scopes."""
    statement = ast.parse(test.source).body[0]
    assert isinstance(statement, ast.Assert)
    names = {n.id for n in ast.walk(statement.test) if isinstance(n, ast.Name)}
    user_names = {n for n in names if n not in TRUSTED_NAMES}
    modules = tuple(sorted(n for n in names if n in sys.stdlib_module_names and n not in dir(builtins)))
    for node in ast.walk(statement.test):
        if isinstance(node, (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp, ast.NamedExpr)):
            raise ValueError(f"asserts with comprehensions, lambdas or := are not supported: {test.source!r}")
    splitter = _SplitUserParts(user_names)
    check = splitter.visit(statement.test)
    ast.fix_missing_locations(check)
    return AssertPlan(test.source, tuple(splitter.exprs), ast.unparse(check), modules, _literal_check(check))


def _literal_check(check: ast.expr) -> tuple[bool, Any]:
    if not (isinstance(check, ast.Compare) and len(check.ops) == 1 and isinstance(check.ops[0], ast.Eq)):
        return False, None
    left, right = check.left, check.comparators[0]
    for value_side, literal_side in ((left, right), (right, left)):
        if ast.unparse(value_side) == "__rk_v[0]":
            try:
                return True, ast.literal_eval(literal_side)
            except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
                return False, None
    return False, None


# --------------------------------------------------------------------------------------------- requests
def new_nonce() -> str:
    return "RK" + secrets.token_hex(16)


def _spec_file(spec: dict[str, Any]) -> str:
    return json.dumps(spec)


def python_call_request(code: str, fn_name: str, test: CallTest, nonce: str, limits: Limits) -> RunRequest:
    spec = {"nonce": nonce, "mode": "call", "fn_name": fn_name, "args": list(test.args)}
    files = {"main.py": RUNTIME, "solution.py": code, SPEC_FILE: _spec_file(spec)}
    return RunRequest(argv=["python3", "main.py"], files=files, limits=limits)


def python_exprs_request(code: str, plan: AssertPlan, nonce: str, limits: Limits) -> RunRequest:
    spec = {"nonce": nonce, "mode": "exprs", "exprs": list(plan.exprs), "modules": list(plan.modules)}
    files = {"main.py": RUNTIME, "solution.py": code, SPEC_FILE: _spec_file(spec)}
    return RunRequest(argv=["python3", "main.py"], files=files, limits=limits)


def python_check_request(checks: list[tuple[AssertPlan, list | None]], nonce: str, limits: Limits) -> RunRequest:
    """The trusted second stage: no solution file, only the glue and the values the solution produced."""
    modules = sorted({m for plan, _ in checks for m in plan.modules})
    spec = {
        "nonce": nonce,
        "mode": "check",
        "modules": modules,
        "checks": [{"source": plan.check, "values": values} for plan, values in checks],
    }
    return RunRequest(
        argv=["python3", "main.py"], files={"main.py": RUNTIME, SPEC_FILE: _spec_file(spec)}, limits=limits
    )


def stdio_request(language: str, program: str | bytes, test: StdioTest, limits: Limits) -> RunRequest:
    if language == "python":
        return RunRequest(
            argv=["python3", "solution.py"], files={"solution.py": program}, stdin=test.input, limits=limits
        )
    if language == "javascript":
        return RunRequest(argv=["node", "solution.js"], files={"solution.js": program}, stdin=test.input, limits=limits)
    if language == "cpp":
        return RunRequest(argv=["./solution"], files={"solution": program}, stdin=test.input, limits=limits)
    raise ValueError(f"no stdio runner for {language}")


def cpp_compile_request(code: str, limits: Limits) -> RunRequest:
    argv = ["g++", "-O2", "-std=c++17", "-pipe", "-o", "solution", "solution.cpp"]
    return RunRequest(argv=argv, files={"solution.cpp": code}, limits=limits, fetch_files=["solution"])
