"""Every accepted test format, parsed into one internal model (:class:`TestSuite`).

Accepted (a dict or its JSON string):

==========================  =========================================================================  ===========
format                      shape                                                                      kind
==========================  =========================================================================  ===========
asserts                     ``{"language": "python", "asserts": ["assert f(1) == 2", ...]}``           asserts
HumanEval ``check``         ``{"test" | "check": "def check(candidate): ...", "entry_point": "f"}``    asserts
MBPP                        ``{"test_list": [...], "test_setup_code": "...", "test_imports": [...]}``  asserts
KodCode pytest              ``{"pytest" | "test": "from solution import f\ndef test_f(): ..."}``        asserts
stdio                       ``{"language": ..., "stdio": [{"input": "...", "output": "..."}]}``        stdio
calls                       ``{"language": "python", "fn_name": "f",                                   calls
                            "calls": [{"args": [...], "expected": ...}]}``
open-r1 verification_info   ``{"language": ..., "test_cases": [{"input", "output"}]}``                 stdio
PrimeIntellect              ``{"test_cases": [{"type": "function_call", "fn_name", "input", "output"}]}``  calls
APPS / LiveCodeBench        ``{"inputs": [...], "outputs": [...]}`` (+ ``"fn_name"`` → calls)          stdio/calls
==========================  =========================================================================  ===========

An ``asserts`` entry holding several assert statements becomes one test per assert; an entry that also holds
other statements (setup lines) is one *program* test, as is a whole HumanEval ``check`` (run as
``check(<entry_point>)``; ``fn_name`` is accepted for ``entry_point``; a HumanEval ``prompt`` supplies the
helpers the check calls, minus the entry point itself). A KodCode pytest module gives one program test per test
pytest would collect (functions, ``Test*`` and ``unittest.TestCase`` methods, each parameter set), or is refused
whole when it uses a construct the trusted harness cannot reproduce exactly, see :mod:`.pytest_tests`.
"""

from __future__ import annotations

import ast
import functools
import json
from dataclasses import dataclass, field
from typing import Any

from rewardsmith.rewards.code import pytest_tests

LANGUAGE_ALIASES = {
    "python": "python",
    "python3": "python",
    "py": "python",
    "cpp": "cpp",
    "c++": "cpp",
    "cxx": "cpp",
    "cc": "cpp",
    "javascript": "javascript",
    "js": "javascript",
    "node": "javascript",
    "nodejs": "javascript",
}
LANGUAGE_ALIASES.update({"java": "java", "go": "go", "golang": "go", "rust": "rust", "rs": "rust"})
SUPPORTED = {
    "python": {"asserts", "stdio", "calls"},
    "cpp": {"stdio"},
    "javascript": {"stdio"},
    "java": {"stdio"},
    "go": {"stdio"},
    "rust": {"stdio"},
}


class BadTestsFormat(ValueError):
    """The tests value matches no accepted format (the sample is unscorable, not wrong)."""


@dataclass(frozen=True)
class StdioTest:
    input: str
    output: str


@dataclass(frozen=True)
class CallTest:
    args: tuple
    expected: Any
    #: expected came from JSON: tuples and lists are the same, and ``[x]`` also accepts ``x`` (APPS convention)
    from_json: bool = True
    apps_unwrap: bool = False


@dataclass(frozen=True)
class AssertTest:
    source: str
    #: True when ``source`` is a program (statements besides one assert), e.g. setup lines or a HumanEval check
    program: bool = False


@dataclass(frozen=True)
class Checker:
    """How a stdio test's output is judged when exact lines are too strict (a "special judge").

    ``tokens``: whitespace-separated tokens equal. ``float``: tokens equal, numbers the expected output writes as
    floats (``0.5``, ``1e-9``) within ``abs_tol`` or ``rel_tol``; integers, ``nan``, ``inf`` exactly
    (:mod:`.stdout_match`). ``program``: a Python checker from the dataset, run in its own sandboxed process that
    never sees the solution (``python3 checker.py input.txt output.txt answer.txt``, testlib's order; exit 0 accepts).
    """

    kind: str  # "tokens" | "float" | "program"
    abs_tol: float = 1e-6
    rel_tol: float = 1e-6
    source: str = ""


