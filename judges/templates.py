"""Prompt templates: jinja files shipped in ``judges/prompts/`` (or any path), rendered to chat messages.

A template is a jinja text whose lines ``[system]``, ``[user]`` and ``[assistant]`` start a message
of that role, so the whole conversation a judge sees is one readable file a user can copy and edit.
"""

from __future__ import annotations

import functools
import re
from importlib import resources
from pathlib import Path
from typing import Any

from rewardkit.judges.base import Message

_ROLE_LINE = re.compile(r"^\[(system|user|assistant)\]\s*$", flags=re.MULTILINE)


class TemplateError(ValueError):
    """A prompt template is missing, does not render, or renders to no message."""


def template_text(name_or_path: str) -> str:
    """The source of a packaged template (``"pairwise"``) or of a template file path."""
    path = Path(name_or_path)
    if path.suffix and path.is_file():
        return path.read_text(encoding="utf-8")
    packaged = resources.files("rewardkit.judges") / "prompts" / f"{name_or_path}.jinja"
    if packaged.is_file():
        return packaged.read_text(encoding="utf-8")
    raise TemplateError(f"no prompt template {name_or_path!r}: not a file, and not one of {packaged_templates()}")


def packaged_templates() -> list[str]:
    folder = resources.files("rewardkit.judges") / "prompts"
    return sorted(p.name.removesuffix(".jinja") for p in folder.iterdir() if p.name.endswith(".jinja"))


@functools.lru_cache(maxsize=64)
def _compiled(source: str):
    import jinja2

    environment = jinja2.Environment(undefined=jinja2.StrictUndefined, keep_trailing_newline=False, autoescape=False)
    return environment.from_string(source)


def render_messages(name_or_path: str, **variables: Any) -> list[Message]:
    """Render a template to ``[{"role", "content"}, ...]``; text before any role line is a user message."""
    import jinja2

    source = template_text(name_or_path)
    try:
        text = _compiled(source).render(**variables)
    except jinja2.TemplateError as exc:
        raise TemplateError(f"prompt template {name_or_path!r} failed to render: {exc}") from None
    return split_roles(text)


def split_roles(text: str) -> list[Message]:
    parts = _ROLE_LINE.split(text)
    messages: list[Message] = []
    if parts[0].strip():
        messages.append({"role": "user", "content": parts[0].strip()})
    for role, content in zip(parts[1::2], parts[2::2], strict=True):
        if content.strip():
            messages.append({"role": role, "content": content.strip()})
    if not messages:
        raise TemplateError("prompt template rendered to no message")
    return messages


def check_template(name_or_path: str, **sample: Any) -> None:
    """Render once with sample variables, so a broken template fails at construction, not mid-run."""
    render_messages(name_or_path, **sample)
