"""Prompt templates: jinja files shipped in ``judges/prompts/`` (or any path), rendered to chat messages.

A template is a jinja text whose lines ``[system]``, ``[user]`` and ``[assistant]`` start a message
of that role, so the whole conversation a judge sees is one readable file a user can copy and edit.

Templates come from files a user (or a downloaded constitution) supplies, so every template, bundled or
not, renders in jinja's immutable sandbox: attribute walks such as ``x.__class__.__mro__`` that would
reach ``subprocess.Popen`` in a plain ``jinja2.Environment`` raise :class:`UnsafeTemplateError` instead.
"""

from __future__ import annotations

import functools
import re
from importlib import resources
from pathlib import Path
from typing import Any

from rewardsmith.judges.base import Message

_PACKAGED_NAME = re.compile(r"[A-Za-z0-9_-]+")
#: packaged templates renamed, by their former names: a spec's ``template: rubric`` still finds the scale judge's
RENAMED = {"rubric": "scale"}
_ROLE_LINE = re.compile(r"^\[(system|user|assistant)\]\s*$", flags=re.MULTILINE)


class TemplateError(ValueError):
    """A prompt template is missing, does not render, or renders to no message."""


class UnsafeTemplateError(TemplateError):
    """A template reaches for Python internals (``__class__``, ``__globals__``, ...); the sandbox refused."""


def template_text(name_or_path: str) -> str:
    """The source of a packaged template (``"pairwise"``) or of a template file path."""
    path = Path(name_or_path)
    if path.suffix and path.is_file():
        return path.read_text(encoding="utf-8")
    packaged_name = RENAMED.get(name_or_path, name_or_path)
    packaged = resources.files("rewardsmith.judges") / "prompts" / f"{packaged_name}.jinja"
    # a packaged name is a plain name: "../../x" must not reach other files as "<x>.jinja"
    if _PACKAGED_NAME.fullmatch(name_or_path) and packaged.is_file():
        return packaged.read_text(encoding="utf-8")
    raise TemplateError(f"no prompt template {name_or_path!r}: not a file, and not one of {packaged_templates()}")


def packaged_templates() -> list[str]:
    folder = resources.files("rewardsmith.judges") / "prompts"
    return sorted(p.name.removesuffix(".jinja") for p in folder.iterdir() if p.name.endswith(".jinja"))


@functools.cache
def _environment():
    from rewardsmith.judges.template_sandbox import BoundedSandbox

    return BoundedSandbox()


@functools.lru_cache(maxsize=64)
def _compiled(source: str):
    return _environment().from_string(source)


def unsafe_accesses(source: str) -> list[str]:
    """Private attributes a template names (``x.__class__``, ``x["__init__"]``, ``x|attr("_y")``).

    The sandbox refuses them at render time whatever branch they sit in; naming them up front lets a
    validator reject a template whose payload hides behind a condition that sample values never meet.
    """
    from jinja2 import TemplateSyntaxError, nodes

    try:
        tree = _environment().parse(source)
    except (TemplateSyntaxError, RecursionError, MemoryError):
        return []  # reported by the render
    found = [f".{node.attr}" for node in tree.find_all(nodes.Getattr) if node.attr.startswith("_")]
    for node in tree.find_all(nodes.Getitem):
        if isinstance(node.arg, nodes.Const) and isinstance(node.arg.value, str) and node.arg.value.startswith("_"):
            found.append(f"[{node.arg.value!r}]")
    for node in tree.find_all(nodes.Filter):
        argument = node.args[0] if node.name == "attr" and node.args else None
        if isinstance(argument, nodes.Const) and str(argument.value).startswith("_"):
            found.append(f"|attr({argument.value!r})")
    return found


