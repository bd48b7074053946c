"""KodCode-style pytest tests: ``from solution import f`` and ``def test_...():`` functions, one program test each.

The test module is rewritten (with ``ast``) into plain programs that run in the trusted process like every other
program test (:mod:`.harness`): the ``solution`` imports are dropped, so the names they brought in are the
solution's names and reach it only through the call-forwarding rounds (``solution.f`` becomes ``f``; ``from
solution import f as g`` becomes ``g = f``); the solution is never imported into the trusted process.

Every test pytest would collect becomes exactly one program, or the whole module is refused (the sample is
unscorable, the reason naming the construct): a test is never dropped and never checked more loosely than pytest
checks it. Translated exactly:

- module-level ``test*`` functions; ``Test*`` classes (no ``__init__``, no base class) with their ``test*``
  methods, ``setup_method`` and ``teardown_method``; ``unittest.TestCase`` subclasses with ``setUp``/``tearDown``;
- ``@pytest.mark.parametrize`` with literal rows (stacked: the product), ``@pytest.mark.skip`` (the test is not
  counted, as pytest counts it);
- ``with pytest.raises(E):`` for builtin exception classes ``E`` (the harness reports a solution's exception by its
  exact builtin type, so only those can be matched); ``pytest.approx`` (:mod:`.pytest_approx`);
- ``if __name__ == "__main__":`` blocks are left out: pytest imports the module under its own name, so they never
  run there either.

Refused: fixtures (a parameter no parametrize row supplies, ``@pytest.fixture``, ``capsys``, ``tmp_path`` ...),
other marks, ``pytest.raises`` with ``match=`` or ``as excinfo`` (the solution's exception message does not cross
to the trusted process), other pytest functions, async and generator tests, tests defined under a module-level
``if``/``try``/loop, and what only one shared process can reproduce (:data:`ENVIRONMENT`): files and the working
directory, stdin/stdout capture, ``mock``, clocks and timing, seeding the shared ``random``, identity (``is``) of
values that crossed from the solution's process, modules outside the standard library.
"""

from __future__ import annotations

import ast
import builtins
import sys
from typing import Any, TypeGuard

from rewardsmith.rewards.code.pytest_approx import APPROX_HELPER

SOLUTION_MODULE = "solution"

#: what a test reaches that only pytest's single process shares with the solution: name or dotted name -> why
ENVIRONMENT = {
    "open": "files (the solution runs in another process and directory)",
    "input": "stdin",
    "os": "the file system and environment",
    "pathlib": "the file system",
    "shutil": "the file system",
    "tempfile": "the file system",
    "glob": "the file system",
    "fileinput": "the file system",
    "timeit": "timing the solution",
    "time.time": "timing the solution",
    "time.perf_counter": "timing the solution",
    "time.monotonic": "timing the solution",
    "time.process_time": "timing the solution",
    "time.time_ns": "timing the solution",
    "time.perf_counter_ns": "timing the solution",
    "time.monotonic_ns": "timing the solution",
    "time.process_time_ns": "timing the solution",
    "random.seed": "seeding the random module the solution shares",
    "random.setstate": "seeding the random module the solution shares",
    "sys.stdin": "stdin",
    "sys.stdout": "stdout capture",
    "sys.stderr": "stderr capture",
    "sys.argv": "the command line",
    "sys.modules": "the solution's module",
    "sys.path": "imports",
    "sys.setrecursionlimit": "the solution's recursion limit",
    "sys.settrace": "tracing the solution",
    "sys.setprofile": "tracing the solution",
    "redirect_stdout": "stdout capture",
    "redirect_stderr": "stdout capture",
    "contextlib.redirect_stdout": "stdout capture",
    "contextlib.redirect_stderr": "stdout capture",
    "mock": "mocking inside the solution",
    "unittest.mock": "mocking inside the solution",
    "patch": "mocking inside the solution",
    "subprocess": "other processes",
    "multiprocessing": "other processes",
    "threading": "threads around the solution",
    "concurrent": "threads around the solution",
    "signal": "signals and alarms around the solution",
    "resource": "the solution's resources",
    "tracemalloc": "measuring the solution's memory",
    "gc": "the solution's objects",
    "inspect": "inspecting the solution's code",
    "importlib": "importing the solution",
    "warnings": "warnings the solution emits",
    "logging": "logs the solution writes",
}
#: ``unittest.TestCase`` methods whose result depends on what does not cross from the solution's process
UNITTEST_REFUSED = {
    "assertRaisesRegex": "the solution's exception message",
    "assertRaisesRegexp": "the solution's exception message",
    "assertWarns": "warnings the solution emits",
    "assertWarnsRegex": "warnings the solution emits",
    "assertLogs": "logs the solution writes",
    "assertNoLogs": "logs the solution writes",
    "skipTest": "skipping at run time",
    "subTest": "subtests (pytest counts each one)",
    "addCleanup": "cleanups",
    "addClassCleanup": "cleanups",
    "enterContext": "cleanups",
    "doCleanups": "cleanups",
}
PYTEST_CLASS_HOOKS = {"setup_method", "teardown_method"}
UNITTEST_HOOKS = {"setUp", "tearDown"}
#: hooks that run once per class or module (state shared between tests) or whose calling depends on the version
REFUSED_HOOKS = {
    "setup_class",
    "teardown_class",
    "setup",
    "teardown",
    "setup_module",
    "teardown_module",
    "setup_function",
    "teardown_function",
    "setUpClass",
    "tearDownClass",
    "setUpModule",
    "tearDownModule",
    "__init__",
    "__new__",
    "run",
    "__call__",
}
BUILTIN_EXCEPTIONS = frozenset(
    name
    for name in dir(builtins)
    if isinstance(getattr(builtins, name), type) and issubclass(getattr(builtins, name), BaseException)
)

