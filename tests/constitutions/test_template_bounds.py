"""Templates are hostile input: a short template must not render for minutes, fill memory, or raise a traceback.

Each hostile template below is a few dozen characters; each must end, fast, in one :class:`TemplateError` that
says what was refused. Renders run in a daemon thread with a deadline, so a template the bounds miss fails the
test instead of hanging the suite.
"""

from __future__ import annotations

import threading
import time

import pytest

from rewardsmith.constitutions.loader import parse_text
from rewardsmith.constitutions.schema import ConstitutionError
from rewardsmith.judges.templates import TemplateError, render_source

#: Seconds a refused render may take (the render budget itself is 5 s; these stop long before it).
FAST_S = 4.0


def render_within(source: str, seconds: float = 20.0, **variables) -> tuple[str | BaseException, float]:
    """``render_source`` in a daemon thread: its output or exception, and the time it took."""
    outcome: list[str | BaseException] = []

    def run() -> None:
        try:
            outcome.append(render_source(source, name="hostile template", **variables))
        except BaseException as exc:
            outcome.append(exc)

    started = time.monotonic()
    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(seconds)
    elapsed = time.monotonic() - started
    assert outcome, f"the render was still running after {seconds}s"
    return outcome[0], elapsed


# (template, fragment of the one-line error, what it attacks)
HOSTILE = [
    ("{{ 9 ** (9 ** 9) }}", "over 4096 bits", "a power that takes minutes"),
    ("{{ 2 ** 100000 }}", "over 4096 bits", "a large power"),
    (
        "{% set ns = namespace(x=3) %}{% for i in range(40) %}{% set ns.x = ns.x * ns.x %}{% endfor %}{{ ns.x }}",
        "product over 4096 bits",
        "repeated squaring",
    ),
    ("{{ 'a' * 10 ** 9 }}", "repeating a value", "a gigabyte string"),
    ("{{ [0] * 10 ** 9 }}", "repeating a value", "a gigabyte list"),
    (
        "{% set ns = namespace(s='ab') %}{% for i in range(64) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}{{ ns.s }}",
        "'~' would build",
        "doubling a text with ~",
    ),
    (
        "{% set ns = namespace(s='ab') %}{% for i in range(64) %}{% set ns.s = ns.s + ns.s %}{% endfor %}{{ ns.s }}",
        "joining two values",
        "doubling a text with +",
    ),
    (
        "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}",
        "loops more than",
        "ten billion empty loop steps",
    ),
    ("{% macro m(n) %}{{ m(n) }}{% endmacro %}{{ m(1) }}", "calls nest deeper", "macro recursion"),
    ("{% for x in [1] recursive %}{{ loop([1]) }}{% endfor %}", "calls nest deeper", "recursive loop"),
    ("{% include 'self' %}", "may not include", "include (recursion, or a host file)"),
    ("{% extends 'base' %}", "may not extends", "extends"),
    ("{% import 'macros' as m %}{{ m.x() }}", "may not import", "import"),
    ("{% from 'macros' import x %}", "may not import", "from-import"),
    ("{{ 'x' | center(10 ** 9) }}", "center called with", "a filter asked for a huge width"),
    ("{{ 'x'.ljust(10 ** 9) }}", "ljust called with", "a method asked for a huge width"),
    ("{{ ('a\n' * 1000000) | indent(1000) }}", "indent would build", "indent multiplies lines"),
    ("{{ ('a' * 1000000) | replace('a', 'b' * 1000) }}", "replace would build", "replace multiplies"),
    ("{{ range(100000) | join('x' * 100000) }}", "join would build", "join multiplies"),
    ("{{ '%0999999999d' % 1 }}", "field 999999999 wide", "a % width"),
    ("{{ '{:>999999999}'.format(1) }}", "field 999999999 wide", "a str.format width"),
    ("{{ '%*d' % (999999999, 1) }}", "'*' widths", "a % star width"),
    ("{{ lipsum(100000) }}", "'lipsum' is undefined", "megabytes of filler in one call"),
    ("{% set _bounded_concat = 1 %}{{ 'a' ~ 'b' }}", "reserved", "shadowing the bounded join"),
    ("{{ 1 / 0 }}", "ZeroDivisionError", "a Python error from template code"),
    ("{{ 10.0 ** 400 }}", "OverflowError", "a float overflow"),
    ("{{ " + "(" * 5000 + "1" + ")" * 5000 + " }}", "nested too deeply", "the parser's recursion"),
    ("{{ 10 ** 5000 }}", "over 4096 bits", "an integer too long to print"),
]


