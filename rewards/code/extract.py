"""Pull the program out of a completion: a fenced code block in the target language.

>>> extract_code("Here:\\n```python\\nprint(1)\\n```\\nand\\n```python\\nprint(2)\\n```", "python")
'print(2)\\n'
"""

from __future__ import annotations

import re
from typing import Literal

FENCE = re.compile(r"^[ \t]*(`{3,}|~{3,})[ \t]*([\w+#.-]*)[^\n]*\n(.*?)^[ \t]*\1[ \t]*$", re.DOTALL | re.MULTILINE)
UNCLOSED = re.compile(r"^[ \t]*(`{3,}|~{3,})[ \t]*([\w+#.-]*)[^\n]*\n(.*)\Z", re.DOTALL | re.MULTILINE)
TAGS = {
    "python": {"python", "py", "python3", "py3"},
    "cpp": {"cpp", "c++", "cc", "cxx", "hpp"},
    "javascript": {"javascript", "js", "node", "nodejs", "mjs"},
    "java": {"java"},
    "go": {"go", "golang"},
    "rust": {"rust", "rs"},
}

Which = Literal["last", "first", "raw"]


def code_blocks(text: str) -> list[tuple[str, str]]:
    """(tag, body) of every closed fenced block, in order; a final unclosed fence counts as a block."""
    blocks = [(m.group(2).lower(), m.group(3)) for m in FENCE.finditer(text)]
    tail_start = 0
    for m in FENCE.finditer(text):
        tail_start = m.end()
    unclosed = UNCLOSED.search(text, tail_start)
    if unclosed is not None and unclosed.group(3).strip():
        blocks.append((unclosed.group(2).lower(), unclosed.group(3)))
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
