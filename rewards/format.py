"""Format rewards: reasoning tags, tag counts, regular expressions and JSON schemas.

Every check here is linear in the completion length (plain scans, no backtracking-prone patterns of
our own), because a policy under RL pressure will emit megabytes of tags if that pays. Tags written
inside fenced code blocks or inline code spans are text, not structure, so they are masked out
before counting.
"""

from __future__ import annotations

import importlib
import json
import math
import re
from collections.abc import Mapping
from types import ModuleType
from typing import Any, Literal, cast

from pydantic import BaseModel, Field, ValidationError, field_validator, model_validator

from rewardsmith.registry import register_reward
from rewardsmith.reward import ConfigError, Reward, RewardConfig
from rewardsmith.types import RewardResult

try:  # the `regex` engine can abort a runaway match; `re` cannot (its guard is the length cap alone)
    import regex as _regex

    _regex_engine: ModuleType | None = _regex
except ModuleNotFoundError:  # pragma: no cover - exercised only on installs without `regex`
    _regex_engine = None

_TAG_NAME = r"^[A-Za-z][A-Za-z0-9_.:-]*$"
_FENCE_LINE = re.compile(r"^[ \t]{0,3}(`{3,}|~{3,})([^\n]*)", re.MULTILINE)
_INLINE_CODE = re.compile(r"`[^`\n]+`")


# -- pure helpers ------------------------------------------------------------------------------------
def fenced_blocks(text: str) -> list[tuple[int, int, str, str]]:
    """Fenced code blocks of ``text`` as ``(start, end, info, body)``, in order; linear time.

    A fence is a line starting with three or more backticks or tildes; it closes on a later fence of
    the same character at least as long. An unclosed fence runs to the end of the text.
    """
    blocks = []
    opening: re.Match[str] | None = None
    for match in _FENCE_LINE.finditer(text):
        if opening is None:
            opening = match
            continue
        fence, open_fence = match.group(1), opening.group(1)
        if fence[0] == open_fence[0] and len(fence) >= len(open_fence) and not match.group(2).strip():
            body_start = min(opening.end() + 1, match.start())
            blocks.append((opening.start(), match.end(), opening.group(2).strip(), text[body_start : match.start()]))
            opening = None
    if opening is not None:
        body_start = min(opening.end() + 1, len(text))
        blocks.append((opening.start(), len(text), opening.group(2).strip(), text[body_start:]))
    return blocks


def mask_code(text: str) -> str:
    """``text`` with fenced blocks and inline code spans blanked out (same length, so offsets still match)."""
    pieces, cursor = [], 0
    for start, end, _, _ in fenced_blocks(text):
        pieces.append(text[cursor:start])
        pieces.append(" " * (end - start))
        cursor = end
    pieces.append(text[cursor:])
    masked = "".join(pieces)
    return _INLINE_CODE.sub(lambda m: " " * len(m.group()), masked)


# -- think_format ------------------------------------------------------------------------------------
class ThinkFormatConfig(RewardConfig):
    think_tag: str = Field("think", pattern=_TAG_NAME, description="name of the reasoning tag (<think>...</think>)")
    answer_tag: str | None = Field(
        None, pattern=_TAG_NAME, description="if set, the answer must be wrapped in <answer_tag>...</answer_tag>"
    )
    think_opened_in_prompt: bool = Field(
        False, description="the chat template already opened <think>: expect only the closing tag"
    )
    allow_empty_think: bool = Field(True, description="accept a reasoning block that is blank")
    allow_text_before: bool = Field(False, description="accept text before the opening tag")
    ignore_code: bool = Field(True, description="tags inside fenced code blocks or `inline code` do not count")


