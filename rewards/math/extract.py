"""Find the final answer in a completion and the reference answer in a gold column, as LaTeX strings.

Pure string functions with linear-time scans (megabyte completions, unbalanced braces and deep
nesting cost milliseconds, never a hang). Extraction is kept apart from grading so each can be
tested with a verdict table:

>>> extract_answer(r"<think>maybe 3</think> So \\boxed{7}.").text
'7'
>>> extract_gold("Natalia sold 48 clips ... #### 72").text
'72'
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Literal

BoxChoice = Literal["last", "first"]

_BOX_COMMAND = re.compile(r"\\(?:boxed|fbox)(?![A-Za-z])")
_BRACE_OR_ESCAPE = re.compile(r"\\.|[{}]", re.S)
_ANCHOR = re.compile(
    r"(?:####"
    r"|\*\*\s*(?:final\s+)?answer\s*:?\s*\*\*\s*:?"
    r"|(?:final\s+)?answer\s*(?:is\s*:?|:|=)"
    r")",
    re.I,
)
_MATH_SPAN = re.compile(r"\$\$(.+?)\$\$|\$(.+?)\$|\\\((.+?)\\\)|\\\[(.+?)\\\]", re.S)
_SENTENCE_END = re.compile(r"\.(?:\s|$)|,?\s+(?:because|since|which|as)\b", re.I)
_NUMBER = re.compile(r"-?\d[\d,]*(?:\.\d+)?|-?\.\d+")
_MAX_ANCHOR_TAIL = 300


@dataclass(frozen=True)
class Extraction:
    """An extracted answer (``text``, LaTeX without delimiters) and how it was found (``method``)."""

    text: str | None
    method: str
    note: str = ""

    def describe(self) -> str:
        if self.text is None:
            return f"nothing ({self.note or self.method})"
        shown = self.text if len(self.text) <= 80 else self.text[:77] + "..."
        return f"{shown!r} via {self.method}" + (f" ({self.note})" if self.note else "")


def boxed_contents(text: str) -> list[str]:
    r"""Contents of every outermost ``\boxed{...}``/``\fbox{...}`` (also ``\boxed 5``), in order.

    An unclosed box (a truncated completion) is ignored.
    """
    found: list[str] = []
    pos = 0
    while True:
        match = _BOX_COMMAND.search(text, pos)
        if match is None:
            return found
        i = match.end()
        while i < len(text) and text[i] in " \t":
            i += 1
        if i < len(text) and text[i] == "{":
            end = _closing_brace(text, i)
            if end is None:
                return found
            found.append(text[i + 1 : end].strip())
            pos = end + 1
        else:
            token = re.match(r"[^\s$]+", text[i:]) if match.group(0) == r"\boxed" else None
            if token:
                found.append(token.group(0).rstrip(".,"))
                pos = i + token.end()
            else:
                pos = match.end()


def _unwrap_nested_boxes(content: str) -> str:
    r"""``\boxed{\boxed{7}}`` → ``7`` in linear time, however deep."""
    prefix = re.match(r"(?:\\(?:boxed|fbox)\s*\{)+", content)
    if prefix is None:
        return content
    layers = prefix.group(0).count("{")
    if not content.endswith("}" * layers):
        return content
    inner = content[prefix.end() : len(content) - layers]
    return inner if inner.count("{") == inner.count("}") else content


def _closing_brace(text: str, open_index: int) -> int | None:
    depth = 0
    for m in _BRACE_OR_ESCAPE.finditer(text, open_index):
        token = m.group(0)
        if token == "{":
            depth += 1
        elif token == "}":
            depth -= 1
            if depth == 0:
                return m.start()
    return None


def strip_math_delimiters(text: str) -> str:
    r"""``$x$``, ``$$x$$``, ``\(x\)``, ``\[x\]`` → ``x`` (repeatedly); other text unchanged."""
    s = text.strip()
    for _ in range(4):
        before = s
        for left, right in (("$$", "$$"), ("$", "$"), (r"\(", r"\)"), (r"\[", r"\]")):
            if len(s) >= len(left) + len(right) and s.startswith(left) and s.endswith(right):
                s = s[len(left) : len(s) - len(right)].strip()
                break
        if s == before:
            return s
    return s


def answer_after_anchor(text: str) -> str | None:
    """The answer stated after the last anchor phrase ("the answer is", "Final answer:", "####", ...)."""
    last = None
    for last in _ANCHOR.finditer(text):  # noqa: B007 - we want the last match
        pass
    if last is None:
        return None
    tail = text[last.end() :].lstrip(" \t*:")
    tail = tail.lstrip("\n ")
    line = tail.split("\n", 1)[0].strip()[:_MAX_ANCHOR_TAIL]
    math = _MATH_SPAN.search(line)
    if math:
        candidate = next(g for g in math.groups() if g is not None)
    else:
        cut = _SENTENCE_END.search(line)
        candidate = line[: cut.start()] if cut else line
    candidate = candidate.strip().strip("*").strip().rstrip(".,;:!").strip()
    candidate = strip_math_delimiters(candidate)
    if candidate.count("{") > candidate.count("}"):  # "the answer is \boxed{7" cut off mid-box
        candidate = re.sub(r"^\\(?:boxed|fbox)\s*\{", "", candidate)
    return candidate or None


def last_number(text: str) -> str | None:
    match = None
    for match in _NUMBER.finditer(text):  # noqa: B007
        pass
    return match.group(0).rstrip(",") if match else None


def extract_answer(
    completion: str,
    *,
    boxed: BoxChoice = "last",
    anchors: bool = True,
    fallback_last_number: bool = False,
    reasoning_end: str | None = "</think>",
) -> Extraction:
    r"""The completion's final answer: a ``\boxed{}`` (last by default), else an anchored phrase, else
    (when enabled) the last number. Only the text after ``reasoning_end`` counts when that tag appears;
    an opened but never closed reasoning block has no answer.
    """
    text = completion
    if reasoning_end:
        cut = text.rfind(reasoning_end)
        if cut >= 0:
            text = text[cut + len(reasoning_end) :]
        elif reasoning_end.startswith("</") and ("<" + reasoning_end[2:]) in text:
            return Extraction(None, "none", f"reasoning block never closed with {reasoning_end}")
    if not text.strip():
        return Extraction(None, "none", "empty completion")
    boxes = [b for b in boxed_contents(text) if b]
    if boxes:
        chosen = _unwrap_nested_boxes(boxes[-1] if boxed == "last" else boxes[0])
        note = f"{len(boxes)} boxes, took the {boxed}" if len(boxes) > 1 else ""
        return Extraction(strip_math_delimiters(chosen), f"{boxed} \\boxed", note)
    if anchors:
        stated = answer_after_anchor(text)
        if stated:
            return Extraction(stated, "anchor phrase")
    if fallback_last_number:
        number = last_number(text)
        if number:
            return Extraction(number, "last number")
    return Extraction(
        None, "none", "no \\boxed{}, no answer phrase" + ("" if fallback_last_number else ", last-number fallback off")
    )


def extract_gold(raw: Any) -> Extraction:
    r"""The reference answer from a dataset cell.

    Accepts raw LaTeX (``2^{3}``, ``y=2x+1``, ``(0, 3]``) read as a whole, ``$…$``, a ``\boxed{}``
    anywhere in a worked solution (the last box), a GSM8K ``#### 72`` line, a plain number (int,
    float, Fraction) or a choice letter. ``None``/empty/other types give ``text=None``.
    """
    if raw is None or isinstance(raw, bool):
        return Extraction(None, "none", "gold is missing")
    if isinstance(raw, (int, Fraction)):
        return Extraction(str(raw), "number")
    if isinstance(raw, float):
        if raw != raw or raw in (float("inf"), float("-inf")):
            return Extraction(None, "none", f"gold is {raw}")
        return Extraction(repr(raw), "number")
    if not isinstance(raw, str):
        return Extraction(None, "none", f"gold is a {type(raw).__name__}, not text")
    text = raw.strip()
    if not text:
        return Extraction(None, "none", "gold is empty")
    if "####" in text:
        line = text.rsplit("####", 1)[1].strip().split("\n", 1)[0].strip()
        return Extraction(strip_math_delimiters(line) or None, "#### line")
    boxes = [b for b in boxed_contents(text) if b]
    if boxes:
        return Extraction(strip_math_delimiters(boxes[-1]), "last \\boxed")
    inner = strip_math_delimiters(text)
    if inner != text:
        return Extraction(inner, "math delimiters")
    stated = answer_after_anchor(text)
    if stated:
        return Extraction(stated, "anchor phrase")
    if "\n" in text or len(text) > 200:
        spans = [next(g for g in m.groups() if g is not None) for m in _MATH_SPAN.finditer(text)]
        if spans:
            return Extraction(spans[-1].strip(), "last math span")
    return Extraction(text, "raw")
