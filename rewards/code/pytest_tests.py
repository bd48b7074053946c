"""KodCode-style pytest tests: ``from solution import f`` and ``def test_...():`` functions, one program test each.

The test module is rewritten (with ``ast``) into plain programs that run in the trusted process like every other
program test (:mod:`.harness`): the ``solution`` imports are dropped, so the names they brought in are the
solution's names and reach it only through the call-forwarding rounds (``solution.f`` becomes ``f``; ``from
solution import f as g`` becomes ``g = f``); the solution is never imported into the trusted process.
``pytest.raises`` (as a ``with`` block) becomes ``try``/``except``, ``pytest.approx`` a small trusted helper and
``@pytest.mark.parametrize`` with literal values one test per parameter set. Anything else of pytest (fixtures,
other marks, ``pytest.fail`` ...) makes the tests unusable, with the reason: the harness does not run pytest.
"""

from __future__ import annotations

import ast
from typing import Any, TypeGuard

SOLUTION_MODULE = "solution"

#: trusted stand-in for ``pytest.approx`` (numbers and flat sequences of numbers, pytest's default tolerances)
APPROX_HELPER = """
class _PytestApprox:
    def __init__(self, expected, rel=None, abs=None):
        self.expected, self.rel, self.abs = expected, rel, abs

    def _close(self, actual, expected):
        if isinstance(expected, (list, tuple)):
            return (
                isinstance(actual, (list, tuple))
                and len(actual) == len(expected)
                and all(self._close(a, e) for a, e in zip(actual, expected))
            )
        if isinstance(expected, dict):
            return isinstance(actual, dict) and actual.keys() == expected.keys() and all(
                self._close(actual[k], expected[k]) for k in expected
            )
        if isinstance(actual, bool) or not isinstance(actual, (int, float, complex)):
            return actual == expected
        tolerance = max(
            (1e-6 if self.rel is None else self.rel) * abs(expected), 1e-12 if self.abs is None else self.abs
        )
        return actual == expected or abs(actual - expected) <= tolerance

    def __eq__(self, actual):
        return self._close(actual, self.expected)

    def __ne__(self, actual):
        return not self._close(actual, self.expected)

    __hash__ = None
"""


class PytestFormatError(ValueError):
    """The pytest module uses something the trusted harness cannot run (the tests are unusable)."""


def imports_solution(source: Any) -> bool:
    """True when ``source`` is Python that imports the ``solution`` module (KodCode's ``test`` column)."""
    if not isinstance(source, str) or SOLUTION_MODULE not in source:
        return False
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return any(_solution_import(s) for s in tree.body)


def _solution_import(statement: ast.stmt) -> bool:
    if isinstance(statement, ast.ImportFrom):
        return statement.module == SOLUTION_MODULE and not statement.level
    if isinstance(statement, ast.Import):
        return any(a.name == SOLUTION_MODULE for a in statement.names)
    return False


def pytest_programs(source: str) -> list[str]:
    """One program per test (a ``test_`` function, or one parameter set of it); raises :class:`PytestFormatError`."""
    tree = ast.parse(source)
    aliases, module_names, pytest_names = [], set(), set()
    body: list[ast.stmt] = []
    for statement in tree.body:
        if _solution_import(statement) and isinstance(statement, ast.ImportFrom):
            for alias in statement.names:
                if alias.name != "*" and alias.asname and alias.asname != alias.name:
                    aliases.append(ast.parse(f"{alias.asname} = {alias.name}").body[0])
        elif _solution_import(statement) and isinstance(statement, ast.Import):
            module_names |= {a.asname or a.name for a in statement.names if a.name == SOLUTION_MODULE}
        elif isinstance(statement, ast.Import) and any(a.name == "pytest" for a in statement.names):
            pytest_names |= {a.asname or a.name for a in statement.names if a.name == "pytest"}
        elif isinstance(statement, ast.ImportFrom) and statement.module == "pytest":
            raise PytestFormatError("'from pytest import ...' is not supported (the harness does not run pytest)")
        else:
            body.append(statement)
    module = _Rewrite(module_names, pytest_names).visit(ast.Module(body=body, type_ignores=[]))
    calls = []
    for statement in module.body:
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)) and statement.name.startswith("test"):
            calls.extend(_test_calls(statement, pytest_names))
    leftover = sorted({n.id for n in ast.walk(module) if isinstance(n, ast.Name) and n.id in pytest_names})
    if leftover:
        used = sorted(
            {ast.unparse(n) for n in ast.walk(module) if isinstance(n, ast.Attribute) and _is(n, pytest_names)}
        )
        raise PytestFormatError(f"uses {', '.join(used) or 'pytest'} (supported: raises, approx, mark.parametrize)")
    if not calls:
        raise PytestFormatError("no test_ functions")
    module.body = aliases + module.body
    text = APPROX_HELPER + "\n" + ast.unparse(ast.fix_missing_locations(module)) + "\n"
    return [f"{text}\n{call}\n" for call in calls]


