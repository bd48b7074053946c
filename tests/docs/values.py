"""Expected values written next to examples: ``reward(xs)   # [1.0, 0.0]`` or an expression followed by a comment
line holding its value. A comment that does not read as a value (``# stops the server``) expects nothing."""

from __future__ import annotations

import ast
import enum
import re

_LABEL = re.compile(r"^[a-z][a-z ]*:\s+")  # "conversational: [1.0]"
_VALUE_START = re.compile(r"""^(\[|\(|\{|-?\d|'|"|b'|b"|True\b|False\b|None\b|[A-Z]\w*(\(|\.[A-Z_]+\b))""")


def expected_text(comment: str) -> str | None:
    """The value part of a comment, or None when the comment is prose."""
    text = comment.lstrip("#").strip()
    text = _LABEL.sub("", text, count=1)
    return text if _VALUE_START.match(text) else None


def renderings(value: object) -> set[str]:
    forms = {repr(value), str(value)}
    if isinstance(value, enum.Enum):
        forms.add(f"{type(value).__name__}.{value.name}")
    if isinstance(value, str):
        forms |= {f'"{value}"', f"'{value}'"}
    return forms


def matches(value: object, text: str) -> bool:
    """True when the comment starts with one of the value's renderings (what follows it is commentary)."""
    forms = renderings(value)
    for end in range(len(text), 0, -1):
        head, rest = text[:end].rstrip(), text[end:]
        if head in forms and (not rest.strip() or rest[:1] in " \t(;,"):
            return True
    return False


def expectations(source: str) -> dict[int, str]:
    """Top-level expression statements (by index in the module body) and the value text written for them."""
    lines = source.splitlines()
    tree = ast.parse(source)
    found: dict[int, str] = {}
    for index, node in enumerate(tree.body):
        if not isinstance(node, ast.Expr) or isinstance(node.value, ast.Constant):
            continue
        last = lines[node.end_lineno - 1]
        comment = _trailing_comment(last, node.end_col_offset)
        if comment is None and node.end_lineno < len(lines):
            following = lines[node.end_lineno].strip()
            nxt = tree.body[index + 1].lineno if index + 1 < len(tree.body) else len(lines) + 1
            if following.startswith("#") and node.end_lineno + 1 < nxt:
                comment = following
        text = expected_text(comment) if comment else None
        if text is not None:
            found[index] = text
    return found


def _trailing_comment(line: str, code_end: int) -> str | None:
    rest = line[code_end:].strip()
    return rest if rest.startswith("#") else None
