"""Host side of the harnesses that run one test per sandboxed process, and the verdicts on what they report.

The program that runs inside the sandbox, next to the solution, is ``harness_inside.py`` (package data: read
here as text and shipped with every run, never imported by the host).

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
- **Record/replay for everything else** (comprehensions, lambdas, ``:=``, a solution name passed as a value as
  in ``map(f, xs)``, setup lines, HumanEval ``check(candidate)`` programs): every maximal expression rooted at
  a solution name is a *site*. The record stage runs the program next to the solution and reports a table
  ``(site, encoded inputs) -> result`` (a plain value, a builtin exception type, or "object": a function,
  class or instance whose calls and attribute reads are recorded the same way). The replay stage runs the
  same program in a process that never loaded the solution, each site replaced by a lookup keyed by the
  inputs *this* process computed; a missing entry fails the test (the test's ``except Exception`` cannot
  catch it) and the reason says the two stages diverged. Both stages give the test its own ``random`` seeded
  from the test's text (HumanEval/38, /50, /53 draw inputs from it) and a fixed hash seed, so a test that
  draws random inputs replays the same draws; objects the solution returns are keyed by a handle
  (``key#n``), so setup code that builds the solution's objects and passes them back (MBPP's trees) replays.

Threat model. The solution controls its process completely: it can patch builtins, walk the harness frames
to find the nonce, and print any record. What it reports is therefore only ever used as *the solution's
outputs for given inputs*; a forged table is no stronger than a function returning those values (it is
weaker: one result per input, exceptions limited to builtin types, ``StopIteration`` never replayed), and
the verdict is always computed by trusted code. Replay cannot reproduce side effects (mutating an argument,
printing) nor names reached dynamically (``eval``, ``getattr``, ``globals()``...), subclassing a solution
class or rebinding its names. Such tests are *untrusted*: the whole test must run inside the solution's
process, which can forge the pass. ``plan_program`` flags them (``ProgramPlan.untrusted``) and the reward
makes them unscorable unless ``untrusted_asserts="run"``, in which case the result says ``trusted: false``.
Names the test uses but does not define come from the solution (e.g. a HumanEval helper such as ``poly``):
the test trusts them by construction.

Stdout comparison: line by line with an exact line count; trailing whitespace per line (incl. ``\\r``) and
trailing empty lines are ignored; leading whitespace and inner blank lines count.
"""

from __future__ import annotations

import ast
import builtins
import functools
import hashlib
import json
import math
import re
import secrets
import sys
from dataclasses import dataclass
from importlib import resources
from typing import Any

from rewardkit.rewards.code.test_formats import AssertTest, CallTest, Checker, StdioTest
from rewardkit.sandboxes.base import Limits, RunRequest, RunResult, RunStatus

SPEC_FILE = "rk_spec.json"
TRUSTED_NAMES = frozenset(dir(builtins)) | frozenset(sys.stdlib_module_names)

#: The in-sandbox harness (``harness_inside.py``, package data) is a module, shipped beside every run as
#: ``rk_harness.py``; the local backend's warm forkserver imports it once, so runs skip compiling it. ``main.py``
#: only starts it.
RUNTIME_MODULE = "rk_harness"
LAUNCHER = f"import os, sys\nsys.path.insert(0, os.getcwd())\nimport {RUNTIME_MODULE}\n{RUNTIME_MODULE}._rk_main()\n"


@functools.cache
def runtime_source() -> str:
    """Source of the harness that runs next to the solution (read once from ``harness_inside.py``)."""
    return resources.files(__package__).joinpath("harness_inside.py").read_text(encoding="utf-8")


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
        if tag == "$complex" and type(body) is list and len(body) == 2:
            real, imag = (decode_plain(v, depth + 1) for v in body)
            if type(real) is float and type(imag) is float:
                return complex(real, imag)
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


def checker_request(checker: Checker, test: StdioTest, stdout: bytes, limits: Limits) -> RunRequest:
    """The special judge's own run: the dataset's checker, the input, the solution's output and the answer."""
    files = {"checker.py": checker.source, "input.txt": test.input, "output.txt": stdout, "answer.txt": test.output}
    return RunRequest(
        argv=["python3", "checker.py", "input.txt", "output.txt", "answer.txt"], files=files, limits=limits
    )


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