def _is(node: ast.expr, names: set[str]) -> TypeGuard[ast.Attribute]:
    return isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in names


class _Rewrite(ast.NodeTransformer):
    """``solution.f`` -> ``f``; ``with pytest.raises(E): body`` -> try/except/else; ``pytest.approx`` -> helper."""

    def __init__(self, module_names: set[str], pytest_names: set[str]) -> None:
        self.module_names, self.pytest_names = module_names, pytest_names

    def visit_Attribute(self, node: ast.Attribute) -> ast.expr:
        if _is(node, self.module_names):
            return ast.copy_location(ast.Name(node.attr, ast.Load()), node)
        if _is(node, self.pytest_names) and node.attr == "approx":
            return ast.copy_location(ast.Name("_PytestApprox", ast.Load()), node)
        self.generic_visit(node)  # transforms the children in place and returns node itself
        return node

    def visit_With(self, node: ast.With) -> ast.stmt:
        self.generic_visit(node)
        item, *rest = node.items
        call = item.context_expr
        if not (isinstance(call, ast.Call) and _is(call.func, self.pytest_names) and call.func.attr == "raises"):
            return node
        if not call.args or item.optional_vars is not None:
            raise PytestFormatError("only 'with pytest.raises(Error):' is supported (no 'as excinfo')")
        body: list[ast.stmt] = [ast.With(rest, node.body)] if rest else node.body
        handler = ast.ExceptHandler(call.args[0], None, [ast.Pass()])
        fail = ast.parse("raise AssertionError('DID NOT RAISE')").body
        return ast.copy_location(ast.Try(body, [handler], fail, []), node)


def _test_calls(function: ast.FunctionDef | ast.AsyncFunctionDef, pytest_names: set[str]) -> list[str]:
    if isinstance(function, ast.AsyncFunctionDef):
        raise PytestFormatError(f"async test {function.name} is not supported")
    parameters = [a.arg for a in function.args.args]
    sets: list[dict[str, str]] = [{}]
    kept = []
    for decorator in function.decorator_list:
        names_values = _parametrize(decorator, pytest_names)
        if names_values is None:
            kept.append(decorator)
            continue
        names, rows = names_values
        sets = [{**s, **dict(zip(names, row, strict=True))} for s in sets for row in rows]
    function.decorator_list = kept
    if kept:
        raise PytestFormatError(f"test {function.name} has decorators other than pytest.mark.parametrize")
    missing = [p for p in parameters if any(p not in s for s in sets)]
    if missing:
        raise PytestFormatError(f"test {function.name} needs fixtures ({', '.join(missing)}), which are not supported")
    return [f"{function.name}({', '.join(f'{k}={v}' for k, v in s.items() if k in parameters)})" for s in sets]


def _parametrize(decorator: ast.expr, pytest_names: set[str]) -> tuple[list[str], list[list[str]]] | None:
    """``@pytest.mark.parametrize("a, b", [(1, 2), ...])``: the names and each row's argument sources."""
    if not isinstance(decorator, ast.Call):
        return None
    func = decorator.func
    if not (
        isinstance(func, ast.Attribute)
        and func.attr == "parametrize"
        and isinstance(func.value, ast.Attribute)
        and func.value.attr == "mark"
        and isinstance(func.value.value, ast.Name)
        and func.value.value.id in pytest_names
    ):
        return None
    values = decorator.args[1] if len(decorator.args) >= 2 else None
    if not isinstance(values, (ast.List, ast.Tuple)):
        raise PytestFormatError("pytest.mark.parametrize needs names and a literal list of values")
    spec = decorator.args[0]
    if isinstance(spec, ast.Constant) and isinstance(spec.value, str):
        names = [n.strip() for n in spec.value.split(",") if n.strip()]
    elif isinstance(spec, (ast.List, ast.Tuple)) and all(isinstance(e, ast.Constant) for e in spec.elts):
        names = [str(e.value) for e in spec.elts if isinstance(e, ast.Constant)]  # all are (checked above)
    else:
        raise PytestFormatError("pytest.mark.parametrize names must be a literal")
    rows = []
    for element in values.elts:
        if len(names) == 1:
            rows.append([ast.unparse(element)])
        elif isinstance(element, (ast.Tuple, ast.List)) and len(element.elts) == len(names):
            rows.append([ast.unparse(e) for e in element.elts])
        else:
            raise PytestFormatError("a pytest.mark.parametrize row does not match its names")
    return names, rows