CALL_HOOK = """
def _rk_call_hook(hook, method):
    import types
    count = hook.__code__.co_argcount - (1 if isinstance(hook, types.MethodType) else 0)
    return hook(method) if count else hook()
"""


class PytestFormatError(ValueError):
    """The pytest module uses something the trusted harness cannot reproduce exactly (the tests are unusable)."""


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


def _main_guard(statement: ast.stmt) -> bool:
    """``if __name__ == "__main__":`` (either operand order): dead code when pytest imports the module."""
    if not isinstance(statement, ast.If) or statement.orelse:
        return False
    test = statement.test
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq)):
        return False
    sides = {ast.unparse(test.left), ast.unparse(test.comparators[0])}
    return sides == {"__name__", "'__main__'"}


def pytest_programs(source: str) -> list[str]:
    """One program per test pytest would collect (per parameter set); raises :class:`PytestFormatError`."""
    tree = ast.parse(source)
    aliases, module_names, pytest_names = [], set(), set()
    body: list[ast.stmt] = []
    for statement in tree.body:
        if _main_guard(statement):
            continue
        if _solution_import(statement) and isinstance(statement, ast.ImportFrom):
            for alias in statement.names:
                if alias.name != "*" and alias.asname and alias.asname != alias.name:
                    aliases.append(ast.parse(f"{alias.asname} = {alias.name}").body[0])
                elif alias.name != "*":
                    # pytest's import fails (every test with it) when the solution lacks the name: ask for it
                    aliases.append(ast.parse(f"_rk_imported = {alias.name}").body[0])
        elif _solution_import(statement) and isinstance(statement, ast.Import):
            if any(a.name != SOLUTION_MODULE for a in statement.names):
                raise PytestFormatError("'import solution' together with other modules in one statement")
            module_names |= {a.asname or a.name for a in statement.names}
        elif isinstance(statement, ast.Import) and any(a.name == "pytest" for a in statement.names):
            if any(a.name != "pytest" for a in statement.names):
                raise PytestFormatError("'import pytest' together with other modules in one statement")
            pytest_names |= {a.asname or a.name for a in statement.names}
        elif isinstance(statement, ast.ImportFrom) and statement.module == "pytest":
            raise PytestFormatError("'from pytest import ...' is not supported (the harness does not run pytest)")
        else:
            body.append(statement)
    module = ast.Module(body=body, type_ignores=[])
    _refuse_environment(module)
    unittest_bases = _unittest_bases(module)
    module = _Rewrite(module_names, pytest_names).visit(module)
    tests: dict[str, list[str]] = {}  # pytest collects the module's final binding of each name, once
    rebound: set[str] = set()
    for statement in module.body:
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)) and statement.name.startswith("test"):
            tests[statement.name] = [f"{statement.name}({args})" for args in _test_calls(statement, pytest_names, 0)]
        elif isinstance(statement, ast.ClassDef) and _test_class(statement, unittest_bases):
            tests[statement.name] = _class_calls(statement, pytest_names, unittest_bases)
        else:
            rebound |= _hidden_tests(statement)
    if rebound:
        raise PytestFormatError(
            f"test names bound other than by a top-level def or class ({', '.join(sorted(rebound))})"
        )
    leftover = sorted({n.id for n in ast.walk(module) if isinstance(n, ast.Name) and n.id in pytest_names})
    if leftover:
        used = sorted(
            {ast.unparse(n) for n in ast.walk(module) if isinstance(n, ast.Attribute) and _is(n, pytest_names)}
        )
        raise PytestFormatError(
            f"uses {', '.join(used) or 'pytest'} (supported: raises, approx, mark.parametrize, mark.skip)"
        )
    calls = [call for group in tests.values() for call in group]
    if not calls:
        raise PytestFormatError("no test_ functions")
    module.body = aliases + module.body
    text = APPROX_HELPER + CALL_HOOK + "\n" + ast.unparse(ast.fix_missing_locations(module)) + "\n"
    return [f"{text}\n{call}\n" for call in calls]