def _root_node(node: ast.expr) -> ast.expr:
    while isinstance(node, (ast.Attribute, ast.Call, ast.Subscript)):
        node = node.func if isinstance(node, ast.Call) else node.value
    return node


def _root_name(node: ast.expr) -> str | None:
    root = _root_node(node)
    return root.id if isinstance(root, ast.Name) else None


def solution_names(code: str) -> frozenset[str]:
    """Top-level names a solution defines (empty when it does not parse)."""
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return frozenset()
    names: set[str] = set()
    for statement in tree.body:
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(statement.name)
        elif isinstance(statement, (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.Import, ast.ImportFrom)):
            names |= _bound_names(statement)
    return frozenset(names)


def _tested_names(names: set[str], defined: frozenset[str]) -> set[str]:
    """The solution's names among ``names``. A builtin name counts only when the test names nothing else of
    the solution (MBPP tests a function called ``sum``); otherwise a solution redefining ``len`` or ``abs``
    would take over the test's own glue."""
    user = {n for n in names if n not in TRUSTED_NAMES}
    return user or {n for n in names if n in defined}


@functools.lru_cache(maxsize=4096)  # a GRPO group shares its tests: plan them once (plans are immutable)
def plan_assert(test: AssertTest, defined: frozenset[str] = frozenset()) -> AssertPlan | ProgramPlan:
    """Split ``test`` into values and glue; comprehensions, lambdas, ``:=`` and programs get a :class:`ProgramPlan`."""
    if test.program:
        return plan_program(test.source, defined)
    statement = ast.parse(test.source).body[0]
    names = {n.id for n in ast.walk(statement.test) if isinstance(n, ast.Name)}
    user_names = _tested_names(names, defined)
    modules = tuple(sorted(n for n in names if n in sys.stdlib_module_names and n not in dir(builtins)))
    called = {id(_root_node(n.func)) for n in ast.walk(statement.test) if isinstance(n, ast.Call)}
    for node in ast.walk(statement.test):
        if isinstance(node, (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp, ast.NamedExpr)):
            return plan_program(test.source, defined)
        if isinstance(node, ast.Name) and (
            node.id in DYNAMIC_ACCESS or (node.id in user_names and id(node) not in called)
        ):
            # eval(...), or a solution name passed as a value (map(f, xs), CONST)
            return plan_program(test.source, defined)
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


# --------------------------------------------------------------------------------------------- programs
#: builtins through which a test reaches the solution's names in ways the ``ast`` split cannot see
DYNAMIC_ACCESS = frozenset(
    {"eval", "exec", "compile", "globals", "locals", "vars", "__import__", "getattr", "setattr", "delattr", "hasattr"}
)
MAX_TABLE_ENTRIES = 100_000


@dataclass(frozen=True)
class ProgramPlan:
    """A test program run twice: *record* (next to the solution) and *replay* (trusted, without it).

    ``record`` wraps every maximal expression rooted at a solution name (a *site*, e.g. ``f(i)`` or
    ``Solution().g(x)[0]``) so that the solution's process reports ``(site, inputs) -> result``; ``replay`` is
    the same program with each site replaced by a lookup of that table keyed by the inputs the *trusted*
    process computed. ``untrusted`` says why a program can only be decided next to the solution (or ``None``).
    """

    source: str
    record: str
    replay: str
    modules: tuple[str, ...]
    untrusted: str | None

    @property
    def seed(self) -> int:
        """Seed of the test's private ``random``, the same in both stages (derived from the test itself)."""
        return int.from_bytes(hashlib.sha256(self.source.encode()).digest()[:4], "big")


def _bound_names(tree: ast.AST) -> set[str]:
    bound: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            bound.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, ast.alias):
            bound.add((node.asname or node.name).split(".")[0])
        elif isinstance(node, ast.ExceptHandler) and node.name:
            bound.add(node.name)
    return bound


