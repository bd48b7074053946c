"""Find a row's tests in the columns a dataset ships with, and join body-only completions to their prompt.

``code_tests`` reads its ``tests_column`` (default ``tests``) when the row has it. Otherwise it recognises the
common shapes by their columns, first match wins, and names the shape in every reason:

=====================================  =================================================================
shape                                  columns read (as the dataset ships them)
=====================================  =================================================================
KodCode                                ``test`` / ``test_code``: pytest source with ``from solution import``
HumanEval                              ``test`` (``def check(candidate)``), ``entry_point``, ``prompt``
MBPP                                   ``test_list``, ``test_setup_code``, ``test_imports``
verification_info                      open-r1 and PrimeIntellect verifiable-coding-problems:
                                       ``{"language", "test_cases": [{"type", "input", "output"}]}``
APPS / TACO                            ``input_output``: ``{"inputs", "outputs", "fn_name"?}`` (JSON)
LiveCodeBench                          ``public_test_cases`` / ``private_test_cases`` (JSON lists with
                                       ``testtype`` stdin or functional; ``metadata.func_name``)
CodeContests                           ``public_tests`` / ``private_tests`` / ``generated_tests``
                                       (``{"input": [...], "output": [...]}``)
=====================================  =================================================================

LiveCodeBench ships ``private_test_cases`` compressed with pickle; unpickling dataset text would run code, so
such a column is skipped (the reason says so) and the public tests are used.
"""

from __future__ import annotations

import ast
import json
from collections.abc import Callable, Mapping
from typing import Any, TypeGuard

from rewardsmith.rewards.code import pytest_tests
from rewardsmith.rewards.code.case_formats import BadTestsFormat


def _json(value: Any) -> Any:
    if isinstance(value, (str, bytes)):
        try:
            return json.loads(value)
        except (json.JSONDecodeError, UnicodeDecodeError):
            return None
    return value


def _humaneval(row: Mapping[str, Any]) -> dict | None:
    if isinstance(row.get("test"), str) and isinstance(row.get("entry_point"), str):
        tests = {"test": row["test"], "entry_point": row["entry_point"]}
        if isinstance(row.get("prompt"), str):
            tests["prompt"] = row["prompt"]
        return tests
    return None


def _kodcode(row: Mapping[str, Any]) -> dict | None:
    """KodCode: pytest source in ``test`` (V1) or ``test_code`` (SFT) that imports ``solution``."""
    for column in ("test", "test_code"):
        if pytest_tests.imports_solution(row.get(column)):
            return {"pytest": row[column]}
    return None


def _mbpp_columns(row: Mapping[str, Any]) -> dict | None:
    """MBPP's columns as one tests value; :mod:`rewardsmith.rewards.code.case_formats` parses it (one parser)."""
    if row.get("test_list") is None:
        return None
    keys = ("test_list", "test_setup_code", "test_imports")
    return {k: _as_list(row[k]) if k != "test_setup_code" else row[k] for k in keys if row.get(k) is not None}


def _as_list(value: Any) -> Any:
    return list(value) if isinstance(value, tuple) or type(value).__name__ == "ndarray" else value


def _verification_info(row: Mapping[str, Any]) -> dict | None:
    value = _json(row.get("verification_info"))
    return value if isinstance(value, dict) else None


def _input_output_column(row: Mapping[str, Any]) -> dict | None:
    """APPS/TACO's ``input_output`` JSON, decoded only: :mod:`~rewardsmith.rewards.code.case_formats` parses it."""
    value = _json(row.get("input_output"))
    return value if isinstance(value, dict) and "inputs" in value else None


def _livecodebench(row: Mapping[str, Any]) -> dict | None:
    cases: list = []
    skipped = []
    for column in ("public_test_cases", "private_test_cases"):
        if row.get(column) in (None, "", []):
            continue
        value = _json(row[column])
        if not isinstance(value, list):
            skipped.append(column)
            continue
        cases.extend(value)
    if not cases:
        return None
    tests = livecodebench_tests(cases, row.get("metadata"))
    if skipped:
        tests["$skipped"] = skipped
    return tests