def _is(node: ast.expr, names: set[str]) -> TypeGuard[ast.Attribute]:
    return isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in names


def _dotted(node: ast.expr) -> str | None:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(node.id)
    return ".".join(reversed(parts))


def _refuse_environment(module: ast.Module) -> None:
    """Refuse what pytest's one process shares between the test and the solution and the harness cannot."""
    bound = {n.id for n in ast.walk(module) if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load)}
    bound |= {a.arg for a in ast.walk(module) if isinstance(a, ast.arg)}
    for node in ast.walk(module):
        names: list[str] = []
        if isinstance(node, ast.Import):
            for alias in node.names:
                _check_module(alias.name)
                names.append(alias.name)
        elif isinstance(node, ast.ImportFrom):
            if node.level or not node.module:
                raise PytestFormatError("relative imports (the trusted check has the standard library only)")
            _check_module(node.module)
            names += [node.module] + [f"{node.module}.{a.name}" for a in node.names] + [a.name for a in node.names]
        elif isinstance(node, ast.Name):
            names.append(node.id)
        elif isinstance(node, ast.Attribute):
            dotted = _dotted(node)
            names += [dotted] if dotted else []
            if node.attr in UNITTEST_REFUSED:
                raise PytestFormatError(f"uses {node.attr} ({UNITTEST_REFUSED[node.attr]} cannot be reproduced)")
        elif isinstance(node, ast.ExceptHandler) and node.name:
            used = any(isinstance(n, ast.Name) and n.id == node.name for s in node.body for n in ast.walk(s))
            if used:
                raise PytestFormatError(
                    f"reads a caught exception ('except ... as {node.name}'): the solution's exception message does "
                    "not reach the trusted check"
                )
        elif isinstance(node, ast.Compare) and any(isinstance(op, (ast.Is, ast.IsNot)) for op in node.ops):
            operands = [node.left, *node.comparators]
            if not any(isinstance(o, ast.Constant) and o.value in (None, True, False, ...) for o in operands):
                raise PytestFormatError("compares identity with 'is' (values cross from the solution as copies)")
        elif isinstance(node, ast.With):
            for item in node.items:
                call = item.context_expr
                if (
                    isinstance(call, ast.Call)
                    and isinstance(call.func, ast.Attribute)
                    and call.func.attr == "assertRaises"
                    and item.optional_vars is not None
                ):
                    raise PytestFormatError(
                        "uses 'with self.assertRaises(...) as cm' (the solution's exception does not cross)"
                    )
        for name in names:
            root = name.split(".")[0]
            for key in (name, root):
                if key in ENVIRONMENT and (root not in bound or isinstance(node, (ast.Import, ast.ImportFrom))):
                    raise PytestFormatError(f"uses {key} ({ENVIRONMENT[key]} cannot be reproduced outside pytest)")


