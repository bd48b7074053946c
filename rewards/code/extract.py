"""Pull the program out of a completion: a fenced code block in the target language.

One pass over the lines, so the time is linear in the completion's length whatever it holds (a regex that
looks ahead for each opening fence's closer is quadratic on a completion full of unclosed fences, and that
work runs on the host, outside every sandbox timeout). The rules are CommonMark's: a fence is a line of three
or more backticks or tildes (any indentation) with an optional tag; the block ends at a line holding only a
fence of the same character at least as long; a fence never closed runs to the end of the text.

>>> extract_code("Here:\\n```python\\nprint(1)\\n```\\nand\\n```python\\nprint(2)\\n```", "python")
'print(2)\\n'
"""

from __future__ import annotations

import re
from collections.abc import Iterator
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
