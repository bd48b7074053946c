"""Whole numbers written in English words (``forty two``, ``forty-two``, ``one hundred and five``).

Each space- or hyphen-separated chunk is read by longest match against a small vocabulary (``fortytwo`` is
forty, two); no word spans a space (``t e n`` is a product of three letters), and anything that is not a
well-formed number name (``two two``, ``fifty sixty``, a stray letter) is not a number.

>>> number_from_words("fortytwo"), number_from_words("Forty-Two"), number_from_words("onehundredandfive")
(42, 42, 105)
>>> number_from_words("none") is None
True
"""

from __future__ import annotations

import re

_UNITS = {"zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
          "nine": 9}  # fmt: skip
_TEENS = {"ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14, "fifteen": 15, "sixteen": 16,
          "seventeen": 17, "eighteen": 18, "nineteen": 19}  # fmt: skip
_TENS = {"twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80,
         "ninety": 90}  # fmt: skip
_SCALES = {"thousand": 10**3, "million": 10**6, "billion": 10**9}
_VOCABULARY = sorted([*_UNITS, *_TEENS, *_TENS, *_SCALES, "hundred", "and", "minus", "negative"], key=len, reverse=True)
_ONLY_WORDS = re.compile(r"[A-Za-z\-\s]+")
_MAX_CHARS = 120


def number_from_words(key: str) -> int | None:
    """The integer that ``key`` names in words, or ``None`` when it is not a number name."""
    if len(key) > _MAX_CHARS or not _ONLY_WORDS.fullmatch(key):
        return None
    words: list[str] = []
    for chunk in re.split(r"[\s\-]+", key.lower().strip()):  # a word never spans a space: "t e n" is t*e*n
        tokens = _tokens(chunk)
        if not tokens:
            return None
        words += tokens
    if not words:
        return None
    sign = 1
    if words[0] in ("minus", "negative"):
        sign, words = -1, words[1:]
    return None if not words else (value * sign if (value := _value(words)) is not None else None)


def _tokens(text: str) -> list[str] | None:
    words, i = [], 0
    while i < len(text):
        word = next((w for w in _VOCABULARY if text.startswith(w, i)), None)
        if word is None:
            return None
        words.append(word)
        i += len(word)
    return words


def _value(words: list[str]) -> int | None:
    """Sum of groups ``[[hundreds] [tens] [units]] [scale]``, scales strictly decreasing."""
    total, group, last, last_scale = 0, 0, "", None
    for index, word in enumerate(words):
        if word == "and":
            if (last != "hundred" and last not in _SCALES) or index == len(words) - 1:
                return None
            last = word
            continue
        if word in _UNITS or word in _TEENS:
            if last in _UNITS or last in _TEENS or (last in _TENS and word not in _UNITS):
                return None
            if word == "zero" and (group or total or len(words) > 1):
                return None
            group += _UNITS.get(word, _TEENS.get(word, 0))
        elif word in _TENS:
            if last in _UNITS or last in _TEENS or last in _TENS:
                return None
            group += _TENS[word]
        elif word == "hundred":
            if not 1 <= group <= 9 or last == "hundred":
                return None
            group *= 100
        else:  # a scale
            scale = _SCALES[word]
            if group == 0 or (last_scale is not None and scale >= last_scale):
                return None
            total, group, last_scale = total + group * scale, 0, scale
        last = word
    if last == "and":
        return None
    return total + group