@pytest.mark.parametrize(("source", "fragment", "attack"), HOSTILE, ids=[attack for _, _, attack in HOSTILE])
def test_hostile_template_ends_fast_in_one_template_error(source, fragment, attack):
    outcome, elapsed = render_within(source, prompt="p")
    assert isinstance(outcome, TemplateError), f"{attack}: got {outcome!r}"
    message = str(outcome)
    assert message.startswith("hostile template ") and "\n" not in message
    assert fragment in message
    assert elapsed < FAST_S, f"{attack}: refused only after {elapsed:.1f}s"


def test_render_budget_stops_slow_templates_that_no_single_bound_catches(monkeypatch):
    from rewardsmith.judges import template_sandbox

    monkeypatch.setattr(template_sandbox, "RENDER_BUDGET_S", 0.5)
    source = (
        "{% for i in range(900) %}{% for j in range(900) %}{{ (prompt ~ j) | upper | length }}{% endfor %}{% endfor %}"
    )
    outcome, elapsed = render_within(source, prompt="p" * 2000)
    assert isinstance(outcome, TemplateError) and "longer than 0.5s" in str(outcome)
    assert elapsed < 3.0


# ordinary templates, including the constructs the bounds watch, still render (template, variables, output)
ORDINARY = [
    ("{{ 2 ** 10 }} {{ 3 * 4 }} {{ 'ab' * 3 }} {{ [1] + [2] }}", {}, "1024 12 ababab [1, 2]"),
    ("{% for c in items %}{{ loop.index }}={{ c }} {% endfor %}", {"items": ["a", "b"]}, "1=a 2=b "),
    ("{{ prompt ~ '!' }} {{ '%s/%d' % (prompt, 5) }} {{ '{:>4}'.format(prompt) }}", {"prompt": "hi"}, "hi! hi/5   hi"),
    ("{% macro item(x) %}<{{ x }}>{% endmacro %}{{ item(1) }}{{ item(2) }}", {}, "<1><2>"),
    ("{{ text | replace('a', 'b') | indent(2) | length }}", {"text": "a" * 100_000}, "100000"),
    ("{{ items | join(', ') }}", {"items": ["x"] * 3}, "x, x, x"),
    ("{{ prompt | length }}", {"prompt": "y" * 3_000_000}, "3000000"),
]


@pytest.mark.parametrize(("source", "variables", "expected"), ORDINARY)
def test_ordinary_templates_still_render(source, variables, expected):
    assert render_source(source, **variables) == expected


CONSTITUTION = """
name: hostile
description: A constitution whose template never finishes rendering.
principles:
  - {id: p1, comparison: "Which is better?", critique: "Critique it.", revision: "Revise it."}
templates:
  critique: "{{ critique_request }} {{ 9 ** (9 ** 9) }}"
"""


def test_constitution_with_an_endless_template_is_refused_at_load_in_one_line():
    started = time.monotonic()
    with pytest.raises(ConstitutionError, match=r"critique template exceeds a template bound") as caught:
        parse_text(CONSTITUTION, "hostile.yaml")
    assert time.monotonic() - started < FAST_S
    assert str(caught.value).startswith("hostile.yaml: templates: critique template") and "\n" not in str(caught.value)


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("[" * 5000 + "]" * 5000, "nested more than 64 levels deep"),
        ("name: " + "7" * 5000, "an integer of 5000 digits"),
        (
            "a: &a [x, x, x, x, x, x, x, x, x, x]\n"
            + "".join(f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join([f'*{chr(97 + i)}'] * 10)}]\n" for i in range(8)),
            "expands to more than",
        ),
        ("name: [unclosed\n", "hostile.yaml:2:1: not valid YAML"),
    ],
    ids=["deep", "digits", "alias-bomb", "syntax"],
)
def test_hostile_constitution_yaml_is_one_line_naming_the_file(text, fragment):
    with pytest.raises(ConstitutionError) as caught:
        parse_text(text, "hostile.yaml")
    message = str(caught.value)
    assert message.startswith("hostile.yaml") and fragment in message and "\n" not in message