@dataclass(frozen=True)
class TestSuite:
    language: str
    kind: str  # "stdio" | "calls" | "asserts"
    tests: tuple = field(default_factory=tuple)
    fn_name: str | None = None
    checker: Checker | None = None

    def __len__(self) -> int:
        return len(self.tests)


def normalize_language(name: Any) -> str:
    key = str(name or "").strip().lower()
    if key not in LANGUAGE_ALIASES:
        raise BadTestsFormat(f"unsupported language {name!r} (supported: {', '.join(SUPPORTED)})")
    return LANGUAGE_ALIASES[key]


def parse_tests(value: Any, default_language: str = "python") -> TestSuite:
    """Parse one sample's tests; raises :class:`BadTestsFormat` with a readable reason."""
    if isinstance(value, (str, bytes)):
        try:
            value = json.loads(value)
        except json.JSONDecodeError as exc:
            raise BadTestsFormat(f"tests are not valid JSON: {exc}") from None
    if not isinstance(value, dict):
        raise BadTestsFormat(f"tests must be a mapping, got {type(value).__name__}")
    language = normalize_language(value.get("language") or default_language)
    if "asserts" in value:
        suite = TestSuite(language, "asserts", tuple(_asserts(value["asserts"])))
    elif "pytest" in value or pytest_tests.imports_solution(value.get("test")):
        suite = TestSuite(language, "asserts", _pytest(value.get("pytest") or value.get("test")))
    elif "test_list" in value:
        suite = TestSuite(language, "asserts", tuple(_mbpp(value)))
    elif _is_check(value):
        suite = TestSuite(language, "asserts", (_check_program(value),))
    elif "calls" in value:
        suite = TestSuite(language, "calls", tuple(_calls(value["calls"])), _fn_name(value))
    elif "stdio" in value:
        suite = TestSuite(language, "stdio", tuple(_stdio(value["stdio"], "stdio")))
    elif "test_cases" in value and _function_calls(value["test_cases"]):
        suite = _function_call_cases(value["test_cases"], language)
    elif "test_cases" in value:
        suite = TestSuite(language, "stdio", tuple(_stdio(value["test_cases"], "test_cases")))
    elif "inputs" in value and "outputs" in value:
        suite = _input_output(value, language)
    else:
        raise BadTestsFormat(f"unrecognised tests format with keys {sorted(value)}")
    if value.get("checker") is not None:
        if suite.kind != "stdio":
            raise BadTestsFormat("a checker applies to stdio tests only")
        suite = TestSuite(suite.language, suite.kind, suite.tests, suite.fn_name, _checker(value["checker"]))
    if not suite.tests:
        raise BadTestsFormat("no tests")
    if suite.kind not in SUPPORTED[language]:
        raise BadTestsFormat(f"{suite.kind} tests are not supported for {language}")
    return suite


def _checker(value: Any) -> Checker:
    """``"tokens"``, ``"float"``, ``{"type": "float", "abs_tol": ..., "rel_tol": ...}`` or
    ``{"type": "program", "language": "python", "source": "..."}``."""
    spec = {"type": value} if isinstance(value, str) else value
    if not isinstance(spec, dict) or spec.get("type") not in ("tokens", "float", "program"):
        raise BadTestsFormat(f"checker must be 'tokens', 'float' or a program, got {value!r}")
    if spec["type"] == "program":
        if normalize_language(spec.get("language") or "python") != "python" or not isinstance(spec.get("source"), str):
            raise BadTestsFormat("a checker program must be Python source ('language': 'python', 'source': ...)")
        _parse(spec["source"], "checker")
        return Checker("program", source=spec["source"])
    try:
        abs_tol, rel_tol = float(spec.get("abs_tol", 1e-6)), float(spec.get("rel_tol", 1e-6))
    except (TypeError, ValueError):
        raise BadTestsFormat("checker tolerances must be numbers") from None
    if not (abs_tol >= 0 and rel_tol >= 0):
        raise BadTestsFormat("checker tolerances must be non-negative")
    return Checker(spec["type"], abs_tol, rel_tol)


