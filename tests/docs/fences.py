"""The fenced examples of README.md and docs/: parsed with their info strings, grouped by page.

A fence's info string is its language and options (``python continue``, ``bash run exit="1"``,
``python needs="docker" server="rewardsmith sandbox serve --port 8080"``, ``python skip="why"``); the table of
options is in docs/development.md ("How the examples are tested").
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
#: Languages whose fences are examples: each must be run or say why not.
EXAMPLE_LANGUAGES = ("python", "bash", "sh", "console", "shell")
KNOWN_OPTIONS = {"run", "continue", "output", "skip", "needs", "server", "exit", "file", "timeout"}
_FENCE = re.compile(r"^(?P<indent> *)(?P<ticks>`{3,})(?P<info>[^`]*)$")
#: A whole-line snippet include (pymdownx.snippets, base path docs/examples/): the page shows the file, so the test
#: runs the file.
_INCLUDE = re.compile(r'^--8<-- "(?P<name>[^"]+)"$', re.MULTILINE)
EXAMPLES = ROOT / "docs" / "examples"


@dataclass
class Fence:
    page: str
    line: int  # 1-based line of the opening fence
    language: str
    options: dict[str, str]
    body: str
    previous_text: str = ""  # the prose between the previous fence and this one

    @property
    def id(self) -> str:
        return f"{self.page}:{self.line}"

    def needs(self) -> list[str]:
        return [n for n in self.options.get("needs", "").split(",") if n]

    def is_example(self) -> bool:
        return self.language in EXAMPLE_LANGUAGES


@dataclass
class Page:
    path: str
    fences: list[Fence] = field(default_factory=list)


def parse_info(info: str) -> tuple[str, dict[str, str]]:
    words = shlex.split(info.strip()) if info.strip() else []
    language = words[0] if words and "=" not in words[0] else ""
    options: dict[str, str] = {}
    for word in words[1:] if language else words:
        key, sep, value = word.partition("=")
        options[key] = value if sep else "true"
    return language, options


def parse_page(path: Path) -> Page:
    rel = path.relative_to(ROOT).as_posix()
    page = Page(rel)
    lines = path.read_text().splitlines()
    i, prose_start = 0, 0
    while i < len(lines):
        m = _FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        indent, ticks = len(m["indent"]), m["ticks"]
        language, options = parse_info(m["info"])
        body, j = [], i + 1
        while j < len(lines) and not re.match(rf"^ {{0,{indent + 3}}}{ticks}\s*$", lines[j]):
            body.append(lines[j][indent:] if lines[j].startswith(" " * indent) else lines[j].lstrip())
            j += 1
        text = _INCLUDE.sub(lambda m: (EXAMPLES / m["name"]).read_text().rstrip("\n"), "\n".join(body) + "\n")
        page.fences.append(Fence(rel, i + 1, language, options, text, "\n".join(lines[prose_start:i])))
        i = prose_start = j + 1
    return page


def pages() -> list[Page]:
    paths = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
    return [parse_page(p) for p in paths if p.exists()]


def problems(fence: Fence) -> list[str]:
    """What is wrong with a fence's info string (an unknown option, an untested example)."""
    found = [f"unknown option {key!r}" for key in fence.options if key not in KNOWN_OPTIONS]
    if fence.language == "python" and "output" in fence.options:
        found.append("'output' belongs on a text fence")
    if fence.language in ("bash", "sh", "shell", "console") and not ({"run", "skip"} & fence.options.keys()):
        found.append('a shell example must be run (`bash run`) or skipped with a reason (`bash skip="..."`)')
    if "skip" in fence.options and fence.options["skip"] in ("", "true"):
        found.append('skip needs a reason: skip="..."')
    return found
