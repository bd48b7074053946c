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

BoxChoice = Literal["last", "first", "collect"]

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
#: One whole number token: sign, thousands separators, decimals and a fraction (``-1,234.5``, ``1/2``), so that
#: "The ratio is 1/2." is read as 1/2, never as its last integer.
_NUMBER = re.compile(r"[-+]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:/\d+(?:\.\d+)?)?|[-+]?\.\d+")
#: What may stand next to a number that is a value of its own (not a digit of 2x, x^2, \frac{1}{2}, a_3).
_STANDALONE_BEFORE = re.compile(r"(?:^|[\s($=:\[])$")
_STANDALONE_AFTER = re.compile(r"(?:$|[\s)$\].,;:!?%€£¥°]|(?:[cmkd]?m|ft|in)[²³](?![A-Za-z]))")
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
    return [content for _, _, content in boxed_spans(text)]


def boxed_spans(text: str) -> list[tuple[int, int, str]]:
    """``(start, end, content)`` of every outermost box, in order (see :func:`boxed_contents`)."""
    found: list[tuple[int, int, str]] = []
    pos = 0
    while True:
        match = _BOX_COMMAND.search(text, pos)
        if match is None:
            return found
        i = match.end()
        while i < len(text) and text[i] in " \t":
            i += 1
        if i < len(text) and text[i] == "{":
            end = closing_brace(text, i)
            if end is None:
                return found
            found.append((match.start(), end + 1, text[i + 1 : end].strip()))
            pos = end + 1
        else:
            token = re.match(r"[^\s$]+", text[i:]) if match.group(0) == r"\boxed" else None
            if token:
                found.append((match.start(), i + token.end(), token.group(0).rstrip(".,")))
                pos = i + token.end()
            else:
                pos = match.end()


#: What may stand between two boxes that answer parts of one question: spaces, math delimiters,
#: punctuation, "and"/"or", a ``\text{…}`` connective (math-verify collects boxes joined by ",", "and", "or").
_BOX_GAP = re.compile(
    r"(?:\s|\$|\\[()\[\]]|[,;.]|\\q?quad|\\[,;]|\b(?:and|or)\b|\\text\{[^{}$]*\})*"
    r"(?P<label>(?:[A-Za-z](?:_\{?\w+\}?)?|\\[A-Za-z]+)\s*=\s*)?(?:\$|\\[(\[]|\s)*"
)
_LABEL_BEFORE = re.compile(r"(?P<label>(?:[A-Za-z](?:_\{?\w+\}?)?|\\[A-Za-z]+)\s*=\s*)(?:\$|\\[(\[]|\s)*$")
_MAX_LABEL_LOOKBACK = 40
_MAX_BOX_GAP = 120  # also keeps the gap regex's backtracking bounded


def final_boxes(text: str, spans: list[tuple[int, int, str]]) -> tuple[list[str], int]:
    r"""The last group of adjacent boxes (``\boxed{2}`` and ``\boxed{3}``, ``$a=\boxed{2}$, $b=\boxed{3}$``),
    each with its label (``a=2``) when it has one, and where the group ends."""
    group = [len(spans) - 1]
    while group[-1] > 0:
        before, after = spans[group[-1] - 1], spans[group[-1]]
        if after[0] - before[1] > _MAX_BOX_GAP or not _BOX_GAP.fullmatch(text, before[1], after[0]):
            break
        group.append(group[-1] - 1)
    parts = []
    for index in reversed(group):
        start, _, content = spans[index]
        content = strip_math_delimiters(_unwrap_nested_boxes(content))
        lookback = text[max(0, start - _MAX_LABEL_LOOKBACK) : start]
        label = _LABEL_BEFORE.search(lookback) if len(group) > 1 else None
        parts.append(f"{label.group('label').strip()} {content}" if label else content)
    return parts, spans[-1][1]


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


def closing_brace(text: str, open_index: int) -> int | None:
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
    return anchored_answer(text)[1]