def check_think_format(text: str, cfg: ThinkFormatConfig) -> RewardResult:
    """Pure verdict for :class:`ThinkFormat` (see there for the rules)."""
    open_tag, close_tag = f"<{cfg.think_tag}>", f"</{cfg.think_tag}>"
    masked = mask_code(text) if cfg.ignore_code else text
    n_open, n_close = masked.count(open_tag), masked.count(close_tag)
    expected_open = 0 if cfg.think_opened_in_prompt else 1
    if n_close != 1:
        return RewardResult(score=0.0, reason=f"found {n_close} {close_tag}, expected 1")
    if n_open != expected_open:
        return RewardResult(score=0.0, reason=f"found {n_open} {open_tag}, expected {expected_open}")
    close_at = masked.find(close_tag)
    if cfg.think_opened_in_prompt:
        think_start = 0
    else:
        open_at = masked.find(open_tag)
        if open_at > close_at:
            return RewardResult(score=0.0, reason=f"{close_tag} comes before {open_tag}")
        if not cfg.allow_text_before and text[:open_at].strip():
            return RewardResult(score=0.0, reason=f"text before {open_tag}")
        think_start = open_at + len(open_tag)
    if not cfg.allow_empty_think and not text[think_start:close_at].strip():
        return RewardResult(score=0.0, reason=f"empty {open_tag} block")
    answer_start = close_at + len(close_tag)
    if cfg.answer_tag is None:
        if not text[answer_start:].strip():
            return RewardResult(score=0.0, reason=f"no answer after {close_tag}")
        return RewardResult(score=1.0, reason="well formatted")
    return _check_answer_block(text, masked, answer_start, cfg.answer_tag)


def _check_answer_block(text: str, masked: str, start: int, tag: str) -> RewardResult:
    open_tag, close_tag = f"<{tag}>", f"</{tag}>"
    n_open, n_close = masked.count(open_tag), masked.count(close_tag)
    if n_open != 1 or n_close != 1:
        return RewardResult(score=0.0, reason=f"found {n_open} {open_tag} and {n_close} {close_tag}, expected 1 each")
    rest = masked[start:]
    stripped = rest.strip()
    if not stripped.startswith(open_tag):
        return RewardResult(score=0.0, reason=f"{open_tag} does not directly follow the reasoning block")
    if not stripped.endswith(close_tag):
        return RewardResult(score=0.0, reason=f"text after {close_tag}")
    lead = len(rest) - len(rest.lstrip())
    body = text[start + lead + len(open_tag) : start + lead + len(stripped) - len(close_tag)]
    if not body.strip():
        return RewardResult(score=0.0, reason=f"empty {open_tag} block")
    return RewardResult(score=1.0, reason="well formatted")


@register_reward("think_format")
class ThinkFormat(Reward[ThinkFormatConfig]):
    """A reasoning block followed by a non-empty answer: 1.0 if well formatted, else 0.0.

    Formula: ``1.0`` iff the completion is ``<think>T</think>A`` with exactly one opening and one closing
    tag (outside code), nothing but whitespace before ``<think>``, and ``A`` not blank; with
    ``answer_tag="answer"``, ``A`` must be ``<answer>X</answer>`` with ``X`` not blank. Multiple or
    nested blocks, a missing tag, or an empty answer give 0.0, with the reason.

    >>> ThinkFormat()(["<think>2+2=4</think> 4", "4", "<think>a<think>b</think></think> 4"])
    [1.0, 0.0, 0.0]
    """

    def score_one(self, completion: str, row: Mapping[str, Any]) -> RewardResult:
        return check_think_format(completion, self.config)


# -- tag_count ---------------------------------------------------------------------------------------
class TagCountConfig(RewardConfig):
    tags: list[str] = Field(
        ["<think>", "</think>", "<answer>", "</answer>"],
        min_length=1,
        description="strings that must each appear exactly once; each is worth 1/len(tags)",
    )
    ignore_code: bool = Field(True, description="occurrences inside fenced or inline code do not count")

    @field_validator("tags")
    @classmethod
    def _non_empty(cls, tags: list[str]) -> list[str]:
        if any(not t for t in tags):
            raise ValueError("tags must be non-empty strings")
        if len(set(tags)) != len(tags):
            raise ValueError("tags must be distinct")
        return tags


