"""Test plans: which parts of an assert or a test program reach the solution, decided with ``ast`` before any run.

A simple assert (``assert abs(f(x) - 2.5) < 1e-6``) is split into the solution sub-expressions (``f(x)``), evaluated
next to the solution, and the checking glue (``abs(__rk_v[0] - 2.5) < 1e-6``), evaluated in a process that never
loads it; ``== <literal>`` is compared on the host. Everything richer (comprehensions, lambdas, ``:=``, ``map(f,
xs)``, setup lines, HumanEval ``check(candidate)``) becomes a :class:`ProgramPlan`: every maximal expression rooted
at a solution name is a *site*, replaced by a lookup ``__rk_replay(site, inputs)``; the test program itself only
ever runs in the trusted process (see :mod:`.harness` for the protocol and why).
"""

from __future__ import annotations

import ast
import builtins
import functools
import hashlib
import sys
from dataclasses import dataclass
from typing import Any, cast

from rewardsmith.rewards.code.case_formats import AssertTest

TRUSTED_NAMES = frozenset(dir(builtins)) | frozenset(sys.stdlib_module_names)


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
        self.generic_visit(node)  # transforms the children in place and returns node itself
        return node

    def visit_Attribute(self, node: ast.Attribute) -> ast.expr:
        if _root_name(node) in self.user_names:
            return self._placeholder(node)
        self.generic_visit(node)  # transforms the children in place and returns node itself
        return node

    def visit_Subscript(self, node: ast.Subscript) -> ast.expr:
        if _root_name(node) in self.user_names:
            return self._placeholder(node)
        self.generic_visit(node)  # transforms the children in place and returns node itself
        return node

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
    assert isinstance(statement, ast.Assert)  # case_formats: a test that is not a program is one assert statement
    names = {n.id for n in ast.walk(statement.test) if isinstance(n, ast.Name)}
    user_names = _tested_names(names, defined)
    modules = tuple(sorted(n for n in names if n in sys.stdlib_module_names and n not in dir(builtins)))
    called = {id(_root_node(n.func)) for n in ast.walk(statement.test) if isinstance(n, ast.Call)}
    for node in ast.walk(statement.test):
        if isinstance(node, (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp, ast.NamedExpr)):
            return plan_program(test.source, defined)
        if _identity_of_values(node):
            # glue would compare copies of the solution's values by identity; the program rounds decide `is`
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


def _identity_of_values(node: ast.AST) -> bool:
    """An ``is`` between two operands none of which is a singleton constant (``x is None`` is exact on copies)."""
    if not (isinstance(node, ast.Compare) and any(isinstance(op, (ast.Is, ast.IsNot)) for op in node.ops)):
        return False
    operands = [node.left, *node.comparators]
    return not any(isinstance(o, ast.Constant) and o.value in (None, True, False, ...) for o in operands)


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


@dataclass(frozen=True)
class ProgramPlan:
    """A test program decided in the trusted process, asking the solution's process only for call results.

    ``replay`` is the program with every *site* (a maximal expression rooted at a solution name, e.g. ``f(i)`` or
    ``Solution().g(x)[0]``) replaced by ``__rk_replay(site, inputs)``: the trusted process computes the inputs
    and looks the result up in the table of answers. ``probe`` is the same program with each ``assert`` made
    non-fatal, run when an answer is missing, to collect the calls to ask next. ``chains`` maps each site to the
    solution-rooted part of its expression (``lambda __rk_a: Solution().g(__rk_a[0])[0]``), the only piece of the
    test the solution's process receives: names and attribute names, never a constant. ``untrusted`` says why a
    program can only be decided next to the solution (or ``None``).
    """

    source: str
    replay: str
    probe: str
    chains: tuple[tuple[str, str], ...]
    modules: tuple[str, ...]
    untrusted: str | None

    @property
    def seed(self) -> int:
        """Seed of the test's private ``random``, the same in every round (derived from the test itself)."""
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
    """Replaces each maximal solution-rooted expression by ``__rk_replay(site, inputs)``; keeps its chain."""

    def __init__(self, user_names: set[str]) -> None:
        self.user_names = user_names
        self.chains: list[tuple[str, str]] = []
        self.problems: list[str] = []

    def visit(self, node: ast.AST) -> ast.AST:
        if isinstance(node, (ast.Name, ast.Attribute, ast.Subscript, ast.Call)) and _root_name(node) in self.user_names:
            if not isinstance(getattr(node, "ctx", ast.Load()), ast.Load):
                self.problems.append(f"assigns to the solution's {_root_name(node)!r}")
                return node
            return self._site(node)
        return super().visit(node)

    def _site(self, node: ast.expr) -> ast.expr:
        site = str(len(self.chains))
        self.chains.append((site, ""))
        parts: list[ast.expr] = []
        chain = self._strip(node, parts)
        args = ast.arguments([], [ast.arg("__rk_a")], None, [], [], None, [])
        lambda_source = ast.unparse(ast.Lambda(args, chain))
        if not _only_names(chain):
            self.problems.append("a solution expression this harness cannot split from its inputs")
        self.chains[int(site)] = (site, lambda_source)
        inputs = ast.Tuple(parts, ast.Load())
        return ast.Call(ast.Name("__rk_replay", ast.Load()), [ast.Constant(site), inputs], [])

    def _part(self, expr: ast.expr, parts: list[ast.expr]) -> ast.expr:
        parts.append(cast(ast.expr, self.visit(expr)))  # a site or the expression itself: an expression
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
            index: ast.expr
            if isinstance(node.slice, ast.Slice):
                bounds = [getattr(node.slice, b) for b in ("lower", "upper", "step")]
                index = ast.Slice(*[None if b is None else self._part(b, parts) for b in bounds])
            elif isinstance(node.slice, ast.Tuple) and any(isinstance(e, ast.Slice) for e in node.slice.elts):
                self.problems.append("multi-dimensional slice of a solution value")
                index = node.slice
            else:
                index = self._part(node.slice, parts)
            return ast.Subscript(value, index, ast.Load())
        assert isinstance(node, ast.Name)  # a site is rooted at a solution name (_root_name), the chain ends there
        return ast.Name(node.id, ast.Load())