def anchored_answer(text: str) -> tuple[int, str | None]:
    """Where the last anchor phrase starts (-1 if none) and the answer it states.

    The first math span on its line is the answer; else the line up to the end of the sentence. A
    sentence of prose (``the answer is that Jane planted 7 trees``) holding one number gives that number.
    """
    last = None
    for last in _ANCHOR.finditer(text):  # noqa: B007 - we want the last match
        pass
    if last is None:
        return -1, None
    tail = text[last.end() :].lstrip(" \t*:")
    tail = tail.lstrip("\n ")
    line = tail.split("\n", 1)[0].strip()[:_MAX_ANCHOR_TAIL]
    for opening, closing in ((r"\[", r"\]"), ("$$", "$$")):
        end = tail.find(closing, len(opening), _MAX_ANCHOR_TAIL)
        if line == opening and end > 0:  # "Answer:" then a display on lines of its own: the display
            line = " ".join(tail[: end + len(closing)].split())
            break
    line = _after_subject(line)
    math = _MATH_SPAN.search(line)
    if math:
        spans = [next(g for g in math.groups() if g is not None)]
        while (nxt := _MATH_SPAN.match(line, _joint_end(line, math.end()))) and nxt.end() > math.end():
            spans.append(next(g for g in nxt.groups() if g is not None))  # "$12$ and $13$": one answer, two parts
            math = nxt
        candidate = ", ".join(part.strip() for part in spans)
    else:
        cut = _SENTENCE_END.search(line)
        candidate = line[: cut.start()] if cut else line
        candidate = _number_in_prose(candidate) or candidate
    candidate = candidate.strip().strip("*").strip().rstrip(".,;:!").strip()
    candidate = strip_math_delimiters(candidate)
    if candidate.count("{") > candidate.count("}"):  # "the answer is \boxed{7" cut off mid-box
        candidate = re.sub(r"^\\(?:boxed|fbox)\s*\{", "", candidate)
    return last.start(), candidate or None


_SPAN_JOIN = re.compile(r"\s*(?:,|;|\band\b|\bor\b)?\s*")
_SUBJECT_IS = re.compile(r"(?:the\s+)?[A-Za-z][^.=]{0,80}?\s(?:is|are|equals|was)\s+(?=[-+$\\\d(\[{])", re.I)


def _joint_end(line: str, start: int) -> int:
    """Where the joint between two math spans (``, ``, `` and ``) that begins at ``start`` ends."""
    joint = _SPAN_JOIN.match(line, start)  # every part is optional: it matches (maybe empty) anywhere
    return joint.end() if joint else start


def _after_subject(line: str) -> str:
    """``The volume of $ABCDEFGH$ is 120.`` → ``120.``: the value after "is", not the named object."""
    m = _SUBJECT_IS.match(line)
    return line[m.end() :] if m else line


_PROSE_WORD = re.compile(r"\b[A-Za-z]{2,}\b")
#: Words that make a sentence's number something other than its answer.
_PROSE_HEDGE = re.compile(
    r"\b(?:not|no|never|isn't|wasn't|cannot|can't|approx\w*|about|around|roughly|nearly|almost|maybe|perhaps|"
    r"probably|least|most|more|less|than|between|or|either|except|unless|if)\b",
    re.I,
)


def _number_in_prose(candidate: str) -> str | None:
    """The one number in a sentence of at least three words; ``None`` when it is not such a sentence, or when the
    sentence hedges or negates (``it is not 7``, ``about 7``, ``at least 7``)."""
    if len(_PROSE_WORD.findall(candidate)) < 3 or "\\" in candidate or _PROSE_HEDGE.search(candidate):
        return None
    numbers = _NUMBER.findall(candidate)
    return numbers[0].rstrip(",") if len(numbers) == 1 else None


def last_math_span(text: str) -> str | None:
    """The contents of the last ``$…$``/``\\(…\\)``/``\\[…\\]`` span (math-verify's unanchored extraction)."""
    match = None
    for match in _MATH_SPAN.finditer(text):  # noqa: B007
        pass
    if match is None:
        return None
    return next(g for g in match.groups() if g is not None).strip() or None


def last_number(text: str) -> str | None:
    """The last whole number token (``1/2``, ``-3.5``, ``1,000``); ``None`` when it is part of an expression
    (``2x``, ``x^2``, ``\\frac{1}{2}``, ``a_3``): a digit read out of an expression is not its value."""
    match = None
    for match in _NUMBER.finditer(text):  # noqa: B007
        pass
    if match is None:
        return None
    before, after = text[max(0, match.start() - 1) : match.start()], text[match.end() : match.end() + 4]
    if not (_STANDALONE_BEFORE.search(before) and _STANDALONE_AFTER.match(after)):
        return None
    words_before = text[max(0, match.start() - 30) : match.start()].split()[-2:]
    if _PROSE_HEDGE.search(" ".join(words_before)):
        return None  # "it is not 7", "about 7": not a statement of the answer
    return match.group(0).rstrip(",")


def tagged_answer(text: str, tag: str) -> tuple[str | None, str]:
    """The contents of the last complete ``<tag>…</tag>`` and a note; an opened but unclosed last tag (a
    truncated completion) is ignored, as an unclosed box is."""
    opening, closing = f"<{tag}>", f"</{tag}>"
    end = text.rfind(closing)
    last_open = text.rfind(opening)
    note = f"an unclosed {opening} ignored" if last_open > end else ""
    if end < 0:
        return None, note
    start = text.rfind(opening, 0, end)
    if start < 0:
        return None, note
    return text[start + len(opening) : end], note