def livecodebench_tests(cases: list, metadata: Any = None) -> dict[str, Any]:
    """LiveCodeBench cases (``testtype`` stdin or functional) as one tests value. The function's name is the row's
    ``metadata.func_name``, or the cases' own (rllm keeps it in each case's ``metadata``)."""
    functional = [c for c in cases if isinstance(c, dict) and c.get("testtype") == "functional"]
    if not functional:
        return {"stdio": [{"input": c.get("input"), "output": c.get("output")} for c in cases if isinstance(c, dict)]}
    names = {_func_name(c.get("metadata")) for c in functional} - {None}
    fn_name = _func_name(metadata) or (names.pop() if len(names) == 1 else None)
    return {
        "fn_name": fn_name,
        "inputs": [c.get("input") for c in functional],
        "outputs": [c.get("output") for c in functional],
    }


def _func_name(metadata: Any) -> str | None:
    metadata = _json(metadata)
    name = metadata.get("func_name") if isinstance(metadata, dict) else None
    return name if isinstance(name, str) else None


def livecodebench_cases(value: Any) -> list | None:
    """A tests value that is a list of LiveCodeBench cases (rllm's ground truth for LiveCodeBench rows)."""
    value = _json(value)
    if isinstance(value, list) and value and all(isinstance(c, dict) and "testtype" in c for c in value):
        return value
    return None


def _codecontests(row: Mapping[str, Any]) -> dict | None:
    stdio = []
    for column in ("public_tests", "private_tests", "generated_tests"):
        value = _json(row.get(column))
        if isinstance(value, dict) and isinstance(value.get("input"), (list, tuple)):
            inputs, outputs = list(value["input"]), list(value.get("output") or [])
            if len(inputs) != len(outputs):  # pairing by position would misalign every later test: refused
                raise BadTestsFormat(f"{column}: {len(inputs)} inputs but {len(outputs)} outputs")
            stdio += [{"input": i, "output": o} for i, o in zip(inputs, outputs, strict=True)]
    return {"stdio": stdio} if stdio else None


LIVECODEBENCH = "LiveCodeBench test cases"

#: (name for reasons, builder) in the order tried; a builder returns the tests or None when its columns are absent
SHAPES: tuple[tuple[str, Callable[[Mapping[str, Any]], dict | None]], ...] = (
    ("KodCode pytest (test)", _kodcode),
    ("HumanEval columns (test, entry_point)", _humaneval),
    ("MBPP columns (test_list)", _mbpp_columns),
    ("verification_info (open-r1 / PrimeIntellect)", _verification_info),
    ("APPS/TACO input_output", _input_output_column),
    (LIVECODEBENCH, _livecodebench),
    ("CodeContests tests", _codecontests),
)


def find_tests(row: Mapping[str, Any], column: str, detect: bool = True) -> tuple[Any, str]:
    """The row's tests and where they came from; raises :class:`BadTestsFormat` naming what was looked for.

    ``column`` wins when present. A value there that is a HumanEval check (plain Python, not JSON) is read
    with the row's ``entry_point``.
    """
    value = row.get(column)
    if value is not None:
        if pytest_tests.imports_solution(value):
            return {"pytest": value}, "KodCode pytest"
        if isinstance(value, str) and _json(value) is None and isinstance(row.get("entry_point"), str):
            return {"test": value, "entry_point": row["entry_point"], "prompt": row.get("prompt")}, "HumanEval check"
        if (cases := livecodebench_cases(value)) is not None:
            return livecodebench_tests(cases, row.get("metadata")), LIVECODEBENCH
        return value, f"column {column!r}"
    if detect:
        for name, build in SHAPES:
            tests = build(row)
            if tests is not None:
                return tests, name
    known = ", ".join(name for name, _ in SHAPES)
    raise BadTestsFormat(f"no tests in column {column!r} and no known dataset shape ({known})")


# --------------------------------------------------------------------------------------------- prompts
def function_prompt(prompt: Any, entry_point: str | None) -> TypeGuard[str]:
    """True when ``prompt`` is Python source that declares ``entry_point`` (HumanEval: signature + docstring)."""
    if not isinstance(prompt, str) or not entry_point:
        return False
    try:
        tree = ast.parse(prompt)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return any(isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)) and s.name == entry_point for s in tree.body)


def defines(code: str, name: str) -> bool:
    """True when ``code`` parses and defines ``name`` at top level (a whole function, not only its body)."""
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return any(
        isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and s.name == name for s in tree.body
    )


def join_body(prompt: str, body: str) -> str:
    """HumanEval's convention: the program is ``prompt + completion`` (the completion is the function body)."""
    return prompt + body
