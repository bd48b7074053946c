"""Rubrics of weighted criteria: a verdict per criterion (structured output), aggregated into one score.

A rubric is a list of :class:`Criterion` (``id``, ``description``, ``weight``, ``required``), written inline or in a
YAML file shaped like a constitution (``name``, ``description``, ``criteria: [...]``). The judge answers one JSON
object with a verdict per criterion id — ``{"criteria": {"<id>": {"met": true, "reason": "..."}}}`` for pass/fail
rubrics, ``{"criteria": {"<id>": {"score": 3}}}`` when ``scale`` grades each criterion ``0..scale``. Each criterion
is read on its own: a missing, malformed or out-of-range entry abstains *for that criterion only*; an answer with
no JSON at all abstains for every criterion.

Aggregation of the per-criterion values ``v_c`` in [0, 1] (abstained criteria left out):

- ``weighted_mean``: ``sum_c w_c v_c / sum_c w_c``;
- ``min``: ``min_c v_c`` (the weakest criterion decides);
- ``all_required``: 1.0 when every required criterion passes (``v_c >= pass_threshold``), else 0.0.

Under every aggregation a failed required criterion makes the score 0.0, and a required criterion that
abstained (while none failed) makes it ``None``: the gate cannot be established, so the sample is unscorable
rather than passed (fail closed). No answered criterion at all is ``None``.

>>> rubric = Rubric(criteria=[Criterion(id="correct", description="The final answer is right.", required=True),
...                           Criterion(id="concise", description="No filler.", weight=0.5)])
>>> aggregate(rubric, {"correct": 1.0, "concise": 0.0}, "weighted_mean").score
0.6666666666666666
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from rewardsmith.judges.base import ChatClient, ChatParams, ChatResult, JudgeError
from rewardsmith.judges.group import json_candidates
from rewardsmith.judges.strategy import JudgeStrategy
from rewardsmith.judges.templates import check_template, render_messages

Aggregation = Literal["weighted_mean", "min", "all_required"]


class Criterion(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(pattern=r"^[A-Za-z0-9_.-]{1,64}$", description="short stable name, the key of the judge's answer")
    description: str = Field(min_length=1, description="what a response must do to meet the criterion")
    weight: float = Field(1.0, gt=0, allow_inf_nan=False)
    required: bool = Field(False, description="failing it makes the score 0 whatever the aggregation")


class Rubric(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = "rubric"
    description: str = ""
    criteria: tuple[Criterion, ...] = Field(min_length=1)

    @model_validator(mode="after")
    def _unique_ids(self) -> Rubric:
        ids = [c.id for c in self.criteria]
        duplicates = sorted({i for i in ids if ids.count(i) > 1})
        if duplicates:
            raise ValueError(f"criterion ids must be unique; repeated: {duplicates}")
        return self

    @property
    def required(self) -> list[Criterion]:
        return [c for c in self.criteria if c.required]


def load_rubric(path: str | Path) -> Rubric:
    """A rubric from a YAML file: ``criteria: [{id, description, weight, required}, ...]`` (``name`` optional)."""
    from rewardsmith.yaml_files import read_yaml_file

    data = read_yaml_file(path, "rubric file")
    if not isinstance(data, dict):
        raise ValueError(f"{path}: a rubric file is a mapping with a 'criteria' list")
    data.setdefault("name", Path(path).stem)
    return Rubric.model_validate(data)


class CriterionVerdict(BaseModel):
    id: str
    value: float | None = Field(None, ge=0.0, le=1.0, description="1 = met, 0 = not met; graded in between")
    reason: str = ""

    @property
    def abstained(self) -> bool:
        return self.value is None


class RubricScore(BaseModel):
    score: float | None
    verdicts: list[CriterionVerdict]
    reason: str = ""
    raw: str = ""
    model: str = ""

    @property
    def parse_failures(self) -> int:
        return sum(v.abstained for v in self.verdicts)


class _Entry(BaseModel):
    met: bool | None = None
    score: float | None = Field(None, allow_inf_nan=False)
    reason: str = ""

    @field_validator("met", mode="before")
    @classmethod
    def _words(cls, value: Any) -> Any:
        if isinstance(value, str):
            word = value.strip().lower()
            if word in {"yes", "pass", "passed", "true", "met"}:
                return True
            if word in {"no", "fail", "failed", "false", "not met"}:
                return False
            raise ValueError(f"not a verdict: {value!r}")
        return value


def read_criteria_answer(text: str, rubric: Rubric, scale: int | None = None) -> list[CriterionVerdict]:
    """The judge's text -> one verdict per criterion; each unreadable entry abstains alone, with its reason."""
    answer: dict[str, Any] | None = None
    for candidate in json_candidates(text):
        try:
            value = json.loads(candidate)
        except json.JSONDecodeError:
            continue
        if isinstance(value, dict):
            answer = value.get("criteria", value) if isinstance(value.get("criteria", value), dict) else None
            if answer is not None:
                break
    if answer is None:
        why = f"no JSON object with criteria in answer: {text[:80]!r}"
        return [CriterionVerdict(id=c.id, reason=why) for c in rubric.criteria]
    return [_read_entry(c.id, answer.get(c.id), scale) for c in rubric.criteria]