class _Sites(ast.NodeTransformer):
    """Replaces each maximal solution-rooted expression by ``__rk_rec``/``__rk_replay`` of its glue inputs."""

    def __init__(self, user_names: set[str], replay: bool) -> None:
        self.user_names = user_names
        self.replay = replay
        self.count = 0
        self.problems: list[str] = []

    def visit(self, node: ast.AST) -> ast.AST:
        if isinstance(node, (ast.Name, ast.Attribute, ast.Subscript, ast.Call)) and _root_name(node) in self.user_names:
            if not isinstance(getattr(node, "ctx", ast.Load()), ast.Load):
                self.problems.append(f"assigns to the solution's {_root_name(node)!r}")
                return node
            return self._site(node)
        return super().visit(node)

    def _site(self, node: ast.expr) -> ast.expr:
        site = str(self.count)
        self.count += 1
        parts: list[ast.expr] = []
        chain = self._strip(node, parts)
        inputs = ast.Tuple(parts, ast.Load())
        if self.replay:
            return ast.Call(ast.Name("__rk_replay", ast.Load()), [ast.Constant(site), inputs], [])
        args = ast.arguments([], [ast.arg("__rk_a")], None, [], [], None, [])
        thunk = ast.Lambda(args, chain)
        return ast.Call(ast.Name("__rk_rec", ast.Load()), [ast.Constant(site), inputs, thunk], [])

    def _part(self, expr: ast.expr, parts: list[ast.expr]) -> ast.expr:
        parts.append(self.visit(expr))
        return ast.Subscript(ast.Name("__rk_a", ast.Load()), ast.Constant(len(parts) - 1), ast.Load())

    def _strip(self, node: ast.expr, parts: list[ast.expr]) -> ast.expr:
        if isinstance(node, ast.Call):
            func = self._strip(node.func, parts)
            args = [
                ast.Starred(self._part(a.value, parts), ast.Load())
                if isinstance(a, ast.Starred)
                else self._part(a, parts)
                for a in node.args
            ]
            keywords = [ast.keyword(k.arg, self._part(k.value, parts)) for k in node.keywords]
            return ast.Call(func, args, keywords)
        if isinstance(node, ast.Attribute):
            return ast.Attribute(self._strip(node.value, parts), node.attr, ast.Load())
        if isinstance(node, ast.Subscript):
            value = self._strip(node.value, parts)
            if isinstance(node.slice, ast.Slice):
                bounds = [getattr(node.slice, b) for b in ("lower", "upper", "step")]
                index = ast.Slice(*[None if b is None else self._part(b, parts) for b in bounds])
            elif isinstance(node.slice, ast.Tuple) and any(isinstance(e, ast.Slice) for e in node.slice.elts):
                self.problems.append("multi-dimensional slice of a solution value")
                index = node.slice
            else:
                index = self._part(node.slice, parts)
            return ast.Subscript(value, index, ast.Load())
        return ast.Name(node.id, ast.Load())


def _untrusted_reason(tree: ast.Module, user_names: set[str]) -> str | None:
    """Why ``tree`` can only be decided next to the solution, or ``None`` when record/replay decides it."""
    dynamic = sorted({n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and n.id in DYNAMIC_ACCESS})
    if dynamic:
        return f"reaches names dynamically ({', '.join(dynamic)})"
    solution_like = set(user_names)
    for node in tree.body:  # HumanEval: check(candidate) -> candidate is the solution
        if isinstance(node, ast.FunctionDef) and node.name == "check" and node.args.args:
            solution_like.add(node.args.args[0].arg)
    protected: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Try):
            protected.update(id(n) for statement in node.body for n in ast.walk(statement))
        if isinstance(node, (ast.Global, ast.Nonlocal)) and set(node.names) & solution_like:
            return "rebinds the solution's names"
        if isinstance(node, ast.ClassDef) and any(_root_name(b) in solution_like for b in node.bases):
            return "subclasses the solution's classes"
    for node in ast.walk(tree):
        call = node.value if isinstance(node, ast.Expr) and id(node) not in protected else None
        if isinstance(call, ast.Call) and _root_name(call) in solution_like:
            return "calls the solution for its side effects (result unused)"
    return None


@functools.lru_cache(maxsize=4096)
def plan_program(source: str, defined: frozenset[str] = frozenset()) -> ProgramPlan:
    """Plan a test program (an assert with comprehensions/lambdas, setup lines + asserts, a HumanEval check)."""
    tree = ast.parse(source)
    bound = _bound_names(tree)
    loaded = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    free = loaded - bound
    user_names = _tested_names(free, defined)
    modules = tuple(sorted(n for n in free if n in sys.stdlib_module_names and n not in dir(builtins)))
    sources = []
    problems: list[str] = []
    for replay in (False, True):
        sites = _Sites(user_names, replay)
        transformed = sites.visit(ast.parse(source))  # unparsed to text (and compiled from it): no locations needed
        sources.append(ast.unparse(transformed))
        problems = sites.problems
    untrusted = "; ".join(problems) or _untrusted_reason(tree, user_names)
    for text in (tree, *sources):
        compile(text, "<test>", "exec")  # SyntaxError (e.g. `return` outside a function): the test is unusable
    return ProgramPlan(source, sources[0], sources[1], modules, untrusted or None)


