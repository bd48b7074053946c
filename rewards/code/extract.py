"""Pull the program out of a completion: a fenced code block in the target language.

One pass over the lines, so the time is linear in the completion's length whatever it holds (a regex that
looks ahead for each opening fence's closer is quadratic on a completion full of unclosed fences, and that
work runs on the host, outside every sandbox timeout). The rules are CommonMark's: a fence is a line of three
or more backticks or tildes (any indentation) with an optional tag; the block ends at a line holding only a
fence of the same character at least as long; a fence never closed runs to the end of the text.

Python, as models write it (:func:`extract_program`), when the names the tests call are known:

- **The block that defines the entry point**, not simply the last one: a solution block followed by a usage block
  (```` ```python\\nprint(f(3))\\n``` ````) is graded on the solution, the last block that defines a tested name.
- **A generation cut off after the function** (``\\n\\ndef rand`` at the end, the token budget spent) is trimmed
  at the start of its last top-level definitions, as SandboxFusion's completion-mode stop rule cuts at the next
  top-level line; only trailing ``def``/``class``/decorator lines are cut, only when the rest parses and still
  defines the entry point, and the reason says so.
- **No fence at all**: the completion (after a ``</think>`` reasoning block) is graded as a program when it parses
  as Python (trimmed as above) and defines a tested name; with no tested name (stdio), when it parses and calls
  ``print``/``input`` or reads ``sys.stdin``. Prose does not parse, and a lone word or number defines nothing.

>>> extract_code("Here:\\n```python\\nprint(1)\\n```\\nand\\n```python\\nprint(2)\\n```", "python")
'print(2)\\n'
>>> extract_program("```python\\ndef f(x):\\n    return x\\n```\\n```python\\nprint(f(3))\\n```", "python",
...                 entry_points=frozenset({"f"})).code
'def f(x):\\n    return x\\n'
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Literal

#: An opening fence line (matched against one line, so its cost is that line's length).
OPENER = re.compile(r"[ \t]*(`{3,}|~{3,})[ \t]*([\w+#.-]*)")
#: A closing fence line: nothing but the fence and blanks.
CLOSER = re.compile(r"[ \t]*(`{3,}|~{3,})[ \t\r]*")
TAGS = {
    "python": {"python", "py", "python3", "py3"},
    "cpp": {"cpp", "c++", "cc", "cxx", "hpp"},
    "javascript": {"javascript", "js", "node", "nodejs", "mjs"},
    "java": {"java"},
    "go": {"go", "golang"},
    "rust": {"rust", "rs"},
}

Which = Literal["last", "first", "raw"]


def _lines(text: str) -> Iterator[tuple[int, int]]:
    """(start, end) of every line, ``end`` excluding its ``\\n``."""
    start, size = 0, len(text)
    while start <= size:
        end = text.find("\n", start)
        if end < 0:
            yield start, size
            return
        yield start, end
        start = end + 1


def code_blocks(text: str) -> list[tuple[str, str]]:
    """(tag, body) of every closed fenced block, in order; a final unclosed fence counts as a block."""
    blocks: list[tuple[str, str]] = []
    fence = ""  # the open block's fence; "" when outside a block
    tag, body_start = "", 0
    for start, end in _lines(text):
        if fence:
            closer = CLOSER.fullmatch(text, start, end)
            if closer and closer.group(1)[0] == fence[0] and len(closer.group(1)) >= len(fence):
                blocks.append((tag, text[body_start:start]))
                fence = ""
            continue
        opener = OPENER.match(text, start, end)
        if opener is None or end == len(text):  # a fence on the last line opens nothing
            continue
        fence, tag, body_start = opener.group(1), opener.group(2).lower(), end + 1
    if fence and text[body_start:].strip():
        blocks.append((tag, text[body_start:]))
    return blocks


def extract_code(text: str, language: str, which: Which = "last", allow_untagged: bool = True) -> str | None:
    """The chosen block tagged with ``language`` (else, if allowed, an untagged one); ``raw``: the whole text.

    Returns ``None`` when there is no such block: the completion offered no program.
    """
    if which == "raw":
        return text if text.strip() else None
    blocks = code_blocks(text)
    tags = TAGS.get(language, {language})
    tagged = [body for tag, body in blocks if tag in tags]
    candidates = tagged or ([body for tag, body in blocks if not tag] if allow_untagged else [])
    if not candidates:
        return None
    body = candidates[-1] if which == "last" else candidates[0]
    return body if body.strip() else None


# --------------------------------------------------------------------------------------------- python as written
#: Trailing top-level definitions tried when a program does not parse (a cut-off tail is one or two of them).
MAX_TRIMS = 4
#: Programs longer than this are not trimmed: each attempt parses the program again, on the host.
MAX_TRIM_CHARS = 200_000
_REASONING_END = "</think>"


@dataclass(frozen=True)
class Extracted:
    """The program to run and, when it is not simply the chosen block as written, what was done (for the reason)."""

    code: str
    note: str = ""


def _tree(code: str) -> ast.Module | None:
    try:
        return ast.parse(code)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def _defined(tree: ast.Module) -> set[str]:
    """Top-level names a program binds: functions, classes, assignments, imports."""
    names: set[str] = set()
    for statement in tree.body:
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(statement.name)
        elif isinstance(statement, (ast.Assign, ast.AnnAssign)):
            targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
            names |= {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
        elif isinstance(statement, (ast.Import, ast.ImportFrom)):
            names |= {(a.asname or a.name).split(".")[0] for a in statement.names}
    return names


def _runs_stdio(tree: ast.Module) -> bool:
    """A program with no tested name must at least talk to stdin/stdout to be taken for one."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("print", "input"):
            return True
        if isinstance(node, ast.Attribute) and node.attr in ("stdin", "stdout") and _is_name(node.value, "sys"):
            return True
    return False


