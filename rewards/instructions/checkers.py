"""One checker per IFEval instruction id, built from the row's kwargs: ``build_check(id, kwargs)(text) -> bool``.

The verdicts follow Google's IFEval reference (as shipped in lm-eval) instruction by instruction, with three
deliberate differences: keywords, forbidden words, postscript markers and section splitters are matched as
literal text (the reference compiles them as regular expressions, so data could inject a pattern); a missing or
invalid argument is an error (the reference silently draws a random one); and every scan is linear.
Sentence counting and all-capital word tokenisation approximate nltk's Punkt and ``word_tokenize``, whose data
files cannot be downloaded offline.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from typing import Any

from rewardsmith.rewards.instructions import language
from rewardsmith.rewards.instructions.text import (
    capital_words,
    count_bullets,
    count_placeholders,
    count_sentences,
    count_words,
    has_title,
)

Check = Callable[[str], bool]

#: IFEval's relations, plus the exact and upper-bound forms RLVR-style data uses.
RELATIONS: dict[str, Callable[[int, int], bool]] = {
    "less than": lambda actual, n: actual < n,
    "at least": lambda actual, n: actual >= n,
    "at most": lambda actual, n: actual <= n,
    "exactly": lambda actual, n: actual == n,
}

CONSTRAINED_RESPONSES = ("My answer is yes.", "My answer is no.", "My answer is maybe.")


class ConstraintError(ValueError):
    """An instruction this module cannot check: unknown id, or an argument missing or of the wrong type."""


# -- argument readers ------------------------------------------------------------------------------
def _int(args: Mapping[str, Any], key: str) -> int:
    value = args.get(key)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value != int(value) or value < 0:
        raise ConstraintError(f"{key} must be a non-negative integer, got {value!r}")
    return int(value)


def _text(args: Mapping[str, Any], key: str) -> str:
    value = args.get(key)
    if not isinstance(value, str) or not value.strip():
        raise ConstraintError(f"{key} must be non-empty text, got {value!r}")
    return value.strip()


def _texts(args: Mapping[str, Any], key: str) -> list[str]:
    value = args.get(key)
    if isinstance(value, str) or not isinstance(value, (list, tuple)) or not value:
        raise ConstraintError(f"{key} must be a non-empty list of text, got {value!r}")
    if not all(isinstance(v, str) and v for v in value):
        raise ConstraintError(f"{key} must hold only non-empty text, got {value!r}")
    return list(value)


def _relation(args: Mapping[str, Any], key: str) -> Callable[[int, int], bool]:
    value = args.get(key)
    if value not in RELATIONS:
        raise ConstraintError(f"{key} must be one of {sorted(RELATIONS)}, got {value!r}")
    return RELATIONS[value]


def _compare(measure: Callable[[str], int], relation: Callable[[int, int], bool], n: int) -> Check:
    return lambda text: relation(measure(text), n)


# -- keywords --------------------------------------------------------------------------------------
def _keywords_existence(args: Mapping[str, Any]) -> Check:
    patterns = [re.compile(re.escape(k), re.IGNORECASE) for k in _texts(args, "keywords")]
    return lambda text: all(p.search(text) for p in patterns)


def _keywords_frequency(args: Mapping[str, Any]) -> Check:
    pattern = re.compile(re.escape(_text(args, "keyword")), re.IGNORECASE)
    return _compare(
        lambda text: sum(1 for _ in pattern.finditer(text)), _relation(args, "relation"), _int(args, "frequency")
    )


def _forbidden_words(args: Mapping[str, Any]) -> Check:
    patterns = [re.compile(r"\b" + re.escape(w) + r"\b", re.IGNORECASE) for w in _texts(args, "forbidden_words")]
    return lambda text: not any(p.search(text) for p in patterns)


def _letter_frequency(args: Mapping[str, Any]) -> Check:
    letter = _text(args, "letter").lower()
    if len(letter) != 1 or not ("a" <= letter <= "z"):
        raise ConstraintError(f"letter must be one ASCII letter, got {args.get('letter')!r}")
    return _compare(
        lambda text: text.lower().count(letter), _relation(args, "let_relation"), _int(args, "let_frequency")
    )


# -- language and case -----------------------------------------------------------------------------
def _response_language(args: Mapping[str, Any]) -> Check:
    code = _text(args, "language")
    language.require()
    return lambda text: language.is_language(text, code)


def _english_capital(args: Mapping[str, Any]) -> Check:
    language.require()
    return lambda text: text.isupper() and language.is_language(text, "en")


def _english_lowercase(args: Mapping[str, Any]) -> Check:
    language.require()
    return lambda text: text.islower() and language.is_language(text, "en")


def _capital_word_frequency(args: Mapping[str, Any]) -> Check:
    return _compare(capital_words, _relation(args, "capital_relation"), _int(args, "capital_frequency"))


# -- length ----------------------------------------------------------------------------------------
def _number_words(args: Mapping[str, Any]) -> Check:
    return _compare(count_words, _relation(args, "relation"), _int(args, "num_words"))


def _number_sentences(args: Mapping[str, Any]) -> Check:
    return _compare(count_sentences, _relation(args, "relation"), _int(args, "num_sentences"))


_DIVIDER = re.compile(r"\s?\*\*\*\s?")


def _number_paragraphs(args: Mapping[str, Any]) -> Check:
    wanted = _int(args, "num_paragraphs")

    def check(text: str) -> bool:
        paragraphs = _DIVIDER.split(text)
        count = len(paragraphs)
        for index, paragraph in enumerate(paragraphs):
            if not paragraph.strip():
                if index in (0, len(paragraphs) - 1):
                    count -= 1
                else:
                    return False  # an empty paragraph between two dividers
        return count == wanted

    return check


_FIRST_WORD_STOP = frozenset(".,?!'\"")


def _nth_paragraph_first_word(args: Mapping[str, Any]) -> Check:
    wanted, nth, first = _int(args, "num_paragraphs"), _int(args, "nth_paragraph"), _text(args, "first_word").lower()
    if not 1 <= nth <= wanted:
        raise ConstraintError(f"nth_paragraph must be between 1 and num_paragraphs ({wanted}), got {nth}")

    def check(text: str) -> bool:
        paragraphs = text.split("\n\n")
        count = sum(1 for p in paragraphs if p.strip())
        if nth > count:
            return False
        paragraph = paragraphs[nth - 1].strip()  # indexes the raw split, as the reference does
        if not paragraph:
            return False
        word = paragraph.split(None, 1)[0].lstrip("'").lstrip('"')
        letters = []
        for ch in word:
            if ch in _FIRST_WORD_STOP:
                break
            letters.append(ch.lower())
        return count == wanted and "".join(letters) == first

    return check


# -- detectable content and format -----------------------------------------------------------------
def _number_placeholders(args: Mapping[str, Any]) -> Check:
    return _compare(count_placeholders, RELATIONS["at least"], _int(args, "num_placeholders"))


_PS = re.compile(r"p\.\s?s\.")
_PPS = re.compile(r"p\.\s?p\.\s?s")


def _postscript(args: Mapping[str, Any]) -> Check:
    marker = _text(args, "postscript_marker")
    if marker == "P.P.S":
        return lambda text: _PPS.search(text.lower()) is not None
    if marker == "P.S.":
        return lambda text: _PS.search(text.lower()) is not None
    lowered = marker.lower()
    return lambda text: lowered in text.lower()


def _number_bullet_lists(args: Mapping[str, Any]) -> Check:
    return _compare(count_bullets, RELATIONS["exactly"], _int(args, "num_bullets"))


def _constrained_response(args: Mapping[str, Any]) -> Check:
    return lambda text: any(option in text for option in CONSTRAINED_RESPONSES)


_HIGHLIGHT = re.compile(r"\*[^\n\*]*\*")
_DOUBLE_HIGHLIGHT = re.compile(r"\*\*[^\n\*]*\*\*")


def _count_highlights(text: str) -> int:
    single = sum(1 for m in _HIGHLIGHT.finditer(text) if m.group().strip("*").strip())
    double = sum(1 for m in _DOUBLE_HIGHLIGHT.finditer(text) if m.group()[2:-2].strip())
    return single + double


def _number_highlighted_sections(args: Mapping[str, Any]) -> Check:
    return _compare(_count_highlights, RELATIONS["at least"], _int(args, "num_highlights"))


def _multiple_sections(args: Mapping[str, Any]) -> Check:
    splitter = re.compile(r"\s?" + re.escape(_text(args, "section_spliter")) + r"\s?\d+\s?")
    return _compare(
        lambda text: sum(1 for _ in splitter.finditer(text)), RELATIONS["at least"], _int(args, "num_sections")
    )


def _json_format(args: Mapping[str, Any]) -> Check:
    def check(text: str) -> bool:
        body = text.strip()
        for fence in ("```json", "```Json", "```JSON", "```"):
            if body.startswith(fence):
                body = body[len(fence) :]
                break
        body = body.removesuffix("```").strip()
        try:
            json.loads(body)
        except (ValueError, RecursionError):
            return False
        return True

    return check


def _title(args: Mapping[str, Any]) -> Check:
    return has_title


# -- combinations, start/end, punctuation ----------------------------------------------------------
def _two_responses(args: Mapping[str, Any]) -> Check:
    def check(text: str) -> bool:
        parts = text.split("******")
        kept = []
        for index, part in enumerate(parts):
            if part.strip():
                kept.append(part.strip())
            elif index not in (0, len(parts) - 1):
                return False
        return len(kept) == 2 and kept[0] != kept[1]

    return check


def _repeat_prompt(args: Mapping[str, Any]) -> Check:
    prompt = _text(args, "prompt_to_repeat").lower()
    return lambda text: text.strip().lower().startswith(prompt)


def _end_checker(args: Mapping[str, Any]) -> Check:
    phrase = _text(args, "end_phrase").lower()
    return lambda text: text.strip().strip('"').lower().endswith(phrase)


def _quotation(args: Mapping[str, Any]) -> Check:
    def check(text: str) -> bool:
        body = text.strip()
        return len(body) > 1 and body[0] == '"' and body[-1] == '"'

    return check


def _no_comma(args: Mapping[str, Any]) -> Check:
    return lambda text: "," not in text


#: IFEval instruction id -> builder from the row's kwargs to a check.
BUILDERS: dict[str, Callable[[Mapping[str, Any]], Check]] = {
    "keywords:existence": _keywords_existence,
    "keywords:frequency": _keywords_frequency,
    "keywords:forbidden_words": _forbidden_words,
    "keywords:letter_frequency": _letter_frequency,
    "language:response_language": _response_language,
    "length_constraints:number_sentences": _number_sentences,
    "length_constraints:number_paragraphs": _number_paragraphs,
    "length_constraints:number_words": _number_words,
    "length_constraints:nth_paragraph_first_word": _nth_paragraph_first_word,
    "detectable_content:number_placeholders": _number_placeholders,
    "detectable_content:postscript": _postscript,
    "detectable_format:number_bullet_lists": _number_bullet_lists,
    "detectable_format:constrained_response": _constrained_response,
    "detectable_format:number_highlighted_sections": _number_highlighted_sections,
    "detectable_format:multiple_sections": _multiple_sections,
    "detectable_format:json_format": _json_format,
    "detectable_format:title": _title,
    "combination:two_responses": _two_responses,
    "combination:repeat_prompt": _repeat_prompt,
    "startend:end_checker": _end_checker,
    "change_case:capital_word_frequency": _capital_word_frequency,
    "change_case:english_capital": _english_capital,
    "change_case:english_lowercase": _english_lowercase,
    "punctuation:no_comma": _no_comma,
    "startend:quotation": _quotation,
}


def build_check(instruction_id: str, kwargs: Mapping[str, Any] | None) -> Check:
    """The check for one instruction; ``None`` values in ``kwargs`` count as absent (datasets pad with nulls).

    Raises :class:`ConstraintError` for an unknown id or a bad argument.
    """
    builder = BUILDERS.get(instruction_id) if isinstance(instruction_id, str) else None
    if builder is None:
        raise ConstraintError(f"unknown instruction {instruction_id!r}")
    if kwargs is not None and not isinstance(kwargs, Mapping):
        raise ConstraintError(f"kwargs must be a mapping, got {type(kwargs).__name__}")
    args = {k: v for k, v in (kwargs or {}).items() if v is not None}
    return builder(args)
