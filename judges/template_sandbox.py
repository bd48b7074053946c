"""The jinja environment every prompt and constitution template renders in: sandboxed and bounded.

Templates come from files others write (constitutions, ``template:`` paths in a reward spec), so a template is
hostile input. jinja's immutable sandbox already refuses attribute walks to Python internals; it does not bound
cost. Here every way a short template could run for minutes or fill memory is bounded, and hitting a bound is a
:class:`TemplateBoundError` (a ``jinja2.TemplateError``) that the caller reports as one line:

- arithmetic: ``9 ** (9 ** 9)`` and repeated squaring (``*``/``**`` results past :data:`MAX_INT_BITS` bits) are
  refused before they are computed;
- size: a string or list built by ``*``, ``+``, ``~``, a ``%``/``format`` width, or a filter/method argument such
  as ``center(10**9)`` is refused past :data:`MAX_VALUE_CHARS`; the output stops at :data:`MAX_OUTPUT_CHARS`;
- work: every loop step counts against :data:`MAX_LOOP_STEPS` per render and every step, call and operator checks
  a wall-clock budget of :data:`RENDER_BUDGET_S` (nested loops over ``range(100000)`` end there, not in hours);
- recursion: ``include``/``extends``/``import`` are refused when the template is parsed (a template is one
  self-contained text), and macro, ``caller()`` and recursive-loop calls nest at most :data:`MAX_CALL_DEPTH` deep.

The bounds are per render (a context variable), so concurrent renders in threads do not share a budget.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import re
import time
from collections.abc import Iterator, Sized
from dataclasses import dataclass, field
from typing import Any

from jinja2 import StrictUndefined, TemplateSyntaxError, Undefined, nodes
from jinja2.exceptions import SecurityError
from jinja2.sandbox import ImmutableSandboxedEnvironment
from jinja2.visitor import NodeTransformer

#: Largest integer a template may compute (bits); far above any count or score a prompt needs.
MAX_INT_BITS = 4096
#: Longest string or list a template may build with an operator, a filter or a method.
MAX_VALUE_CHARS = 4_000_000
#: Longest rendered text (a judge prompt holding several long completions stays far below it).
MAX_OUTPUT_CHARS = 8_000_000
#: Loop iterations per render, over all loops together.
MAX_LOOP_STEPS = 1_000_000
#: Nesting of macro, ``caller()`` and recursive-loop calls.
MAX_CALL_DEPTH = 40
#: Wall-clock seconds one render may take.
RENDER_BUDGET_S = 5.0
#: Widest field a ``%`` or ``format`` conversion may ask for (``%0999999999d`` would allocate first).
MAX_FORMAT_WIDTH = 10_000

_REFUSED_NODES = {
    nodes.Include: "include",
    nodes.Extends: "extends",
    nodes.Import: "import",
    nodes.FromImport: "import",
}
_PERCENT_FIELD = re.compile(r"%(?:\([^)]*\))?[#0\- +]*(\*|\d+)?(?:\.(\*|\d+))?")
_BRACE_FIELD = re.compile(r"\{[^{}]*:[^{}]*?(\d+)[^{}]*\}")
_HELPERS = ("_bounded_concat", "_budgeted_iter")


class TemplateBoundError(SecurityError):
    """A template asked for more than a bound allows (time, size, depth); rendering stopped."""


@dataclass
class _Budget:
    deadline: float
    steps: int = 0
    depth: int = 0
    output: int = 0
    started: float = field(default_factory=time.monotonic)

    def tick(self, steps: int = 0) -> None:
        self.steps += steps
        if self.steps > MAX_LOOP_STEPS:
            raise TemplateBoundError(f"the template loops more than {MAX_LOOP_STEPS:,} steps")
        if time.monotonic() > self.deadline:
            raise TemplateBoundError(f"the template took longer than {RENDER_BUDGET_S:g}s to render")


_BUDGET: contextvars.ContextVar[_Budget | None] = contextvars.ContextVar("template_budget", default=None)


def _tick(steps: int = 0) -> None:
    budget = _BUDGET.get()
    if budget is not None:
        budget.tick(steps)


def _check_size(value: Any, what: str) -> Any:
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > MAX_INT_BITS:
        raise TemplateBoundError(f"{what} gives an integer over {MAX_INT_BITS} bits")
    if isinstance(value, (str, bytes, list, tuple)) and len(value) > MAX_VALUE_CHARS:
        raise TemplateBoundError(f"{what} gives a value of {len(value):,} items (limit {MAX_VALUE_CHARS:,})")
    return value


def _check_call(name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    """Refuse a filter or method call whose result could be huge, from its arguments alone (before it runs).

    ``args`` starts with the value (a filter's input, or the text a method is called on). Integer arguments are
    bounded by :data:`MAX_VALUE_CHARS` (``center(10**9)``); the calls that multiply sizes are estimated: ``indent``
    and ``expandtabs`` (lines or tabs times the width), ``replace`` (occurrences times the new text), ``join``
    (items times the separator).
    """
    for value in (*args, *kwargs.values()):
        if isinstance(value, int) and not isinstance(value, bool) and abs(value) > MAX_VALUE_CHARS:
            raise TemplateBoundError(f"{name} called with {value} (arguments are bounded by {MAX_VALUE_CHARS:,})")
    if not args:
        return
    value, rest = args[0], [*args[1:], *kwargs.values()]
    ints = [v for v in rest if isinstance(v, int) and not isinstance(v, bool)]
    texts = [v for v in rest if isinstance(v, str)]
    work = 0
    if name in ("indent", "expandtabs") and isinstance(value, str) and ints:
        work = (value.count("\n" if name == "indent" else "\t") + 1) * max(ints)
    elif name == "replace" and isinstance(value, str) and len(texts) >= 2:
        work = len(value) + value.count(texts[0]) * len(texts[1]) if texts[0] else (len(value) + 1) * len(texts[1])
    elif name == "join" and texts:
        work = _length(value) * len(texts[0])
    if work > MAX_VALUE_CHARS:
        raise TemplateBoundError(f"{name} would build about {work:,} characters (limit {MAX_VALUE_CHARS:,})")


def _check_format(text: Any, what: str) -> None:
    """Refuse ``%0999999999d`` and ``{:>999999999}``: the conversion would allocate the width first."""
    if not isinstance(text, str):
        return
    for match in _PERCENT_FIELD.finditer(text):
        for number in match.groups():
            if number == "*":
                raise TemplateBoundError(f"{what}: '*' widths are not allowed in templates")
            if number and (len(number) > 6 or int(number) > MAX_FORMAT_WIDTH):
                raise TemplateBoundError(f"{what} asks for a field {number} wide (limit {MAX_FORMAT_WIDTH:,})")
    for match in _BRACE_FIELD.finditer(text):
        number = match.group(1)
        if len(number) > 6 or int(number) > MAX_FORMAT_WIDTH:
            raise TemplateBoundError(f"{what} asks for a field {number} wide (limit {MAX_FORMAT_WIDTH:,})")


def _length(value: Any) -> int:
    return len(value) if isinstance(value, Sized) and not isinstance(value, Undefined) else 0


def _bounded_power(left: Any, right: Any) -> Any:
    ints = isinstance(left, int) and isinstance(right, int) and abs(left) > 1
    if ints and (right > MAX_INT_BITS or right * (left.bit_length() - 1) > MAX_INT_BITS):
        raise TemplateBoundError(f"{left} ** {right} is over {MAX_INT_BITS} bits; refused before computing it")
    return left**right


def _bounded_times(left: Any, right: Any) -> Any:
    for seq, count in ((left, right), (right, left)):
        if isinstance(count, int) and _length(seq) and _length(seq) * count > MAX_VALUE_CHARS:
            raise TemplateBoundError(f"repeating a value {count} times gives over {MAX_VALUE_CHARS:,} items")
    if isinstance(left, int) and isinstance(right, int) and left.bit_length() + right.bit_length() > MAX_INT_BITS + 1:
        raise TemplateBoundError(f"a product over {MAX_INT_BITS} bits; refused before computing it")
    return left * right


def _bounded_plus(left: Any, right: Any) -> Any:
    if _length(left) + _length(right) > MAX_VALUE_CHARS:
        raise TemplateBoundError(f"joining two values gives over {MAX_VALUE_CHARS:,} items")
    return left + right


def _bounded_modulo(left: Any, right: Any) -> Any:
    _check_format(left, "a % format")
    return _check_size(left % right, "a % format")


_BINOPS = {"**": _bounded_power, "*": _bounded_times, "+": _bounded_plus, "%": _bounded_modulo}


def _budgeted_iter(iterable: Any) -> Iterator[Any]:
    """Every loop's iterable passes through here (see :meth:`BoundedSandbox._parse`): one step per item."""
    budget = _BUDGET.get()
    for item in iterable:
        if budget is not None:
            budget.tick(1)
        yield item


def _bounded_concat(*parts: Any) -> str:
    """``a ~ b``: the joined text, refused past :data:`MAX_VALUE_CHARS` before it is built."""
    texts = [str(part) for part in parts]
    if sum(map(len, texts)) > MAX_VALUE_CHARS:
        raise TemplateBoundError(f"'~' would build a text over {MAX_VALUE_CHARS:,} characters")
    return "".join(texts)


def _bounded_filter(name: str, function: Any) -> Any:
    passes_state = getattr(function, "jinja_pass_arg", None) is not None  # context/environment comes first

    @functools.wraps(function)
    def bounded(*args: Any, **kwargs: Any) -> Any:
        _tick()
        own = args[1:] if passes_state else args
        _check_call(name, own, kwargs)
        if name == "format" and own:
            _check_format(own[0], f"filter {name!r}")
        return _check_size(function(*args, **kwargs), f"filter {name!r}")

    return bounded


class BoundedSandbox(ImmutableSandboxedEnvironment):
    """jinja's immutable sandbox with the bounds of this module; refusals raise at once, with their reason."""

    intercepted_binops = frozenset(_BINOPS)

    def __init__(self) -> None:
        super().__init__(undefined=StrictUndefined, keep_trailing_newline=False, autoescape=False)
        self.filters = {name: _bounded_filter(name, f) for name, f in self.filters.items()}
        self.filters["_budgeted_iter"] = _budgeted_iter
        self.globals["_bounded_concat"] = _bounded_concat
        self.globals.pop("lipsum", None)  # lipsum(n=10**5) writes megabytes of filler in one call

    # jinja's sandbox returns an undefined value for a refused attribute, and a later ``|attr`` on that value
    # turns the refusal into a plain "undefined" error; refusing at once keeps the reason.
    def unsafe_undefined(self, obj: Any, attribute: str) -> Any:
        raise SecurityError(f"access to attribute {attribute!r} of {type(obj).__name__!r} object is unsafe")

    def wrap_str_format(self, value: Any) -> Any:
        wrapped = super().wrap_str_format(value)
        if wrapped is not None:
            _check_format(value.__self__, "a format string")
        return wrapped

    def call_binop(self, context: Any, operator: str, left: Any, right: Any) -> Any:
        _tick()
        return _check_size(_BINOPS[operator](left, right), f"{operator!r}")

    def getattr(self, obj: Any, attribute: str) -> Any:
        _tick()
        return super().getattr(obj, attribute)

    def call(__self, __context: Any, __obj: Any, *args: Any, **kwargs: Any) -> Any:
        budget = _BUDGET.get()
        name = getattr(__obj, "__name__", type(__obj).__name__)
        owner = getattr(__obj, "__self__", None)
        if __obj is not _bounded_concat:  # it bounds itself, by the sum of its parts
            if isinstance(owner, str) and name == "join" and args:
                _check_call(name, (args[0], owner), kwargs)
            else:
                _check_call(name, (owner, *args) if isinstance(owner, str) else (None, *args), kwargs)
        if budget is None:
            return _check_size(super().call(__context, __obj, *args, **kwargs), repr(name))
        budget.tick()
        if budget.depth >= MAX_CALL_DEPTH:
            raise TemplateBoundError(f"calls nest deeper than {MAX_CALL_DEPTH} (recursive macro or loop?)")
        budget.depth += 1
        try:
            return _check_size(super().call(__context, __obj, *args, **kwargs), repr(name))
        finally:
            budget.depth -= 1

    def _parse(self, source: str, name: str | None, filename: str | None) -> nodes.Template:
        """Parse, refuse template loading, and route every loop and ``~`` through the bounded helpers."""
        tree = super()._parse(source, name, filename)
        for kind, word in _REFUSED_NODES.items():
            for node in tree.find_all(kind):
                raise TemplateSyntaxError(
                    f"templates may not {word} other templates (a template is one self-contained text)",
                    node.lineno,
                    name,
                    filename,
                )
        for name_node in tree.find_all(nodes.Name):
            if name_node.name in _HELPERS:
                raise TemplateSyntaxError(f"the name {name_node.name!r} is reserved", name_node.lineno, name, filename)
        tree = _Bound().visit(tree)
        return tree


class _Bound(NodeTransformer):
    """Route every loop's iterable through :func:`_budgeted_iter` and every ``~`` through :func:`_bounded_concat`."""

    def visit_For(self, node: nodes.For) -> nodes.Node:
        self.generic_visit(node)
        node.iter = nodes.Filter(node.iter, "_budgeted_iter", [], [], None, None, lineno=node.lineno)
        return node

    def visit_Concat(self, node: nodes.Concat) -> nodes.Node:
        self.generic_visit(node)
        helper = nodes.Name("_bounded_concat", "load", lineno=node.lineno)
        return nodes.Call(helper, list(node.nodes), [], None, None, lineno=node.lineno)


@contextlib.contextmanager
def render_budget() -> Iterator[_Budget]:
    """The bounds of one render (time from now, loop steps, call depth), active in this context."""
    budget = _Budget(deadline=time.monotonic() + RENDER_BUDGET_S)
    token = _BUDGET.set(budget)
    try:
        yield budget
    finally:
        _BUDGET.reset(token)


def render_bounded(template: Any, variables: dict[str, Any]) -> str:
    """Render a template of :class:`BoundedSandbox` within one budget, stopping at :data:`MAX_OUTPUT_CHARS`."""
    with render_budget() as budget:
        chunks = []
        for chunk in template.generate(**variables):
            budget.output += len(chunk)
            if budget.output > MAX_OUTPUT_CHARS:
                raise TemplateBoundError(f"the template renders more than {MAX_OUTPUT_CHARS:,} characters")
            chunks.append(chunk)
        return "".join(chunks)