def _is_name(node: ast.expr, name: str) -> bool:
    return isinstance(node, ast.Name) and node.id == name


def _qualifies(tree: ast.Module, entry_points: frozenset[str]) -> bool:
    return bool(_defined(tree) & entry_points) if entry_points else _runs_stdio(tree)


def _trimmed(code: str, entry_points: frozenset[str]) -> Extracted | None:
    """``code`` less its cut-off trailing top-level definitions, when what is left parses and qualifies."""
    if len(code) > MAX_TRIM_CHARS:
        return None
    starts = [m.start() for m in re.finditer(r"(?m)^(?=@|def |async def |class )", code)]
    for cut in reversed(starts[-MAX_TRIMS:]):
        head = code[:cut]
        tree = _tree(head) if head.strip() else None
        if tree is not None and _qualifies(tree, entry_points):
            line = code.count("\n", 0, cut) + 1
            return Extracted(head, f"trimmed a cut-off definition at the end (line {line} on)")
    return None


def _as_program(code: str, entry_points: frozenset[str]) -> Extracted | None:
    """``code`` as it is or trimmed, when it parses and qualifies (defines an entry point, or runs stdio)."""
    tree = _tree(code)
    if tree is not None:
        return Extracted(code) if _qualifies(tree, entry_points) else None
    return _trimmed(code, entry_points)


def _might_define(code: str, entry_points: frozenset[str]) -> bool:
    """A cheap look for a top-level binding of an entry point before any parse (most blocks are not solutions)."""
    names = "|".join(re.escape(n) for n in sorted(entry_points))
    binding = (
        rf"(?m)^(?:(?:async\s+)?def|class)\s+(?:{names})\b|^(?:{names})\s*[:=]|^(?:from|import)\s.*\b(?:{names})\b"
    )
    return re.search(binding, code) is not None


def extract_program(
    text: str,
    language: str,
    which: Which = "last",
    allow_untagged: bool = True,
    entry_points: frozenset[str] = frozenset(),
) -> Extracted | None:
    """The program a completion offers (see the module docstring for Python's rules); ``None``: it offers none.

    Other languages, and ``which="raw"``, follow :func:`extract_code` exactly.
    """
    if language != "python" or which == "raw":
        code = extract_code(text, language, which, allow_untagged)
        return None if code is None else Extracted(code)
    blocks = code_blocks(text)
    tags = TAGS["python"]
    tagged = [body for tag, body in blocks if tag in tags]
    candidates = [
        b for b in (tagged or ([body for tag, body in blocks if not tag] if allow_untagged else [])) if b.strip()
    ]
    if not candidates:
        return _unfenced(text, entry_points) if not blocks else None
    ordered = list(enumerate(candidates, start=1))
    if which == "last":
        ordered.reverse()
    if entry_points:
        for rank, (number, body) in enumerate(ordered):
            found = _as_program(body, entry_points) if _might_define(body, entry_points) else None
            if found is None:
                continue
            if rank == 0:
                return found
            defines = ", ".join(sorted(entry_points))
            note = f"graded block {number} of {len(candidates)}, the {which} one that defines {defines}"
            return Extracted(found.code, "; ".join(filter(None, [note, found.note])))
    chosen = ordered[0][1]
    if _tree(chosen) is None:
        trimmed = _trimmed(chosen, entry_points)
        if trimmed is not None:
            return trimmed
    return Extracted(chosen)


def _unfenced(text: str, entry_points: frozenset[str]) -> Extracted | None:
    """No fence at all: the completion (after its reasoning block) is a program when it parses and qualifies."""
    body = text.rsplit(_REASONING_END, 1)[-1].lstrip("\n") if _REASONING_END in text else text
    if not body.strip():
        return None
    found = _as_program(body, entry_points)
    if found is None:
        return None
    tree = _tree(found.code)
    defined = sorted(_defined(tree) & entry_points) if tree is not None else []
    what = f"defines {', '.join(defined)}" if entry_points else "reads stdin or prints"
    note = f"no code fence: the whole completion is a Python program that {what}"
    return Extracted(found.code, "; ".join(filter(None, [note, found.note])))