@register_reward("tag_count")
class TagCount(Reward[TagCountConfig]):
    """Partial credit for each required tag that appears exactly once.

    Formula: ``(number of tags t with count(t) == 1) / len(tags)``; with the default four tags
    (``<think>``, ``</think>``, ``<answer>``, ``</answer>``) each is worth 0.25, as in open-r1's
    ``tag_count_reward`` (which also demands newlines around the tags; rewardsmith does not).

    >>> TagCount()(["<think>x</think><answer>4</answer>", "<think>x</think> 4", "<think><think>"])
    [1.0, 0.5, 0.0]
    """

    def score_one(self, completion: str, row: Mapping[str, Any]) -> RewardResult:
        masked = mask_code(completion) if self.config.ignore_code else completion
        counts = {tag: masked.count(tag) for tag in self.config.tags}
        good = [t for t, c in counts.items() if c == 1]
        problems = [f"{t} x{c}" for t, c in counts.items() if c != 1]
        reason = f"{len(good)}/{len(self.config.tags)} tags once" + (
            f"; wrong: {', '.join(problems)}" if problems else ""
        )
        return RewardResult(score=len(good) / len(self.config.tags), reason=reason)


# -- regex_match -------------------------------------------------------------------------------------
class RegexMatchConfig(RewardConfig):
    pattern: str = Field(min_length=1, description="regular expression (Python syntax)")
    mode: Literal["search", "fullmatch"] = Field("search", description="match anywhere, or the whole completion")
    strip: bool = Field(True, description="strip surrounding whitespace before matching")
    ignore_case: bool = Field(False, description="re.IGNORECASE")
    multiline: bool = Field(False, description="re.MULTILINE: ^ and $ match at line breaks")
    dotall: bool = Field(False, description="re.DOTALL: . matches newlines")
    max_chars: int = Field(20_000, gt=0, description="longer completions are not matched (see overlong_score)")
    overlong_score: float | None = Field(
        0.0, description="score for completions over max_chars (None leaves them unscored, and so unpunished)"
    )
    timeout_s: float = Field(1.0, gt=0, description="abort a runaway match after this long (scores 0.0)")


@register_reward("regex_match")
class RegexMatch(Reward[RegexMatchConfig]):
    """1.0 if the completion matches ``pattern`` (``search`` anywhere or ``fullmatch``), else 0.0.

    Formula: ``1.0 if re.<mode>(pattern, completion) else 0.0``. The pattern is compiled once; an
    invalid one is a :class:`ConfigError`. Catastrophic backtracking is bounded twice: completions
    longer than ``max_chars`` are not matched (``overlong_score``, default 0.0), and with the
    ``regex`` package installed a match running past ``timeout_s`` is aborted and scores 0.0. Both are the
    completion's doing, so both are its verdict: a trainer ignores ``None``, and a completion that could escape
    its 0.0 by being long or by making the engine backtrack would be taught to do so. (Backtracking runs away
    while the engine exhausts the ways *not* to match; a match that exists is found early.)

    >>> RegexMatch(pattern="answer: [0-9]+$")(["so the answer: 4", "answer: four"])
    [1.0, 0.0]
    """

    def __init__(self, config: Any = None, **overrides: Any) -> None:
        super().__init__(config, **overrides)
        flags = (re.IGNORECASE if self.config.ignore_case else 0) | (re.MULTILINE if self.config.multiline else 0)
        flags |= re.DOTALL if self.config.dotall else 0
        try:
            re.compile(self.config.pattern, flags)  # the documented grammar is Python's `re`
            engine = _regex_engine or re
            self.compiled = engine.compile(self.config.pattern, flags)
        except Exception as exc:  # re.error, or the `regex` engine's own error
            raise ConfigError(f"reward 'regex_match': invalid pattern {self.config.pattern!r}: {exc}") from None

    def score_one(self, completion: str, row: Mapping[str, Any]) -> RewardResult:
        text = completion.strip() if self.config.strip else completion
        if len(text) > self.config.max_chars:
            return RewardResult(
                score=self.config.overlong_score, reason=f"{len(text)} chars > max_chars={self.config.max_chars}"
            )
        matcher = self.compiled.fullmatch if self.config.mode == "fullmatch" else self.compiled.search
        try:
            found = matcher(text, timeout=self.config.timeout_s) if _regex_engine is not None else matcher(text)
        except TimeoutError:
            return RewardResult(score=0.0, reason=f"no match found within timeout_s={self.config.timeout_s}s")
        if found is None:
            return RewardResult(score=0.0, reason=f"no {self.config.mode} match")
        return RewardResult(score=1.0, reason=f"{self.config.mode} match {found.group()[:80]!r}")