def _is_check(value: dict) -> bool:
    source = value.get("check") or value.get("test")
    return isinstance(source, str) and bool(value.get("entry_point") or value.get("fn_name"))


def _fn_name(value: dict) -> str:
    name = value.get("fn_name")
    if not isinstance(name, str) or not name.isidentifier():
        raise BadTestsFormat(f"call tests need a valid 'fn_name', got {name!r}")
    return name


def _asserts(items: Any, setup: str = "") -> list[AssertTest]:
    if isinstance(items, str):
        items = [items]
    if not isinstance(items, list) or not all(isinstance(i, str) for i in items):
        raise BadTestsFormat("'asserts' must be a list of strings")
    tests = []
    for entry in items:
        source = entry.strip()
        tree = _parse(source, "assert")
        if not any(isinstance(node, ast.Assert) for node in ast.walk(tree)):
            raise BadTestsFormat(f"each entry needs an assert statement: {entry!r}")
        if setup:
            tests.append(AssertTest(f"{setup}\n{source}", program=True))
        elif all(isinstance(statement, ast.Assert) for statement in tree.body):
            tests.extend(AssertTest(ast.get_source_segment(source, s) or ast.unparse(s)) for s in tree.body)
        else:
            tests.append(AssertTest(source, program=True))
    return tests


@functools.lru_cache(maxsize=4096)
def _pytest(source: Any) -> tuple[AssertTest, ...]:
    """KodCode: a pytest module importing ``solution``; each ``test_`` function (parameter set) one program test."""
    if not isinstance(source, str):
        raise BadTestsFormat("'pytest' must be the test module's source")
    _parse(source, "pytest module")
    try:
        return tuple(AssertTest(program, program=True) for program in pytest_tests.pytest_programs(source))
    except pytest_tests.PytestFormatError as exc:
        raise BadTestsFormat(f"pytest tests: {exc}") from None


def _mbpp(value: dict) -> list[AssertTest]:
    imports, setup = value.get("test_imports") or [], value.get("test_setup_code") or ""
    if not isinstance(imports, list) or not all(isinstance(i, str) for i in imports) or not isinstance(setup, str):
        raise BadTestsFormat("'test_imports' must be a list of strings and 'test_setup_code' a string")
    prefix = "\n".join([*imports, setup]).strip()
    if prefix:
        _parse(prefix, "test setup")
    return _asserts(value["test_list"], prefix)


def _check_program(value: dict) -> AssertTest:
    """HumanEval/MBPP+ style: ``def check(candidate): ...`` run as ``check(<entry_point>)``."""
    source = value.get("check") or value.get("test")
    name = value.get("entry_point") or value.get("fn_name")
    if not isinstance(name, str) or not name.isidentifier():
        raise BadTestsFormat(f"check tests need a valid 'entry_point', got {name!r}")
    prompt = value.get("prompt")
    return _check_test(source, name, prompt if isinstance(prompt, str) else "")


@functools.lru_cache(maxsize=4096)  # a GRPO group, and every epoch, scores the same row again: parse it once
def _check_test(source: str, name: str, prompt: str) -> AssertTest:
    tree = _parse(source, "check")
    if not any(isinstance(s, ast.FunctionDef) and s.name == "check" for s in tree.body):
        raise BadTestsFormat("check tests must define 'def check(candidate)'")
    return AssertTest(f"{_prompt_helpers(prompt, name)}{source.rstrip()}\n\ncheck({name})\n", program=True)


def _prompt_helpers(prompt: str, entry_point: str) -> str:
    """HumanEval ``prompt`` minus the entry point's stub: helpers the check uses (``poly``) come from the
    dataset, not from the solution, which could otherwise redefine them to pass."""
    if not prompt.strip():
        return ""
    tree = _parse(prompt, "prompt")
    tree.body = [s for s in tree.body if not (isinstance(s, ast.FunctionDef) and s.name == entry_point)]
    return ast.unparse(tree) + "\n\n" if tree.body else ""