def _check_module(name: str) -> None:
    root = name.split(".")[0]
    if root == SOLUTION_MODULE:
        raise PytestFormatError(f"imports {name} below the top level or from a submodule (not translated)")
    if root not in sys.stdlib_module_names and root != "pytest":
        raise PytestFormatError(f"imports {name} (the trusted check has the standard library only)")


def _unittest_bases(module: ast.Module) -> set[str]:
    """Spellings of ``unittest.TestCase`` in this module (``unittest.TestCase``, ``TestCase``, aliases)."""
    bases = set()
    for node in ast.walk(module):
        if isinstance(node, ast.Import):
            bases |= {f"{a.asname or a.name}.TestCase" for a in node.names if a.name == "unittest"}
        elif isinstance(node, ast.ImportFrom) and node.module == "unittest":
            bases |= {a.asname or a.name for a in node.names if a.name == "TestCase"}
    return bases


def _test_class(cls: ast.ClassDef, unittest_bases: set[str]) -> bool:
    """Whether pytest collects ``cls``: a ``Test*`` class, or any ``unittest.TestCase`` subclass."""
    bases = [ast.unparse(b) for b in cls.bases]
    return cls.name.startswith("Test") or any(b in unittest_bases for b in bases)


def _hidden_tests(statement: ast.stmt) -> set[str]:
    """Test names a module-level statement binds that pytest would collect but a top-level scan does not see:
    defs under ``if``/``try``/``with``/loops, and ``test_x = other_function``."""
    if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return set()
    if isinstance(statement, (ast.Import, ast.ImportFrom)):  # ``from heapq import merge as test_merge``
        bound = {(a.asname or a.name).split(".")[0] for a in statement.names}
        return {name for name in bound if name.startswith(("test", "Test"))}
    found = set()
    for node in ast.walk(statement):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.name.startswith(
            "Test" if isinstance(node, ast.ClassDef) else "test"
        ):
            found.add(node.name)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store) and node.id.startswith(("test", "Test")):
            value = getattr(statement, "value", None)
            if not isinstance(statement, (ast.Assign, ast.AnnAssign)) or not _plain_data(value):
                found.add(node.id)
    return found


def _plain_data(value: ast.expr | None) -> bool:
    """A literal-looking value (a list of cases, a number): never a function pytest could collect."""
    return isinstance(value, (ast.Constant, ast.List, ast.Tuple, ast.Dict, ast.Set, ast.ListComp, ast.DictComp))