# -- json_schema -------------------------------------------------------------------------------------
class JsonSchemaConfig(RewardConfig):
    json_schema: dict[str, Any] | bool | None = Field(None, description="a JSON Schema the JSON must satisfy")
    pydantic_model: str | None = Field(None, description='or a pydantic model as import path "pkg.mod:Model"')
    extract: Literal["auto", "whole", "fenced"] = Field(
        "auto",
        description="auto: the last ```json (or unlabelled) fenced block if any, else the whole completion",
    )
    max_chars: int = Field(1_000_000, gt=0, description="longer completions are not parsed and score 0.0")

    @model_validator(mode="after")
    def _one_source(self) -> JsonSchemaConfig:
        if (self.json_schema is None) == (self.pydantic_model is None):
            raise ValueError("give exactly one of json_schema or pydantic_model")
        if self.json_schema is not None:
            from jsonschema import SchemaError
            from jsonschema.validators import validator_for

            try:
                # cast: the stubs leave out boolean schemas, which JSON Schema allows
                validator_for(self.json_schema).check_schema(cast(Any, self.json_schema))
            except SchemaError as exc:
                raise ValueError(f"invalid JSON Schema: {exc.message}") from None
        if self.pydantic_model is not None and not re.fullmatch(r"[\w.]+:[\w.]+", self.pydantic_model):
            raise ValueError(f'pydantic_model must look like "pkg.mod:Model", got {self.pydantic_model!r}')
        return self


def import_model(path: str) -> type[BaseModel]:
    """The pydantic model class named by ``"pkg.mod:Model"``; :class:`ConfigError` if absent or not a model."""
    module_name, _, attr = path.partition(":")
    try:
        target: Any = importlib.import_module(module_name)
        for part in attr.split("."):
            target = getattr(target, part)
    except (ImportError, AttributeError) as exc:
        raise ConfigError(f"reward 'json_schema': cannot import {path!r}: {exc}") from None
    if not (isinstance(target, type) and issubclass(target, BaseModel)):
        raise ConfigError(f"reward 'json_schema': {path!r} is not a pydantic model class")
    return target


def extract_json_text(text: str, mode: str) -> str | None:
    """The JSON candidate: the last ``json``/unlabelled fenced block (``fenced``/``auto``) or the whole text."""
    if mode != "whole":
        blocks = [body for _, _, info, body in fenced_blocks(text) if info.lower() in ("", "json")]
        if blocks:
            return blocks[-1].strip()
        if mode == "fenced":
            return None
    return text.strip()


#: Longest number literal accepted (Python's default limit for int conversion): a model must not be able to
#: turn a wrong answer into an unscorable one with a 100,000-digit number.
MAX_NUMBER_CHARS = 4300


class NotStrictJson(ValueError):
    """Text that Python's lenient decoder would accept (``NaN``, ``1e999``) or choke on (a 100k-digit number)."""


def _reject_constant(name: str) -> Any:
    raise NotStrictJson(f"{name} is not a JSON number")


def _strict_int(text: str) -> int:
    if len(text) > MAX_NUMBER_CHARS:
        raise NotStrictJson(f"a number of {len(text)} characters (limit {MAX_NUMBER_CHARS})")
    try:
        return int(text)
    except ValueError as exc:  # a stricter interpreter-wide digit limit
        raise NotStrictJson(f"a number Python cannot read: {exc}") from None


def _strict_float(text: str) -> float:
    if len(text) > MAX_NUMBER_CHARS:
        raise NotStrictJson(f"a number of {len(text)} characters (limit {MAX_NUMBER_CHARS})")
    value = float(text)
    if not math.isfinite(value):
        raise NotStrictJson(f"{text[:40]} is out of range for a 64-bit float")
    return value