def _parse(source: str, what: str) -> ast.Module:
    try:
        return ast.parse(source)
    except SyntaxError as exc:
        raise BadTestsFormat(f"{what} is not valid Python: {source[:80]!r} ({exc.msg})") from None


def _calls(items: Any) -> list[CallTest]:
    if not isinstance(items, list):
        raise BadTestsFormat("'calls' must be a list")
    tests = []
    for item in items:
        if not isinstance(item, dict) or "args" not in item or "expected" not in item:
            raise BadTestsFormat("each call needs 'args' and 'expected'")
        args = item["args"]
        if not isinstance(args, (list, tuple)):
            raise BadTestsFormat(f"'args' must be a list, got {type(args).__name__}")
        tests.append(CallTest(tuple(args), item["expected"], from_json=True))
    return tests


def _stdio(items: Any, key: str) -> list[StdioTest]:
    if not isinstance(items, list):
        raise BadTestsFormat(f"{key!r} must be a list")
    tests = []
    for item in items:
        if not isinstance(item, dict) or "input" not in item or "output" not in item:
            raise BadTestsFormat(f"each {key} entry needs 'input' and 'output'")
        if item.get("type", "stdin_stdout") not in ("stdin_stdout", "stdin", "stdio"):
            raise BadTestsFormat(f"unsupported test case type {item.get('type')!r}")
        tests.append(StdioTest(_input_text(item["input"]), _text(item["output"])))
    return tests


def _function_calls(items: Any) -> bool:
    return (
        isinstance(items, list)
        and bool(items)
        and all(isinstance(i, dict) and i.get("type") == "function_call" for i in items)
    )


def _function_call_cases(items: list[dict], language: str) -> TestSuite:
    """PrimeIntellect ``{"type": "function_call", "fn_name", "input": [args], "output": [result]}`` cases."""
    names = {i.get("fn_name") for i in items}
    if len(names) != 1:
        raise BadTestsFormat(f"function_call test cases name {len(names)} functions")
    inputs, outputs = [i.get("input") for i in items], [i.get("output") for i in items]
    value = {"fn_name": names.pop(), "inputs": inputs, "outputs": outputs}
    return _input_output(value, language)


def _input_output(value: dict, language: str) -> TestSuite:
    inputs, outputs = value["inputs"], value["outputs"]
    if not isinstance(inputs, list) or not isinstance(outputs, list):
        raise BadTestsFormat("'inputs' and 'outputs' must be lists")
    if len(inputs) != len(outputs):  # pairing by position would misalign every test after the missing one
        raise BadTestsFormat(f"'inputs' and 'outputs' differ in length ({len(inputs)} and {len(outputs)})")
    if value.get("fn_name"):
        name = _fn_name(value)
        tests: list[CallTest] = []
        for args, expected in zip(inputs, outputs, strict=True):
            if isinstance(args, str):  # LiveCodeBench functional: one JSON value per line
                try:
                    args = [json.loads(line) for line in args.splitlines() if line.strip()]
                except json.JSONDecodeError as exc:
                    raise BadTestsFormat(f"functional input is not JSON lines: {exc}") from None
            if isinstance(expected, str):
                try:
                    expected = json.loads(expected)
                except json.JSONDecodeError:
                    pass
            if not isinstance(args, list):
                raise BadTestsFormat("call inputs must be argument lists")
            tests.append(CallTest(tuple(args), expected, from_json=True, apps_unwrap=True))
        return TestSuite(language, "calls", tuple(tests), name)
    stdio = tuple(StdioTest(_input_text(i), _text(o)) for i, o in zip(inputs, outputs, strict=True))
    return TestSuite(language, "stdio", stdio)


def _text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, list) and all(isinstance(v, str) for v in value):  # APPS: a list of lines
        return "\n".join(value) + "\n"
    raise BadTestsFormat(f"stdio input/output must be text, got {type(value).__name__}")


def _input_text(value: Any) -> str:
    """A stdio input; ``None`` is empty input, as APPS/TACO and LiveCodeBench harnesses treat it (a problem that
    reads nothing)."""
    return "" if value is None else _text(value)
