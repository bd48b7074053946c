"""Reading a judge's answer: option choices, scale scores, rankings, and soft labels from log-probs.

Pure functions over text and :class:`TokenLogprob` lists, so verdict tables test them directly.
A structured answer is validated by a pydantic model; anything that does not validate is ``None``
(an abstain upstream), never a default winner. Option labels are case-sensitive whole words, so the
article "a" never reads as option "A"; an answer that names both labels without one explicit verdict,
or gives conflicting verdicts or scores or a range of scores, abstains with the reason (:func:`read_choice`,
:func:`read_score_answer`). The patterns are built so that hostile text cannot make them backtrack
polynomially.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

from pydantic import BaseModel, Field, ValidationError, model_validator

from rewardsmith.judges.base import TokenLogprob

_TOKEN_JUNK = " \t\n\r()[]{}*\"'`:.,;-_#>"


class ChoiceAnswer(BaseModel):
    """A pairwise answer: one of the option labels."""

    choice: str = Field(min_length=1, max_length=8)


class ScoreAnswer(BaseModel):
    """A scale answer: a finite score in ``1..scale`` (``4.5`` on a 10-point scale is a valid answer)."""

    score: float
    scale: int = Field(ge=2)

    @model_validator(mode="after")
    def _in_range(self) -> ScoreAnswer:
        if not (math.isfinite(self.score) and 1 <= self.score <= self.scale):
            raise ValueError(f"score {self.score:g} outside 1..{self.scale}")
        return self


@dataclass(frozen=True)
class ChoiceReading:
    """What a pairwise answer says: the chosen label, or ``None`` and why the answer is an abstain.

    ``at`` is the character offset of the label that states the verdict (``None`` when it cannot be
    located), so a soft label can be read from that token's log-probs rather than from the first label
    the answer happens to mention.
    """

    choice: str | None
    reason: str = ""
    at: int | None = None


@dataclass(frozen=True)
class ScoreReading:
    """What a scale answer says: the score, or ``None`` and why the answer is an abstain.

    ``at`` is the character offset of the number that states the score (``None`` when it cannot be
    located), so a probability-weighted score is read at that token, not at the first digit of the answer.
    """

    score: float | None
    reason: str = ""
    at: int | None = None


class RankingAnswer(BaseModel):
    """A listwise answer: a permutation of candidate numbers ``1..n``, best first."""

    order: list[int]
    n: int = Field(ge=2)

    @model_validator(mode="after")
    def _is_permutation(self) -> RankingAnswer:
        if sorted(self.order) != list(range(1, self.n + 1)):
            raise ValueError(f"ranking {self.order} is not a permutation of 1..{self.n}")
        return self


def normalize_token(token: str) -> str:
    """A token stripped of spaces, brackets and punctuation: ``" (A"`` -> ``"A"``."""
    return token.strip(_TOKEN_JUNK)


def _json_object(text: str) -> dict | None:
    return _json_span(text)[0]


def _json_span(text: str) -> tuple[dict | None, int]:
    """The JSON object in ``text`` and the offset where it starts (``None, -1`` when there is none)."""
    match = re.search(r"\{.*\}", text, flags=re.DOTALL)
    if not match:
        return None, -1
    try:
        value = json.loads(match.group(0))
    except json.JSONDecodeError:
        return None, -1
    return (value, match.start()) if isinstance(value, dict) else (None, -1)


# Labels are matched case-sensitively as whole words: the article "a" is never option "A".
_WORD = r"[A-Za-z0-9_]"
_DECOR = r"""[\s*_"'`]"""
# Between a keyword and its value ("Verdict: ", " is **", ":** "). Each run of decoration is bounded by fixed
# tokens, so a hostile answer with thousands of spaces cannot make the match backtrack polynomially.
_SEPARATOR = rf"{_DECOR}*(?:(?i:is|was|would\s+be)\b{_DECOR}*)?(?:[:=]{_DECOR}*)?"
_OPENED = r"(?:(?<![\(\[])[\(\[]+\s*)?"  # only from the first bracket of a run
_PREFIX = r"(?:(?i:response|option|assistant|candidate)\s+)?"
_ADVERB = r"(?:(?i:clearly|much|slightly|far|significantly|definitely|overall|somewhat|a\s+bit|the)\s+)*"
_PRAISE = (
    r"(?i:better|best|preferable|preferred|superior|stronger|more\s+(?:helpful|accurate|correct|honest|harmless"
    r"|appropriate|complete|relevant|useful))\b"
)
_NEGATION = re.compile(r"(?i:\b(?:not|no|neither|nor|never|cannot|hardly)\b|n't)")
_CLAUSE_END = re.compile(r"[.;!?\n]")
_TIE = re.compile(r"\[\[\s*(?i:C|tie)\s*\]\]|(?i:verdict)" + _SEPARATOR + r"(?i:tie|draw|equal)\b")


def _choice_patterns(labels: Sequence[str]) -> list[tuple[str, list[re.Pattern[str]]]]:
    """Explicit verdict forms, strongest tier first; each captures the chosen label."""
    group = "|".join(re.escape(label) for label in sorted(labels, key=len, reverse=True))
    label = rf"(?<!{_WORD})({group})(?!{_WORD})"
    # A label directly joined to another ("A or B", "A/B", "A and B") is a mention of both, not a verdict.
    alone = (
        rf"(?!\s*(?:[\)\]]+\s*)?(?:,|&|/|\b(?i:and|or|vs|versus|nor)\b\.?)\s*{_PREFIX}{_OPENED}(?:{group})(?!{_WORD}))"
    )
    return [
        (
            "verdict",
            [
                re.compile(rf"\[\[\s*{label}\s*\]\]{alone}"),
                re.compile(rf"(?i:verdict){_SEPARATOR}{_OPENED}{_PREFIX}{_OPENED}{label}{alone}"),
            ],
        ),
        (
            "stated",
            [
                re.compile(
                    rf"(?i:answer|winner|choice|decision|preference|better\s+response|best\s+response"
                    rf"|preferred\s+response){_SEPARATOR}{_OPENED}{_PREFIX}{_OPENED}{label}{alone}"
                ),
                re.compile(rf"(?i:prefer|choose|pick|select|go\s+with)\s+{_PREFIX}{_OPENED}{label}{alone}"),
                re.compile(
                    rf"^[\s*_]*(?:[\(\[]\s*)?{_PREFIX}{label}[\)\]]?[*_]*"
                    rf"(?=\s*(?:[:.,\-\u2013\u2014]|$)|\s+(?i:because|since|as)\b){alone}"
                ),
            ],
        ),
        (
            "comparative",
            [re.compile(rf"{_PREFIX}{_OPENED}{label}(?:\s*[\)\]])?\s+(?i:is|seems|looks)\s+{_ADVERB}{_PRAISE}")],
        ),
    ]


def _negated(text: str, at: int) -> bool:
    """Whether the clause before ``at`` negates what follows ("Neither A nor B is better")."""
    clause_start = max((m.end() for m in _CLAUSE_END.finditer(text, 0, at)), default=0)
    return bool(_NEGATION.search(text[clause_start:at]))


def read_choice(text: str, labels: Sequence[str] = ("A", "B")) -> ChoiceReading:
    """The option label a judge chose, or ``None`` with the reason it abstains.

    Accepted, strongest first: a JSON object ``{"verdict": "A"}`` (or ``choice``/``answer``/``winner``);
    a formal verdict ``[[A]]`` or ``Verdict: B``; a stated choice (``Answer: (A)``, ``The winner is B``,
    ``I prefer A``, or an answer that is just the label: ``"B"``, ``"(A)."``, ``"Response A"``,
    ``"B because ..."``); a comparison (``Response B is better``, ``B is clearly better``). Labels are
    case-sensitive whole words. The strongest tier present decides; if it names different labels, or
    the text names several labels with no explicit verdict ("A or B, hard to say"), the answer abstains.
    """
    if not text.strip():
        return ChoiceReading(None, "empty answer")
    obj = _json_object(text)
    if obj is not None:
        for key in ("verdict", "choice", "answer", "winner", "better"):
            if key in obj:
                value = normalize_token(str(obj[key])).removeprefix("Response ").strip()
                try:
                    answer = ChoiceAnswer(choice=value)
                except ValidationError:
                    return ChoiceReading(None, f"JSON {key} {value!r} is not a label")
                if answer.choice in labels:
                    return ChoiceReading(answer.choice, at=_json_label_offset(text, key, answer.choice))
                return ChoiceReading(None, f"JSON {key} {value!r} is not one of {', '.join(labels)}")
    if _TIE.search(text) and not any(label.upper() in ("C", "TIE") for label in labels):
        return ChoiceReading(None, "the judge declared a tie")
    for tier, patterns in _choice_patterns(labels):
        found = [
            (match.start(1), match.group(1))
            for pattern in patterns
            for match in pattern.finditer(text)
            if tier != "comparative" or not _negated(text, match.start())
        ]
        chosen = sorted({label for _, label in found})
        if len(chosen) == 1:
            return ChoiceReading(chosen[0], at=min(start for start, _ in found))
        if len(chosen) > 1:
            return ChoiceReading(None, f"conflicting {tier} verdicts: {' and '.join(chosen)}")
    group = "|".join(re.escape(label) for label in labels)
    named = sorted(set(re.findall(rf"(?<!{_WORD})({group})(?!{_WORD})", text)))
    if len(named) > 1:
        return ChoiceReading(None, f"names both {' and '.join(named)} without one explicit verdict")
    return ChoiceReading(None, f"no verdict in answer: {text[:120]!r}")


def _json_label_offset(text: str, key: str, label: str) -> int | None:
    match = re.search(rf'"{re.escape(key)}"\s*:\s*"?\s*(?:Response\s+)?({re.escape(label)})(?!{_WORD})', text)
    return match.start(1) if match else None


def parse_choice(text: str, labels: Sequence[str] = ("A", "B")) -> str | None:
    """The option label a judge chose, or ``None`` (abstain); see :func:`read_choice` for the accepted forms."""
    return read_choice(text, labels).choice


_NUMBER = r"(?<![\d.\-])(\d+(?:\.\d+)?)(?![\d])"
# A number joined to another one ("3-4", "3 or 4", "3 to 4") is a range, not a score.
_RANGE_AFTER = re.compile(r"[ \t]*(?:[-~\u2013\u2014]|(?i:or|to)\b)[ \t]*\d")


def _numbers(pattern: str, text: str) -> list[tuple[str, int]]:
    """Each match's number (group 1) with its offset in ``text``."""
    return [(match.group(1), match.start(1)) for match in re.finditer(pattern, text)]


def read_score_answer(text: str, scale: int) -> ScoreReading:
    """A score in ``1..scale`` or ``None`` with the reason; decimals are kept (``Rating: 4.5`` -> 4.5).

    Accepted, strongest first: ``[[4]]`` (MT-Bench); JSON ``{"score": 4}``; ``Score: 4`` /
    ``Rating: 4.5`` / ``4/5`` / ``4 out of 5``; a bare ``4``. The strongest form present decides; if it
    gives different numbers, or a range ("Score: 3-4", "3 or 4"), the answer abstains, and a number
    outside ``1..scale`` is rejected, not clamped. ``at`` is where the first statement of the score starts.
    """
    obj, json_start = _json_span(text)
    json_scores: list[tuple[str, int | None]] = []
    if obj is not None:
        for key in ("score", "rating"):
            value = obj.get(key)
            if value is not None and not isinstance(value, bool):
                stated = str(value).strip()
                located = [
                    json_start + offset
                    for number, offset in _numbers(rf'"{key}"\s*:\s*"?\s*{_NUMBER}', text[json_start:])
                    if number == stated
                ]
                json_scores.append((stated, located[0] if located else None))
    tiers: list[tuple[str, Sequence[tuple[str, int | None]]]] = [
        ("MT-Bench", _numbers(rf"\[\[\s*{_NUMBER}\s*\]\]", text)),
        ("JSON", json_scores),
        (
            "labelled",
            _numbers(rf"(?i:score|rating|grade){_SEPARATOR}(?i:of\s+)?{_NUMBER}", text)
            + _numbers(rf"{_NUMBER}\s*(?:/|(?i:out\s+of))\s*{scale}(?!\d|\.\d)", text),
        ),
        ("bare", _numbers(rf"^[\s*_]*{_NUMBER}[\s*_]*(?:\.[\s*_]*)?$", text)),
    ]
    for form, candidates in tiers:
        if not candidates:
            continue
        try:
            values = sorted({float(candidate) for candidate, _ in candidates})
        except ValueError:
            return ScoreReading(None, f"{form} score {candidates[0][0]!r} is not a number")
        if len(values) > 1:
            return ScoreReading(None, f"conflicting {form} scores: {', '.join(f'{v:g}' for v in values)}")
        for candidate, at in candidates:
            if at is not None and _RANGE_AFTER.match(text, at + len(candidate)):
                return ScoreReading(None, f"a range of scores, not one: {text[at : at + 20]!r}")
        try:
            score = ScoreAnswer(score=values[0], scale=scale).score
        except ValidationError:
            return ScoreReading(None, f"score {values[0]:g} outside 1..{scale}")
        located = [at for _, at in candidates if at is not None]
        return ScoreReading(score, at=min(located) if located else None)
    return ScoreReading(None, f"no score in 1..{scale} in answer: {text[:120]!r}")


def parse_score(text: str, scale: int) -> float | None:
    """A score in ``1..scale`` or ``None`` (abstain); see :func:`read_score_answer` for the accepted forms."""
    return read_score_answer(text, scale).score


def parse_ranking(text: str, n: int) -> list[int] | None:
    """A best-first permutation of ``1..n``: JSON ``{"ranking": [2, 1, 3]}`` or ``2 > 1 > 3``."""
    obj = _json_object(text)
    numbers: list[int] | None = None
    if obj is not None:
        for key in ("ranking", "order", "rank"):
            value = obj.get(key)
            if isinstance(value, list) and all(isinstance(v, (int, str)) and str(v).strip().isdigit() for v in value):
                numbers = [int(v) for v in value]
                break
    if numbers is None:
        chain = re.search(r"\[?\s*(\d+(?:\s*(?:>|,)\s*\d+)+)\s*\]?", text)
        if not chain:
            return None
        numbers = [int(v) for v in re.findall(r"\d+", chain.group(1))]
    try:
        return RankingAnswer(order=numbers, n=n).order
    except (ValueError, ValidationError):
        return None


def _option_mass(entry: TokenLogprob, options: Sequence[str]) -> dict[str, float] | None:
    """One token's alternatives folded onto the options (``"A"``, ``" A"``, ``"(A"`` are one option), normalised."""
    wanted = set(options)  # case-sensitive: a token "a" is the article, not option "A"
    mass = dict.fromkeys(options, 0.0)
    alternatives = dict(entry.top)
    alternatives.setdefault(entry.token, entry.logprob)
    for token, logprob in alternatives.items():
        option = normalize_token(token)
        if option in wanted and math.isfinite(logprob):
            mass[option] += math.exp(logprob)
    total = sum(mass.values())
    if total <= 0.0:
        return None
    return {option: value / total for option, value in mass.items()}


def option_distribution(
    logprobs: Sequence[TokenLogprob] | None, options: Sequence[str]
) -> tuple[dict[str, float], int] | None:
    """Normalised probabilities of ``options`` at the first generated token that is one of them.

    Each alternative in the top log-probs that normalises to an option (``"A"``, ``" A"``, ``"(A"``)
    adds its probability mass to that option; the masses are then normalised over the options only.
    An option absent from the top alternatives gets no mass. Returns ``(distribution, position)``
    or ``None`` when no generated token is an option. For a verdict or score stated somewhere in a
    longer answer use :func:`verdict_distribution`, which reads the token that states it.
    """
    if not logprobs:
        return None
    wanted = set(options)
    for position, entry in enumerate(logprobs):
        if normalize_token(entry.token) not in wanted:
            continue
        distribution = _option_mass(entry, options)
        return None if distribution is None else (distribution, position)
    return None


def verdict_distribution(
    logprobs: Sequence[TokenLogprob] | None, options: Sequence[str], text: str, at: int
) -> dict[str, float] | None:
    """Normalised probabilities of ``options`` at the generated token that holds ``text[at]`` (the verdict or score).

    Tokens are aligned with the answer by their concatenation. ``None`` when the log-probs do not
    line up with the text or the token there is not an option: the caller keeps the parsed verdict.
    """
    if not logprobs or not 0 <= at < len(text):
        return None
    joined = "".join(entry.token for entry in logprobs)
    shift = 0 if joined == text else joined.find(text)  # some servers strip leading whitespace from the text
    if shift < 0:
        return None
    start = 0
    for entry in logprobs:
        end = start + len(entry.token)
        if start <= at + shift < end:
            if normalize_token(entry.token) not in set(options):
                return None
            return _option_mass(entry, options)
        start = end
    return None


def expected_score(distribution: dict[str, float]) -> float:
    """The probability-weighted score (G-Eval): ``sum_s s * p(s)`` over integer-labelled options."""
    return sum(int(option) * p for option, p in distribution.items())