def loads_strict(text: str) -> Any:
    """``json.loads`` as RFC 8259 reads JSON: ``NaN``/``Infinity``, numbers that overflow a float and
    over-long numbers raise :class:`NotStrictJson` (``json.JSONDecodeError`` for syntax errors)."""
    return json.loads(text, parse_constant=_reject_constant, parse_int=_strict_int, parse_float=_strict_float)


def _json_path(parts: Any) -> str:
    path = "$"
    for part in parts:
        path += f"[{part}]" if isinstance(part, int) else f".{part}"
    return path


@register_reward("json_schema")
class JsonSchema(Reward[JsonSchemaConfig]):
    """1.0 if the completion's JSON validates against a JSON Schema or a pydantic model, else 0.0.

    Formula: ``1.0 if validate(json.loads(extract(completion))) else 0.0``. ``extract`` takes the last
    fenced ```` ```json ```` (or unlabelled) block, else the whole completion. Parsing is strict JSON:
    ``NaN``, ``Infinity``, ``1e999`` and numbers over ``MAX_NUMBER_CHARS`` characters score 0.0. An invalid schema or an
    unimportable model is a :class:`ConfigError`; the reason names the failing field (``$.items[0].qty``).
    A completion over ``max_chars`` or nested too deeply to parse or validate scores 0.0: what the completion
    makes uncheckable is its own verdict, never ``None`` (which a trainer ignores).

    >>> r = JsonSchema(json_schema={"type": "object", "required": ["x"], "properties": {"x": {"type": "integer"}}})
    >>> r(['{"x": 1}', 'here: ```json\\n{"x": "1"}\\n```', "x=1"])
    [1.0, 0.0, 0.0]
    """

    def __init__(self, config: Any = None, **overrides: Any) -> None:
        super().__init__(config, **overrides)
        self.model = import_model(self.config.pydantic_model) if self.config.pydantic_model else None

    def score_one(self, completion: str, row: Mapping[str, Any]) -> RewardResult:
        if len(completion) > self.config.max_chars:  # too big to check is the completion's doing: its 0.0
            return RewardResult(score=0.0, reason=f"{len(completion)} chars > max_chars={self.config.max_chars}")
        candidate = extract_json_text(completion, self.config.extract)
        if candidate is None:
            return RewardResult(score=0.0, reason="no fenced JSON block")
        try:
            data = loads_strict(candidate)
        except json.JSONDecodeError as exc:
            return RewardResult(score=0.0, reason=f"not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}")
        except NotStrictJson as exc:
            return RewardResult(score=0.0, reason=f"not valid JSON: {exc}")
        except RecursionError:
            return RewardResult(score=0.0, reason="JSON nested too deeply")
        return self._validate(data)

    def _validate(self, data: Any) -> RewardResult:
        try:
            return self._validated(data)
        except RecursionError:  # a recursive schema walked down a completion nested too deeply
            return RewardResult(score=0.0, reason="JSON nested too deeply to validate")

    def _validated(self, data: Any) -> RewardResult:
        if self.model is not None:
            try:
                self.model.model_validate(data)
            except ValidationError as exc:
                errors = exc.errors()
                first = errors[0]
                where = _json_path(first["loc"])
                return RewardResult(score=0.0, reason=f"{where}: {first['msg']} ({len(errors)} error(s))")
            return RewardResult(score=1.0, reason=f"valid {self.model.__name__}")
        from jsonschema.exceptions import best_match
        from jsonschema.validators import validator_for

        schema = cast("dict[str, Any] | bool", self.config.json_schema)  # set: the config has exactly one source
        validator = validator_for(schema)(schema)
        error = best_match(validator.iter_errors(data))
        if error is None:
            return RewardResult(score=1.0, reason="valid against schema")
        return RewardResult(score=0.0, reason=f"{_json_path(error.absolute_path)}: {error.message[:200]}")


__all__ = [
    "MAX_NUMBER_CHARS",
    "JsonSchema",
    "NotStrictJson",
    "RegexMatch",
    "TagCount",
    "ThinkFormat",
    "check_think_format",
    "extract_json_text",
    "fenced_blocks",
    "loads_strict",
    "mask_code",
]