def _only_names(chain: ast.expr) -> bool:
    """A chain may hold names, attribute names and ``__rk_a[i]``: nothing of the test's data (no other constant)."""
    indexes = {
        id(n.slice)
        for n in ast.walk(chain)
        if isinstance(n, ast.Subscript) and isinstance(n.value, ast.Name) and n.value.id == "__rk_a"
    }
    allowed = (ast.Name, ast.Attribute, ast.Call, ast.Subscript, ast.Starred, ast.keyword, ast.Slice, ast.Load)
    return all(
        isinstance(n, allowed) or (isinstance(n, ast.Constant) and id(n) in indexes and type(n.value) is int)
        for n in ast.walk(chain)
    )


class _NonFatalAsserts(ast.NodeTransformer):
    """``assert test, msg`` -> ``with __rk_assuming: test``: the probe evaluates every assert's calls and goes on,
    as it would for a solution that passes them (``msg`` is never evaluated)."""

    def visit_Assert(self, node: ast.Assert) -> ast.stmt:
        body: list[ast.stmt] = [ast.Expr(self.visit(node.test))]
        return ast.copy_location(ast.With([ast.withitem(ast.Name("__rk_assuming", ast.Load()))], body), node)


class _Identity(ast.NodeTransformer):
    """``a is b`` -> ``__rk_is(a, b)`` (``is not``: ``not __rk_is(a, b)``): in the trusted process a solution's object
    is a proxy and its values are copies, so ``is`` itself would compare proxies and copies; the harness decides it
    exactly or refuses it. Assert messages are dropped (they never change a verdict, and would render proxies)."""

    def __init__(self) -> None:
        self.problems: list[str] = []

    def visit_Assert(self, node: ast.Assert) -> ast.stmt:
        return ast.copy_location(ast.Assert(self.visit(node.test), None), node)

    def visit_Compare(self, node: ast.Compare) -> ast.expr:
        self.generic_visit(node)
        if not any(isinstance(op, (ast.Is, ast.IsNot)) for op in node.ops):
            return node
        if len(node.ops) > 1:
            self.problems.append("a chained comparison with 'is'")
            return node
        call = ast.Call(ast.Name("__rk_is", ast.Load()), [node.left, node.comparators[0]], [])
        negated = isinstance(node.ops[0], ast.IsNot)
        return ast.copy_location(ast.UnaryOp(ast.Not(), call) if negated else call, node)


def _untrusted_reason(tree: ast.Module, user_names: set[str]) -> str | None:
    """Why ``tree`` can only be decided next to the solution, or ``None`` when the trusted rounds decide it."""
    dynamic = sorted({n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and n.id in DYNAMIC_ACCESS})
    if dynamic:
        return f"reaches names dynamically ({', '.join(dynamic)})"
    solution_like = set(user_names)
    for top in tree.body:  # HumanEval: check(candidate) -> candidate is the solution
        if isinstance(top, ast.FunctionDef) and top.name == "check" and top.args.args:
            solution_like.add(top.args.args[0].arg)
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
    sites = _Sites(user_names)
    identity = _Identity()
    replay_tree = identity.visit(sites.visit(ast.parse(source)))  # unparsed to text and compiled from it
    _unmangle(cast(ast.Module, replay_tree))
    replay = ast.unparse(replay_tree)
    # SyntaxError (e.g. `return` outside a function): the test is unusable. The probe differs from the replay only
    # in its asserts (each an equivalent `with` statement), so it compiles wherever the replay does.
    compile(replay, "<test>", "exec")
    probe = ast.unparse(_NonFatalAsserts().visit(replay_tree))
    untrusted = "; ".join(dict.fromkeys(sites.problems + identity.problems)) or _untrusted_reason(tree, user_names)
    return ProgramPlan(source, replay, probe, tuple(sites.chains), modules, untrusted or None)


def _unmangle(tree: ast.Module) -> None:
    """Inside a class body Python rewrites ``__rk_replay`` to ``_Class__rk_replay`` (private name mangling), so a
    test class whose methods call the solution (pytest ``Test*`` classes, ``unittest.TestCase``) would raise
    ``NameError``. Each class's mangled spelling is bound to the harness's function at module level."""
    classes = sorted({n.name.lstrip("_") for n in ast.walk(tree) if isinstance(n, ast.ClassDef)} - {""})
    aliases = [
        ast.Assign([ast.Name(f"_{name}{helper}", ast.Store())], ast.Name(helper, ast.Load()), lineno=0)
        for name in classes
        for helper in ("__rk_replay", "__rk_assuming", "__rk_is")
    ]
    head = 0  # after a docstring and ``from __future__`` imports, which must come first
    for index, statement in enumerate(tree.body):
        docstring = index == 0 and isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant)
        if not (docstring or (isinstance(statement, ast.ImportFrom) and statement.module == "__future__")):
            break
        head = index + 1
    tree.body[head:head] = aliases