def _read_entry(criterion: str, entry: Any, scale: int | None) -> CriterionVerdict:
    if entry is None:
        return CriterionVerdict(id=criterion, reason="no verdict for this criterion")
    if isinstance(entry, (bool, str)) and scale is None:
        entry = {"met": entry}
    elif isinstance(entry, (int, float)) and not isinstance(entry, bool) and scale is not None:
        entry = {"score": entry}
    try:
        parsed = _Entry.model_validate(entry)
    except ValidationError as exc:
        return CriterionVerdict(id=criterion, reason=f"unreadable verdict: {exc.errors()[0]['msg'][:80]}")
    if scale is None:
        if parsed.met is None:
            return CriterionVerdict(id=criterion, reason="verdict has no 'met'")
        return CriterionVerdict(id=criterion, value=1.0 if parsed.met else 0.0, reason=parsed.reason)
    if parsed.score is None:
        return CriterionVerdict(id=criterion, reason="verdict has no 'score'")
    if not 0 <= parsed.score <= scale:
        return CriterionVerdict(id=criterion, reason=f"score {parsed.score:g} outside 0..{scale}")
    return CriterionVerdict(id=criterion, value=parsed.score / scale, reason=parsed.reason)


def aggregate(
    rubric: Rubric, values: dict[str, float | None], how: Aggregation, *, pass_threshold: float = 0.5
) -> RubricScore:
    """Per-criterion values (``None`` = abstained) -> the rubric's score and a reason that lists every criterion."""
    verdicts = [CriterionVerdict(id=c.id, value=values.get(c.id)) for c in rubric.criteria]
    return aggregate_verdicts(rubric, verdicts, how, pass_threshold=pass_threshold)


def aggregate_verdicts(
    rubric: Rubric, verdicts: list[CriterionVerdict], how: Aggregation, *, pass_threshold: float = 0.5
) -> RubricScore:
    by_id = {v.id: v for v in verdicts}
    listing = "; ".join(_describe(c, by_id[c.id], pass_threshold) for c in rubric.criteria)
    values = [(c, by_id[c.id].value) for c in rubric.criteria]
    answered = [(c, value) for c, value in values if value is not None]
    failed = [c.id for c, value in answered if c.required and value < pass_threshold]
    unknown = [c.id for c, value in values if c.required and value is None]

    def result(score: float | None, head: str) -> RubricScore:
        return RubricScore(score=score, verdicts=verdicts, reason=f"{head}: {listing}")

    if failed:
        return result(0.0, f"required criterion failed ({', '.join(failed)})")
    if unknown:
        return result(None, f"required criterion abstained ({', '.join(unknown)})")
    if not answered:
        return result(None, "no criterion answered")
    if how == "weighted_mean":
        score = sum(c.weight * v for c, v in answered) / sum(c.weight for c, _ in answered)
    elif how == "min":
        score = min(v for _, v in answered)
    else:
        score = 1.0  # every required criterion passed (a failure returned above)
    return result(score, f"{how} {score:.3f}")