def decode_table(obj: Any) -> dict[str, dict]:
    """Validate the record stage's ``(site, inputs) -> result`` table; raises :class:`PlainValueError`."""
    if type(obj) is not dict or len(obj) > MAX_TABLE_ENTRIES:
        raise PlainValueError("record table is not a mapping of bounded size")
    for key, entry in obj.items():
        if type(key) is not str or type(entry) is not dict or len(entry) != 1:
            raise PlainValueError("malformed record table entry")
        ((tag, body),) = entry.items()
        if tag == "value":
            decode_plain(body)
        elif tag == "raise":
            if type(body) is not str or not body.isidentifier():
                raise PlainValueError("malformed exception name")
        elif tag not in ("object", "opaque") or body is not True:
            raise PlainValueError(f"unknown record table tag {tag!r}")
    return obj


# --------------------------------------------------------------------------------------------- requests
def new_nonce() -> str:
    return "RK" + secrets.token_hex(16)


def _harness_files() -> dict[str, str]:
    return {"main.py": LAUNCHER, f"{RUNTIME_MODULE}.py": runtime_source()}


def _spec_file(spec: dict[str, Any]) -> str:
    return json.dumps(spec)


def python_call_request(code: str, fn_name: str, test: CallTest, nonce: str, limits: Limits) -> RunRequest:
    spec = {"nonce": nonce, "mode": "call", "fn_name": fn_name, "args": list(test.args)}
    files = {**_harness_files(), "solution.py": code, SPEC_FILE: _spec_file(spec)}
    return RunRequest(argv=["python3", "main.py"], files=files, limits=limits)


def python_exprs_request(code: str, plan: AssertPlan, nonce: str, limits: Limits) -> RunRequest:
    spec = {"nonce": nonce, "mode": "exprs", "exprs": list(plan.exprs), "modules": list(plan.modules)}
    files = {**_harness_files(), "solution.py": code, SPEC_FILE: _spec_file(spec)}
    return RunRequest(argv=["python3", "main.py"], files=files, limits=limits)


def python_program_request(code: str, plan: ProgramPlan, nonce: str, limits: Limits, whole: bool) -> RunRequest:
    """Record stage (``whole=False``) or the untrusted whole-program run next to the solution (``whole=True``)."""
    program = plan.source if whole else plan.record
    spec = {
        "nonce": nonce,
        "mode": "whole" if whole else "record",
        "program": program,
        "modules": list(plan.modules),
        "seed": plan.seed,
    }
    files = {**_harness_files(), "solution.py": code, SPEC_FILE: _spec_file(spec)}
    return RunRequest(argv=["python3", "main.py"], files=files, limits=limits)


def _check_entry(plan: AssertPlan | ProgramPlan, values: Any) -> dict[str, Any]:
    if isinstance(plan, ProgramPlan):
        return {"replay": plan.replay, "values": values, "seed": plan.seed}
    return {"source": plan.check, "values": values}


def python_check_request(checks: list[tuple[AssertPlan | ProgramPlan, Any]], nonce: str, limits: Limits) -> RunRequest:
    """The trusted second stage: no solution file, only the glue and the values the solution produced."""
    modules = sorted({m for plan, _ in checks for m in plan.modules})
    spec = {
        "nonce": nonce,
        "mode": "check",
        "modules": modules,
        "checks": [_check_entry(plan, values) for plan, values in checks],
    }
    return RunRequest(
        argv=["python3", "main.py"], files={**_harness_files(), SPEC_FILE: _spec_file(spec)}, limits=limits
    )