def render_source(source: str, *, name: str = "template", **variables: Any) -> str:
    """Render jinja text in the bounded sandbox; any failure is one :class:`TemplateError` naming ``name``.

    Every failure, not only jinja's own (``1/0``, a float overflow, a parser recursing on ``((((…``), is caught:
    a template is hostile input, and its author must not be able to raise into a trainer.
    """
    from jinja2 import TemplateError as JinjaError
    from jinja2.exceptions import SecurityError

    from rewardsmith.judges.template_sandbox import TemplateBoundError, render_bounded

    try:
        return render_bounded(_compiled(source), variables)
    except TemplateBoundError as exc:
        raise TemplateError(f"{name} exceeds a template bound and was stopped: {exc}") from None
    except SecurityError as exc:
        raise UnsafeTemplateError(f"{name} tries unsafe access and was stopped by the sandbox: {exc}") from None
    except JinjaError as exc:
        raise TemplateError(f"{name} failed to render: {exc}") from None
    except RecursionError:
        raise TemplateError(f"{name} failed to render: nested too deeply") from None
    except Exception as exc:  # ZeroDivisionError, OverflowError, TypeError, MemoryError, ... from template code
        raise TemplateError(f"{name} failed to render: {type(exc).__name__}: {exc}") from None


def check_source(source: str, *, name: str = "template", **sample: Any) -> str:
    """Reject private-attribute access, then dry-render with ``sample`` values; returns the rendered text."""
    unsafe = unsafe_accesses(source)
    if unsafe:
        raise UnsafeTemplateError(f"{name} accesses private attributes {', '.join(unsafe)}; templates may not")
    return render_source(source, name=name, **sample)


def render_messages(name_or_path: str, **variables: Any) -> list[Message]:
    """Render a template to ``[{"role", "content"}, ...]``; text before any role line is a user message.

    The structure comes from the template alone: its source is split at its role lines first, and each block is
    rendered on its own, so an inserted value lands inside one message's content whatever it contains (a
    completion's own ``[system]`` line is text of the user message, not a second system prompt). The untrusted
    variables (:data:`~rewardsmith.judges.untrusted.UNTRUSTED_LABELS`: ``prompt``, ``response``, ``first``,
    ``second``, ``candidates``, ``reference``) are quoted between keyed tags they cannot close and have their chat
    control tokens defused (:mod:`rewardsmith.judges.untrusted`); the others are the caller's settings.
    """
    return render_template_source(template_text(name_or_path), name=f"prompt template {name_or_path!r}", **variables)


def render_template_source(source: str, *, name: str = "prompt template", **variables: Any) -> list[Message]:
    """:func:`render_messages` for template text already read (a constitution's, a test's)."""
    from rewardsmith.judges.untrusted import quote_untrusted

    quoted = quote_untrusted(variables)
    messages: list[Message] = []
    for role, block in split_source(source):
        content = render_source(block, name=name, **quoted).strip()
        if content:
            messages.append({"role": role, "content": content})
    if not messages:
        raise TemplateError(f"{name} rendered to no message")
    return messages


def split_source(source: str) -> list[tuple[str, str]]:
    """A template's source cut at its role lines: ``(role, jinja block)`` pairs; text before any role line is user's.

    Role lines are structure the template's author writes; they must stand at the template's top level (a role
    line inside ``{% if %}`` leaves each half of the block unbalanced, which renders as a :class:`TemplateError`).
    """
    parts = _ROLE_LINE.split(source)
    blocks = [("user", parts[0])] if parts[0].strip() else []
    blocks += list(zip(parts[1::2], parts[2::2], strict=True))
    return blocks


def check_template(name_or_path: str, **sample: Any) -> None:
    """Render once with sample variables, so a broken or unsafe template fails at construction, not mid-run."""
    source = template_text(name_or_path)
    name = f"prompt template {name_or_path!r}"
    unsafe = unsafe_accesses(source)
    if unsafe:
        raise UnsafeTemplateError(f"{name} accesses private attributes {', '.join(unsafe)}; templates may not")
    render_template_source(source, name=name, **sample)