def extract_answer(
    completion: str,
    *,
    boxed: BoxChoice = "collect",
    anchors: bool = True,
    fallback_last_number: bool = False,
    reasoning_end: str | None = "</think>",
    fallback_last_math: bool = False,
    answer_tag: str | None = "answer",
) -> Extraction:
    r"""The completion's final answer: the ``\boxed{}`` answer, else an anchored phrase, else a completion
    that is only a math span, a number or a short equation (``x = 3``), else (when enabled) the last math span,
    then the last number.

    ``answer_tag``: the last complete ``<answer>…</answer>`` (DeepSeek-R1 style) is where the answer is read,
    by the same rules (a box inside it, an answer phrase, or its whole short contents); an unclosed one is
    ignored like an unclosed box.

    ``boxed``: ``"collect"`` takes the last group of adjacent boxes (``\boxed{2} and \boxed{3}`` is the list
    ``2, 3``; a box's label such as ``a = \boxed{2}`` is kept), ``"last"``/``"first"`` one box. An answer
    phrase stated after the last box ("Final answer: 10,455") overrides it. Only the text after
    ``reasoning_end`` counts when that tag appears; an opened but never closed reasoning block has no answer.
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
    if answer_tag:
        inner, tag_note = tagged_answer(text, answer_tag)
        if inner is not None:
            found = _read_answer(inner, boxed, anchors, fallback_last_number, fallback_last_math)
            if found.text is None and inner.strip() and len(inner) <= _MAX_TAG_ANSWER:
                stripped = strip_math_delimiters(inner.strip().rstrip("."))
                found = Extraction(_number_in_prose(stripped) or stripped, "contents")
            where = f"<{answer_tag}>"
            if found.text is None:
                return Extraction(None, "none", f"nothing in the last {where}")
            return Extraction(found.text, f"{found.method} in {where}", found.note)
        if tag_note:
            found = _read_answer(text, boxed, anchors, fallback_last_number, fallback_last_math)
            return Extraction(found.text, found.method, "; ".join(n for n in (found.note, tag_note) if n))
    return _read_answer(text, boxed, anchors, fallback_last_number, fallback_last_math)


_MAX_TAG_ANSWER = 200
_QUESTION_AFTER = re.compile(r"[\s$]*(?:\\[)\]])?[\s$]*\?")


def _read_answer(
    text: str, boxed: BoxChoice, anchors: bool, fallback_last_number: bool, fallback_last_math: bool
) -> Extraction:
    """The answer in ``text`` by the rules of :func:`extract_answer`, once reasoning and tags are cut away."""
    spans = [span for span in boxed_spans(text) if span[2]]
    if spans and _QUESTION_AFTER.match(text, spans[-1][1]):
        return Extraction(None, "none", "the last \\boxed{} is followed by '?': a question, not an answer")
    anchor_at, stated = anchored_answer(text) if anchors else (-1, None)
    if spans:
        if boxed == "collect":
            parts, end = final_boxes(text, spans)
        else:
            chosen = spans[-1] if boxed == "last" else spans[0]
            parts, end = [strip_math_delimiters(_unwrap_nested_boxes(chosen[2]))], spans[-1][1]
        if stated and anchor_at >= end and _looks_like_math(stated):
            note = f"stated after the last \\boxed{{}} ({parts[-1]!r}), which it overrides"
            return Extraction(stated, "anchor phrase", note)
        if len(parts) > 1:
            note = f"{len(parts)} adjacent boxes collected into a list, as math-verify does"
            return Extraction(", ".join(parts), "collected \\boxed", note)
        taken = "last" if boxed == "collect" else boxed
        note = f"{len(spans)} boxes, took the {taken}" if len(spans) > 1 else ""
        return Extraction(parts[0], f"{taken} \\boxed", note)
    if stated:
        return Extraction(stated, "anchor phrase")
    whole = _whole_answer(text)
    if whole:
        return Extraction(whole, "whole completion")
    closing = closing_line(text)
    if closing:
        return Extraction(closing, "last line")
    if fallback_last_math:
        span = last_math_span(text)
        if span:
            return Extraction(span, "last math span")
    if fallback_last_number:
        number = last_number(text)
        if number:
            return Extraction(number, "last number")
        if _NUMBER.search(text):
            return Extraction(None, "none", "the last number is part of an expression (2x, x^2, \\frac{1}{2})")
    return Extraction(
        None, "none", "no \\boxed{}, no answer phrase" + ("" if fallback_last_number else ", last-number fallback off")
    )


_BARE_NUMBER = re.compile(r"[+-]?(?:\d[\d,]*(?:\.\d+)?|\.\d+)")


_MAX_BARE_LATEX = 80
_WORD = re.compile(r"(?<![\\A-Za-z])[A-Za-z]{3,}")  # a word, not a command such as \frac


#: ``x = 3``, ``3+2``, ``2x + 2``: plain arithmetic with no words and no digits split by a space (``12 3``).
_SHORT_EXPRESSION = re.compile(
    r"(?:[A-Za-z](?:_\{?\w+\}?)?\s*=\s*)?[-+]?[0-9A-Za-z.()]+(?:\s*[-+*/^]\s*[0-9A-Za-z.()]+)*"
)


def _whole_answer(text: str) -> str | None:
    """A completion that is nothing but one math span (``$12$``), one number, a short plain equation or
    expression (``x = 3``, ``2x + 2``) or a short bare LaTeX expression with no words is its own answer."""
    stripped = text.strip().rstrip(".")
    if _BARE_NUMBER.fullmatch(stripped):
        return stripped
    short = len(stripped) <= _MAX_BARE_LATEX and _SHORT_EXPRESSION.fullmatch(stripped)
    if short and re.search(r"\d", stripped) and not _WORD.search(stripped):
        return stripped
    bare = "\\" in stripped and "$" not in stripped and not _BOX_COMMAND.search(stripped)
    if bare and len(stripped) <= _MAX_BARE_LATEX and not _WORD.search(stripped):
        return stripped  # a bare LaTeX answer such as -\frac{10}{9}
    span = _MATH_SPAN.fullmatch(stripped)
    if span:
        inner = next(g for g in span.groups() if g is not None).strip()
        return inner if inner and "$" not in inner else None
    return None


_COMMAND = re.compile(r"\\[A-Za-z]+|\\.")
_BOLD = re.compile(r"(\*\*|__)(?P<inner>.+)\1")
#: A closing statement of the result: "So the sum is $4$.", "Thus the result is **4**."
_CLOSING = re.compile(
    r"(?:(?:so|thus|therefore|hence|finally|altogether|in total)\s*,?\s*)?(?:the\s+)?(?:final\s+)?"
    r"(?:result|value|solution|sum|total|product|difference|quotient|number|remainder)\s+(?:is|equals|=)\s*:?\s*"
    r"(?P<value>.+)",
    re.I,
)
_MAX_CLOSING_LINE = 200


def closing_line(text: str) -> str | None:
    """The answer a completion ends on when it has no box and no answer phrase: a last line that is only the
    answer (``4``, ``**4**``, ``$\\frac{1}{2}$``), or a closing statement of one value ("Thus the result is
    $3$."); ``None`` when that line hedges or negates ("the result is not 3", "about 3") or says more."""
    end = len(text.rstrip())
    start = text.rfind("\n", 0, end) + 1
    line = _unbold(text[start:end].strip().rstrip(".").strip())
    if not line or len(line) > _MAX_CLOSING_LINE:
        return None
    if (whole := _whole_answer(line)) and re.search(r"[0-9A-Za-z]", _COMMAND.sub("", whole)):
        return whole  # a line that is only "\\]" closes a display, it states nothing
    closing = _CLOSING.fullmatch(line)
    if closing is None or _PROSE_HEDGE.search(line):
        return None
    return _whole_answer(_unbold(closing.group("value").strip().rstrip(".").strip()))


def _unbold(text: str) -> str:
    """``**4**`` → ``4`` (markdown bold or underline around all of it)."""
    bold = _BOLD.fullmatch(text)
    return bold.group("inner").strip() if bold else text


def _looks_like_math(text: str) -> bool:
    """An anchored answer that can override a box: it holds a digit or LaTeX, not only words."""
    return bool(re.search(r"[\d\\]", text))


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
    inner, _ = tagged_answer(text, "answer")
    if inner is not None and inner.strip():
        text = inner.strip()
    if "####" in text:
        line = text.rsplit("####", 1)[1].strip().split("\n", 1)[0].strip()
        return Extraction(strip_math_delimiters(line) or None, "#### line")
    spans = [span for span in boxed_spans(text) if span[2]]
    if spans:
        parts, _ = final_boxes(text, spans)
        if len(parts) > 1:
            return Extraction(", ".join(parts), "collected \\boxed", f"{len(parts)} adjacent boxes")
        return Extraction(parts[0], "last \\boxed")
    inner = strip_math_delimiters(text)
    if inner != text:
        return Extraction(inner, "math delimiters")
    stated = answer_after_anchor(text)
    if stated:
        return Extraction(stated, "anchor phrase")
    if "\n" in text or len(text) > 200:
        math_spans = [next(g for g in m.groups() if g is not None) for m in _MATH_SPAN.finditer(text)]
        if math_spans:
            return Extraction(math_spans[-1].strip(), "last math span")
    return Extraction(text, "raw")