def _class_calls(cls: ast.ClassDef, pytest_names: set[str], unittest_bases: set[str]) -> list[str]:
    bases = [ast.unparse(b) for b in cls.bases]
    unittest = bool(bases) and all(b in unittest_bases for b in bases)
    if bases and not unittest and bases != ["object"]:
        raise PytestFormatError(f"test class {cls.name} has base classes ({', '.join(bases)})")
    if cls.decorator_list or cls.keywords:
        raise PytestFormatError(f"test class {cls.name} has decorators or class keywords")
    methods: dict[str, ast.FunctionDef] = {}
    for statement in cls.body:
        if isinstance(statement, ast.AsyncFunctionDef):
            raise PytestFormatError(f"async method {cls.name}.{statement.name}")
        if isinstance(statement, ast.ClassDef):
            raise PytestFormatError(f"class {statement.name} nested in test class {cls.name}")
        if isinstance(statement, ast.FunctionDef):
            if statement.name in REFUSED_HOOKS:
                raise PytestFormatError(f"test class {cls.name} defines {statement.name}")
            methods[statement.name] = statement
        elif not isinstance(statement, (ast.Expr, ast.Assign, ast.AnnAssign, ast.Pass)):
            raise PytestFormatError(f"test class {cls.name} has a {type(statement).__name__} statement in its body")
        else:
            bound = {n.id for n in ast.walk(statement) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
            if any(name.startswith("test") for name in bound):
                raise PytestFormatError(f"test class {cls.name} binds a test name by assignment")
    if unittest:
        setup, teardown = ("setUp", "tearDown")
        construct = f"{cls.name}({{name!r}})"
    else:
        setup, teardown = ("setup_method", "teardown_method")
        construct = f"{cls.name}()"
    calls = []
    for name, method in methods.items():
        if not name.startswith("test"):
            continue
        if unittest and method.decorator_list:
            raise PytestFormatError(f"decorated unittest method {cls.name}.{name}")
        for args in _test_calls(method, pytest_names, 1):
            method_ref = f"_rk_case.{name}"
            lines = [f"_rk_case = {construct.format(name=name)}"]
            if setup in methods:
                lines.append(f"_rk_case.{setup}()" if unittest else f"_rk_call_hook(_rk_case.{setup}, {method_ref})")
            after = ""
            if teardown in methods:
                after = f"_rk_case.{teardown}()" if unittest else f"_rk_call_hook(_rk_case.{teardown}, {method_ref})"
            if after:
                lines += ["try:", f"    {method_ref}({args})", "finally:", f"    {after}"]
            else:
                lines.append(f"{method_ref}({args})")
            calls.append("\n".join(lines))
    return calls


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

    def visit_Call(self, node: ast.Call) -> ast.expr:
        if _is(node.func, self.pytest_names) and node.func.attr == "approx":
            unknown = [k.arg for k in node.keywords if k.arg not in ("rel", "abs", "nan_ok")]
            if unknown or len(node.args) + len(node.keywords) > 4 or any(isinstance(a, ast.Starred) for a in node.args):
                raise PytestFormatError("pytest.approx with arguments other than expected, rel, abs, nan_ok")
        self.generic_visit(node)
        return node

    def visit_With(self, node: ast.With) -> ast.stmt:
        self.generic_visit(node)
        item, *rest = node.items
        call = item.context_expr
        if not (isinstance(call, ast.Call) and _is(call.func, self.pytest_names) and call.func.attr == "raises"):
            return node
        if any(k.arg == "match" for k in call.keywords):
            raise PytestFormatError(
                "uses pytest.raises(match=...) (the solution's exception message does not reach the trusted check)"
            )
        if call.keywords or len(call.args) != 1 or item.optional_vars is not None:
            raise PytestFormatError("only 'with pytest.raises(Error):' is supported (no 'as excinfo', no arguments)")
        expected = call.args[0]
        names = expected.elts if isinstance(expected, ast.Tuple) else [expected]
        if not all(isinstance(n, ast.Name) and n.id in BUILTIN_EXCEPTIONS for n in names):
            raise PytestFormatError(
                f"pytest.raises({ast.unparse(expected)}): only builtin exception classes can be matched "
                "(the harness reports a solution's exception by its exact builtin type)"
            )
        body: list[ast.stmt] = [ast.With(rest, node.body)] if rest else node.body
        handler = ast.ExceptHandler(expected, None, [ast.Pass()])
        fail = ast.parse("raise AssertionError('DID NOT RAISE')").body
        return ast.copy_location(ast.Try(body, [handler], fail, []), node)


def _test_calls(function: ast.FunctionDef | ast.AsyncFunctionDef, pytest_names: set[str], skip: int) -> list[str]:
    """The keyword-argument text of each call of one test (one per parameter set; none when it is skipped).
    ``skip``: leading parameters bound already (``self``)."""
    if isinstance(function, ast.AsyncFunctionDef):
        raise PytestFormatError(f"async test {function.name} is not supported")
    arguments = function.args
    if arguments.posonlyargs or arguments.kwonlyargs or arguments.vararg or arguments.kwarg or arguments.defaults:
        raise PytestFormatError(f"test {function.name} has a signature other than plain parameters")
    if any(isinstance(n, (ast.Yield, ast.YieldFrom, ast.Await)) for n in _own_nodes(function)):
        raise PytestFormatError(f"test {function.name} is a generator (pytest does not run it as a test)")
    parameters = [a.arg for a in arguments.args][skip:]
    if skip and len(arguments.args) < skip:
        raise PytestFormatError(f"test method {function.name} takes no 'self'")
    sets: list[dict[str, str]] = [{}]
    for decorator in function.decorator_list:
        if _mark(decorator, pytest_names) == "skip":
            function.decorator_list = []  # pytest neither runs nor counts a skipped test
            return []
        names_values = _parametrize(decorator, pytest_names)
        if names_values is None:
            raise PytestFormatError(
                f"test {function.name} has the decorator {ast.unparse(decorator)} "
                "(supported: pytest.mark.parametrize, pytest.mark.skip)"
            )
        names, rows = names_values
        unknown = [n for n in names if n not in parameters]
        if unknown:
            raise PytestFormatError(f"test {function.name} is parametrized over {', '.join(unknown)}, not a parameter")
        sets = [{**s, **dict(zip(names, row, strict=True))} for s in sets for row in rows]
    function.decorator_list = []
    missing = [p for p in parameters if any(p not in s for s in sets)]
    if missing:
        raise PytestFormatError(f"test {function.name} needs fixtures ({', '.join(missing)}), which are not supported")
    return [", ".join(f"{k}={v}" for k, v in s.items()) for s in sets]


def _own_nodes(function: ast.FunctionDef | ast.AsyncFunctionDef) -> list[ast.AST]:
    """The nodes of ``function``'s own body, not those of functions, lambdas or classes nested in it."""
    nodes: list[ast.AST] = []
    stack: list[ast.AST] = list(function.body)
    while stack:
        node = stack.pop()
        nodes.append(node)
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            stack.extend(ast.iter_child_nodes(node))
    return nodes


def _mark(decorator: ast.expr, pytest_names: set[str]) -> str | None:
    """``skip`` for an unconditional ``@pytest.mark.skip`` / ``@pytest.mark.skip(reason=...)``, else ``None``."""
    target = decorator.func if isinstance(decorator, ast.Call) else decorator
    if not (
        isinstance(target, ast.Attribute)
        and target.attr == "skip"
        and isinstance(target.value, ast.Attribute)
        and target.value.attr == "mark"
        and isinstance(target.value.value, ast.Name)
        and target.value.value.id in pytest_names
    ):
        return None
    if isinstance(decorator, ast.Call) and (
        len(decorator.args) > 1
        or any(k.arg != "reason" for k in decorator.keywords)
        or any(not (isinstance(a, ast.Constant) and isinstance(a.value, str)) for a in decorator.args)
    ):
        return None
    return "skip"


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
    if any(k.arg != "ids" for k in decorator.keywords) or len(decorator.args) != 2:
        raise PytestFormatError("pytest.mark.parametrize with arguments other than names, values and ids")
    values = decorator.args[1]
    if not isinstance(values, (ast.List, ast.Tuple)):
        raise PytestFormatError("pytest.mark.parametrize needs names and a literal list of values")
    spec = decorator.args[0]
    if isinstance(spec, ast.Constant) and isinstance(spec.value, str):
        names = [n.strip() for n in spec.value.split(",") if n.strip()]
    elif isinstance(spec, (ast.List, ast.Tuple)) and all(
        isinstance(e, ast.Constant) and isinstance(e.value, str) for e in spec.elts
    ):
        names = [str(e.value) for e in spec.elts if isinstance(e, ast.Constant)]  # all are (checked above)
    else:
        raise PytestFormatError("pytest.mark.parametrize names must be a literal")
    if not names or len(set(names)) != len(names) or not all(n.isidentifier() for n in names):
        raise PytestFormatError("pytest.mark.parametrize names must be distinct identifiers")
    rows = []
    for element in values.elts:
        if isinstance(element, ast.Starred):
            raise PytestFormatError("a pytest.mark.parametrize row list with * unpacking")
        if len(names) == 1:
            rows.append([ast.unparse(element)])
        elif isinstance(element, (ast.Tuple, ast.List)) and len(element.elts) == len(names):
            if any(isinstance(e, ast.Starred) for e in element.elts):
                raise PytestFormatError("a pytest.mark.parametrize row with * unpacking")
            rows.append([ast.unparse(e) for e in element.elts])
        else:
            raise PytestFormatError("a pytest.mark.parametrize row does not match its names")
    return names, rows
