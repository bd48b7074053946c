"""RLVR single-constraint ground truth: ``{"func_name": "validate_lowercase", "N": null, ...}``.

Tülu 3's RLVR instruction data (open-instruct's ``if_functions``) names one verification function per row, with its
arguments beside it and the unused ones ``null``. Each function here keeps that function's meaning — exact counts,
"around" as within 10 % (at least one) for words and capital words and within one for sentences, paragraphs
separated by ``* * *`` — while every scan stays linear and a bad argument is an error, not an exception in training.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from typing import Any

from rewardsmith.rewards.instructions import language
from rewardsmith.rewards.instructions.checkers import (
    Check,
    ConstraintError,
    _int,
    _text,
    _texts,
    build_check,
)
from rewardsmith.rewards.instructions.text import count_placeholders

_SENTENCE_SPLIT = re.compile(r"(?<!\w\.\w.)(?<![A-Z][a-z]\.)(?<=\.|\?|!)\s")
_CAPITAL_WORD = re.compile(r"\b[A-Z]+\b")
_WORD = re.compile(r"\b\w+\b")


def _quantified(actual: int, n: int, quantifier: Any, around: int) -> bool:
    if quantifier == "at least":
        return actual >= n
    if quantifier == "at most":
        return actual <= n
    if quantifier == "around":
        return abs(actual - n) <= around
    raise ConstraintError(f"quantifier must be 'at least', 'around' or 'at most', got {quantifier!r}")


def _ten_percent(n: int) -> int:
    return max(round(n * 0.1), 1)


def _quantifier(args: Mapping[str, Any]) -> str:
    quantifier = args.get("quantifier")
    _quantified(0, 0, quantifier, 0)  # validates
    return str(quantifier)  # one of the three strings (validated above)


def _keywords(a: Mapping[str, Any]) -> Check:
    words = [w.lower() for w in _texts(a, "keyword_list")]
    return lambda t: all(w in t.lower() for w in words)


def _keyword_frequency(a: Mapping[str, Any]) -> Check:
    word, n = _text(a, "word").lower(), _int(a, "N")
    return lambda t: sum(1 for m in _WORD.finditer(t.lower()) if m.group() == word) == n


def _forbidden(a: Mapping[str, Any]) -> Check:
    words = [w.lower() for w in _texts(a, "forbidden_words")]
    return lambda t: not any(w in t.lower() for w in words)


def _letter_frequency(a: Mapping[str, Any]) -> Check:
    letter, n = a.get("letter"), _int(a, "N")
    if not isinstance(letter, str) or len(letter) != 1:
        raise ConstraintError(f"letter must be a single character, got {letter!r}")
    return lambda t: t.count(letter) == n


def _response_language(a: Mapping[str, Any]) -> Check:
    code = _text(a, "language")
    language.require()
    return lambda t: language.detect(t) == code


def _paragraph_count(a: Mapping[str, Any]) -> Check:
    n = _int(a, "N")

    def check(t: str) -> bool:
        cleaned = "\n".join(line.strip() for line in t.splitlines()).strip()
        parts = cleaned.split("* * *")
        return all(p.strip() for p in parts) and len(parts) == n

    return check


def _word_constraint(a: Mapping[str, Any]) -> Check:
    n, q = _int(a, "N"), _quantifier(a)
    return lambda t: _quantified(len(t.split()), n, q, _ten_percent(n))


def _sentence_constraint(a: Mapping[str, Any]) -> Check:
    n, q = _int(a, "N"), _quantifier(a)
    return lambda t: _quantified(len(_SENTENCE_SPLIT.split(t)), n, q, 1)


def _paragraphs(a: Mapping[str, Any]) -> Check:
    n, i, first = _int(a, "N"), _int(a, "i"), _text(a, "first_word")
    if not 1 <= i <= n:
        raise ConstraintError(f"i must be between 1 and N ({n}), got {i}")

    def check(t: str) -> bool:
        parts = t.split("\n\n")
        return len(parts) == n and parts[i - 1].strip().startswith(first)

    return check


def _postscript(a: Mapping[str, Any]) -> Check:
    marker = a.get("postscript_marker")
    if not isinstance(marker, str) or not marker:
        raise ConstraintError(f"postscript_marker must be non-empty text, got {marker!r}")

    def check(t: str) -> bool:
        at = t.find(marker)
        return at >= 0 and len(t[at:].strip()) > len(marker)

    return check


def _placeholders(a: Mapping[str, Any]) -> Check:
    n = _int(a, "N")
    return lambda t: count_placeholders(t) >= n


def _bullet_points(a: Mapping[str, Any]) -> Check:
    n = _int(a, "N")
    return lambda t: sum(1 for line in t.split("\n") if line.strip().startswith(("*", "-"))) == n


def _title(a: Mapping[str, Any]) -> Check:
    def check(t: str) -> bool:
        for line in t.split("\n"):
            start = line.find("<<")
            if start >= 0 and line.find(">>", start + 2) >= 0:
                return True
        return False

    return check


def _choice(a: Mapping[str, Any]) -> Check:
    options = a.get("options")
    if isinstance(options, str):
        options = [options]
    if not isinstance(options, (list, tuple)) or not options or not all(isinstance(o, str) for o in options):
        raise ConstraintError(f"options must be a list of text, got {options!r}")
    return lambda t: any(o in t for o in options)


def _highlighted(a: Mapping[str, Any]) -> Check:
    n = _int(a, "N")
    pattern = re.compile(r"\*[^*\n]*\*")  # non-overlapping *...* pairs on one line, as "\*(.*?)\*" finds them
    return lambda t: sum(1 for _ in pattern.finditer(t)) >= n


def _sections(a: Mapping[str, Any]) -> Check:
    n = _int(a, "N")
    pattern = re.compile(r"\s?" + re.escape(_text(a, "section_splitter")) + r"\s?\d+\s?", re.IGNORECASE)
    return lambda t: sum(1 for _ in pattern.finditer(t)) >= n


def _json(a: Mapping[str, Any]) -> Check:
    def check(t: str) -> bool:
        try:
            json.loads(t)
        except (ValueError, RecursionError):
            return False
        return True

    return check


def _repeat_prompt(a: Mapping[str, Any]) -> Check:
    prompt = a.get("original_prompt")
    if not isinstance(prompt, str) or not prompt:
        raise ConstraintError(f"original_prompt must be non-empty text, got {prompt!r}")
    return lambda t: t.startswith(prompt)


def _two_responses(a: Mapping[str, Any]) -> Check:
    def check(t: str) -> bool:
        if t.count("******") != 1:
            return False
        first, second = t.split("******")
        return first.strip() != second.strip()

    return check


def _capital_frequency(a: Mapping[str, Any]) -> Check:
    n, q = _int(a, "N"), _quantifier(a)
    return lambda t: _quantified(sum(1 for _ in _CAPITAL_WORD.finditer(t)), n, q, _ten_percent(n))


def _end(a: Mapping[str, Any]) -> Check:
    phrase = a.get("end_phrase")
    if not isinstance(phrase, str) or not phrase:
        raise ConstraintError(f"end_phrase must be non-empty text, got {phrase!r}")
    return lambda t: t.endswith(phrase)


#: open-instruct ``func_name`` -> builder from the row's other (non-null) fields.
FUNCTIONS: dict[str, Callable[[Mapping[str, Any]], Check]] = {
    "verify_keywords": _keywords,
    "verify_keyword_frequency": _keyword_frequency,
    "validate_forbidden_words": _forbidden,
    "verify_letter_frequency": _letter_frequency,
    "validate_response_language": _response_language,
    "verify_paragraph_count": _paragraph_count,
    "validate_word_constraint": _word_constraint,
    "verify_sentence_constraint": _sentence_constraint,
    "validate_paragraphs": _paragraphs,
    "verify_postscript": _postscript,
    "validate_placeholders": _placeholders,
    "verify_bullet_points": _bullet_points,
    "validate_title": _title,
    "validate_choice": _choice,
    "validate_highlighted_sections": _highlighted,
    "validate_sections": _sections,
    "validate_json_format": _json,
    "validate_repeat_prompt": _repeat_prompt,
    "validate_two_responses": _two_responses,
    "validate_uppercase": lambda a: lambda t: t == t.upper(),
    "validate_lowercase": lambda a: lambda t: t == t.lower(),
    "validate_frequency_capital_words": _capital_frequency,
    "validate_end": _end,
    "validate_quotation": lambda a: lambda t: t.startswith('"') and t.endswith('"'),
    "validate_no_commas": lambda a: lambda t: "," not in t,
}


def build_function_check(func_name: Any, args: Mapping[str, Any]) -> Check:
    """The check an RLVR row names; raises :class:`ConstraintError` for an unknown name or a bad argument."""
    builder = FUNCTIONS.get(func_name) if isinstance(func_name, str) else None
    if builder is None:
        raise ConstraintError(f"unknown RLVR function {func_name!r}")
    return builder({k: v for k, v in args.items() if v is not None})


__all__ = ["FUNCTIONS", "build_check", "build_function_check"]