def stdio_request(language: str, program: str | bytes, test: StdioTest, limits: Limits) -> RunRequest:
    if language == "python":
        return RunRequest(
            argv=["python3", "solution.py"], files={"solution.py": program}, stdin=test.input, limits=limits
        )
    if language == "javascript":
        return RunRequest(argv=["node", "solution.js"], files={"solution.js": program}, stdin=test.input, limits=limits)
    if language == "java":
        heap = f"-Xmx{limits.memory_mb}m"
        limits = _reserving_runtime(limits, tasks=COMPILER_TASKS)
        argv = ["java", *JVM_FLAGS, heap, "-Xss64m", "-XX:TieredStopAtLevel=1", "-jar", "solution.jar"]
        return RunRequest(argv=argv, files={"solution.jar": program}, stdin=test.input, limits=limits)
    if language == "go":
        limits = _reserving_runtime(limits, tasks=limits.max_processes)
        return RunRequest(argv=["./solution"], files={"solution": program}, stdin=test.input, limits=limits)
    if language in COMPILED:
        return RunRequest(argv=["./solution"], files={"solution": program}, stdin=test.input, limits=limits)
    raise ValueError(f"no stdio runner for {language}")


#: languages compiled once per distinct program; the artefact ``solution`` (a binary, or a jar for Java) is
#: fetched back and handed to every test's run
COMPILED = ("cpp", "java", "go", "rust")
#: what to install (Debian packages) when a compiler is missing from the sandbox
TOOLCHAINS = {
    "cpp": "apt-get install g++",
    "java": "apt-get install default-jdk-headless",
    "go": "apt-get install golang-go",
    "rust": "apt-get install rustc",
}
#: compilers and the JVM start many threads: their runs get this many tasks
COMPILER_TASKS = 64
JAVA_CLASS = re.compile(r"^\s*public\s+(?:final\s+|abstract\s+)*class\s+([A-Za-z_]\w*)", re.MULTILINE)


#: keep the JVM's up-front reservations small enough for an address-space limit
JVM_FLAGS = ("-XX:+UseSerialGC", "-XX:CompressedClassSpaceSize=64m", "-XX:ReservedCodeCacheSize=64m", "-Xshare:auto")


def _reserving_runtime(limits: Limits, tasks: int) -> Limits:
    """The JVM and the Go runtime reserve address space far beyond what they use (like V8): their runs get
    ``memory_mb + 2048`` (the Java heap stays capped at the requested size by ``-Xmx``)."""
    return limits.model_copy(
        update={"memory_mb": limits.memory_mb + 2048, "max_processes": max(limits.max_processes, tasks)}
    )


def java_main_class(code: str) -> str:
    """The public class (its file must be named after it); ``Main`` when none is declared public."""
    match = JAVA_CLASS.search(code)
    return match.group(1) if match else "Main"


def compile_request(language: str, code: str, limits: Limits) -> RunRequest:
    """One sandboxed compile; success leaves ``solution`` to fetch back."""
    limits = limits.model_copy(update={"max_processes": max(limits.max_processes, COMPILER_TASKS)})
    if language == "cpp":
        argv = ["g++", "-O2", "-std=c++17", "-pipe", "-o", "solution", "solution.cpp"]
        return RunRequest(argv=argv, files={"solution.cpp": code}, limits=limits, fetch_files=["solution"])
    if language == "java":
        name = java_main_class(code)
        jvm = " ".join(f"-J{flag}" for flag in (*JVM_FLAGS, "-Xmx512m"))
        script = (
            f"javac {jvm} -encoding UTF-8 -d classes {name}.java"
            f" && printf 'Main-Class: {name}\\n' > manifest && jar {jvm} -cfm solution manifest -C classes ."
        )
        return RunRequest(
            argv=["sh", "-c", script], files={f"{name}.java": code}, limits=limits, fetch_files=["solution"]
        )
    if language == "go":
        # one build job on one OS thread per tool: few threads, so a sandbox that caps tasks (a remote one at its
        # default) still compiles; the Go runtime dies when it cannot start a thread
        script = (
            "export GOCACHE=/tmp/go-cache GOPATH=/tmp/go GO111MODULE=off GOMAXPROCS=1"
            " && go build -p 1 -o solution solution.go"
        )
        return RunRequest(
            argv=["sh", "-c", script], files={"solution.go": code}, limits=limits, fetch_files=["solution"]
        )
    if language == "rust":
        # one codegen unit: few threads, so a sandbox that caps tasks (a remote one at its default) still compiles
        argv = ["rustc", "--edition", "2021", "-O", "-C", "codegen-units=1", "-o", "solution", "solution.rs"]
        return RunRequest(argv=argv, files={"solution.rs": code}, limits=limits, fetch_files=["solution"])
    raise ValueError(f"{language} is not compiled")


def cpp_compile_request(code: str, limits: Limits) -> RunRequest:
    return compile_request("cpp", code, limits)
