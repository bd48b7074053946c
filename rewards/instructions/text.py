"""Linear-time text measurements the instruction checkers share: words, sentences, lines, bracketed spans.

IFEval's reference checkers use regular expressions such as ``\\[.*?\\]`` and ``^\\s*\\*[^\\*].*$`` that
backtrack quadratically on adversarial input (a line of ten thousand ``[``). The scanners here compute
the same counts in one pass, so a policy cannot stall training by emitting bracket soup.
"""

from __future__ import annotations

import re

_WORD = re.compile(r"\w+")
_TOKEN = re.compile(r"\w+|[^\w\s]")
_SENTENCE_END = re.compile(r"(?<![.!?])[.!?]+[\"')\]]*(?=\s|$)")  # starts a run only: no re-scans
_ABBREVIATIONS = frozenset(
    [
        "mr",
        "mrs",
        "ms",
        "dr",
        "prof",
        "sr",
        "jr",
        "st",
        "vs",
        "etc",
        "e.g",
        "i.e",
        "inc",
        "ltd",
        "co",
        "corp",
        "fig",
        "no",
        "vol",
        "approx",
        "dept",
        "est",
        "jan",
        "feb",
        "mar",
        "apr",
        "jun",
        "jul",
        "aug",
        "sep",
        "sept",
        "oct",
        "nov",
        "dec",
        "u.s",
        "u.k",
        "a.m",
        "p.m",
    ]
)


def count_words(text: str) -> int:
    """Runs of word characters, as IFEval counts words (nltk's ``RegexpTokenizer(r"\\w+")``)."""
    return sum(1 for _ in _WORD.finditer(text))


def capital_words(text: str) -> int:
    """Tokens (word runs and single punctuation marks) that are all upper case, like ``DO`` and ``N'T``."""
    return sum(1 for m in _TOKEN.finditer(text) if m.group().isupper())


def count_sentences(text: str) -> int:
    """Sentences: text ending in ``.``, ``!`` or ``?`` before whitespace or the end, or a trailing fragment.

    A period after a common abbreviation (``Dr.``, ``e.g.``), a single capital initial (``J. Smith``) or a
    number (``3. item``) does not end a sentence. This approximates the Punkt model IFEval loads from nltk,
    which is not available offline.
    """
    count, start = 0, 0
    for match in _SENTENCE_END.finditer(text):
        if match.group().startswith(".") and len(match.group().rstrip("\"')]")) == 1:
            before = text[max(start, match.start() - 16) : match.start()].rsplit(None, 1)
            last = before[-1].lower() if before else ""
            if last in _ABBREVIATIONS or (len(last) == 1 and last.isalpha()) or last.isdigit():
                continue
        if text[start : match.end()].strip(" \t\n\r\"')].!?"):
            count += 1
        start = match.end()
    if text[start:].strip():
        count += 1
    return count


def count_placeholders(text: str) -> int:
    """Non-overlapping ``[...]`` spans on one line (IFEval's ``\\[.*?\\]``), counted in one pass."""
    count, i, n = 0, 0, len(text)
    while i < n:
        open_at = text.find("[", i)
        if open_at < 0:
            break
        line_end = text.find("\n", open_at)
        line_end = n if line_end < 0 else line_end
        close_at = text.find("]", open_at + 1, line_end)
        if close_at < 0:
            i = line_end + 1  # no closing bracket before the line ends: no later '[' on this line can close either
            continue
        count += 1
        i = close_at + 1
    return count


def count_bullets(text: str) -> int:
    """Markdown bullet lines as IFEval counts them: ``^\\s*\\*[^\\*].*$`` plus ``^\\s*-.*$`` (multiline).

    A line whose first non-blank character is ``*`` counts when the next character is not ``*``; a bare
    ``*`` at the end of a line counts and swallows the following line (the reference's ``[^\\*]`` matches the
    newline), and a bare ``*`` at the very end counts nothing. A line starting with ``-`` counts once.
    """
    lines = text.split("\n")
    stars, dashes, skip = 0, 0, False
    for index, line in enumerate(lines):
        body = line.lstrip()
        if body.startswith("-"):
            dashes += 1
        if skip:
            skip = False
            continue
        if not body.startswith("*"):
            continue
        if len(body) >= 2:
            stars += body[1] != "*"
        elif index + 1 < len(lines):
            stars += 1
            skip = True
    return stars + dashes


def has_title(text: str) -> bool:
    """A ``<<title>>`` on one line with something besides brackets and blanks inside (IFEval's ``<<[^\\n]+>>``)."""
    for line in text.split("\n"):
        start = line.find("<<")
        if start < 0:
            continue
        end = line.rfind(">>")
        if end >= start + 3 and line[start : end + 2].lstrip("<").rstrip(">").strip():
            return True
    return False


def after_thinking(text: str, closing: str = "</think>") -> str:
    """The text after the last ``closing`` tag (the answer of a reasoning model), or all of it without one."""
    at = text.rfind(closing)
    return text if at < 0 else text[at + len(closing) :]