def _describe(criterion: Criterion, verdict: CriterionVerdict, pass_threshold: float) -> str:
    tags = [f"w{criterion.weight:g}"] + (["required"] if criterion.required else [])
    if verdict.abstained:
        state = f"abstain ({verdict.reason})" if verdict.reason else "abstain"
    elif verdict.value in (0.0, 1.0):
        state = "pass" if verdict.value >= pass_threshold else "fail"
    else:
        state = f"{verdict.value:.2f}"
    return f"{criterion.id}={state} ({', '.join(tags)})"


def answer_schema(rubric: Rubric, scale: int | None) -> dict[str, Any]:
    """JSON Schema of the answer: one entry per criterion id, each ``{"met": bool}`` or ``{"score": 0..scale}``."""
    if scale is None:
        entry = {"type": "object", "properties": {"met": {"type": "boolean"}}, "required": ["met"]}
    else:
        score = {"type": "integer", "minimum": 0, "maximum": scale}
        entry = {"type": "object", "properties": {"score": score}, "required": ["score"]}
    ids = [c.id for c in rubric.criteria]
    criteria = {"type": "object", "properties": dict.fromkeys(ids, entry), "required": ids}
    return {"type": "object", "properties": {"criteria": criteria}, "required": ["criteria"]}


class CriteriaJudge(JudgeStrategy):
    """Judges one response against a :class:`Rubric`: one request for all criteria, or one per criterion."""

    def __init__(
        self,
        client: ChatClient,
        rubric: Rubric,
        *,
        aggregation: Aggregation = "weighted_mean",
        scale: int | None = None,
        per_criterion: bool = False,
        template: str = "criteria",
        structured: bool = True,
        max_tokens: int = 384,
        pass_threshold: float = 0.5,
    ) -> None:
        if aggregation == "all_required" and not rubric.required:
            raise ValueError("aggregation 'all_required' needs at least one required criterion")
        self.client = client
        self.rubric = rubric
        self.aggregation = aggregation
        self.scale = scale
        self.per_criterion = per_criterion
        self.template = template
        self.structured = structured
        self.pass_threshold = pass_threshold
        self.params = ChatParams(temperature=0.0, max_tokens=max_tokens)
        check_template(template, prompt="p", response="r", criteria=list(rubric.criteria), scale=scale, reference=None)

    @property
    def model(self) -> str:
        return self.client.model

    async def ajudge(self, prompt: str, response: str, *, reference: str | None = None) -> RubricScore:
        parts = (
            [Rubric(name=self.rubric.name, criteria=(c,)) for c in self.rubric.criteria]
            if self.per_criterion
            else [self.rubric]
        )
        answers = await asyncio.gather(*(self._ask(part, prompt, response, reference) for part in parts))
        verdicts = [v for part_verdicts, _ in answers for v in part_verdicts]
        scored = aggregate_verdicts(self.rubric, verdicts, self.aggregation, pass_threshold=self.pass_threshold)
        raw = "\n".join(raw for _, raw in answers)
        return scored.model_copy(update={"raw": raw, "model": self.model})

    async def _ask(
        self, part: Rubric, prompt: str, response: str, reference: str | None
    ) -> tuple[list[CriterionVerdict], str]:
        messages = render_messages(
            self.template, prompt=prompt, response=response, criteria=list(part.criteria), scale=self.scale,
            reference=reference,
        )  # fmt: skip
        params = self.params
        if self.structured:
            params = params.model_copy(update={"json_schema": json.dumps(answer_schema(part, self.scale))})
        try:
            result: ChatResult = await self.client.acomplete(messages, params)
        except JudgeError as exc:
            return [CriterionVerdict(id=c.id, reason=f"judge failed: {exc}") for c in part.criteria], ""
        verdicts = read_criteria_answer(result.text, part, self.scale)
        if result.finish_reason == "length":
            verdicts = [
                v if not v.abstained else v.model_copy(update={"reason": f"answer cut off (max_tokens); {v.reason}"})
                for v in verdicts
            ]
        return verdicts, result.text
