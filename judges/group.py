"""Group (listwise) judging: one request holds the prompt once and all G candidates, the judge scores each.

This is the shape of ART's RULER: GRPO only needs rewards that are right *relative to each other within a group*,
and a judge that sees the G completions side by side ranks them more consistently than G independent scale
calls, at roughly one request per group instead of one per completion.

Listwise judges have strong position effects, so each group is presented ``permutations`` times (k): the
first presentation in the given order, the second reversed (every candidate moves to the mirrored slot), the rest
seeded shuffles. A candidate's score is the mean of its normalised scores over the presentations that answered,
``score_i = mean_p s_{p,i} / scale``; the spread across presentations is reported as ``disagreement`` (mean over
candidates of max - min) and ``top_changed`` (the presentations disagree on the best candidate). A presentation
whose answer does not validate (see :class:`GroupAnswer`) abstains; a group where every presentation abstained
gets ``None`` for every candidate, never a default score.

>>> judge = GroupJudge(make_client("embedded"), permutations=2)  # doctest: +SKIP
>>> judge.judge("What is 2+2?", ["4", "5", "four"]).scores  # doctest: +SKIP
[0.9, 0.1, 0.8]
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import random
import re
from typing import Any

from pydantic import BaseModel, Field, ValidationError, field_validator

from rewardsmith.judges.base import ChatClient, ChatParams, ChatResult, JudgeError
from rewardsmith.judges.strategy import JudgeStrategy
from rewardsmith.judges.templates import check_template, render_messages


class CandidateScore(BaseModel):
    """One candidate's score as the judge wrote it: the number shown to it (1-based) and a score."""

    id: int
    score: float
    reason: str = ""

    @field_validator("score")
    @classmethod
    def _finite(cls, value: float) -> float:
        if value != value or value in (float("inf"), float("-inf")):
            raise ValueError("score is not finite")
        return value


class GroupAnswer(BaseModel):
    """The structured answer of a listwise judge: ``{"scores": [{"id": 1, "score": 7, "reason": "..."}, ...]}``.

    Two shorter forms are accepted because small judges write them: a list of numbers in presentation order
    (``{"scores": [7, 3]}``) and a mapping from id to score (``{"scores": {"1": 7, "2": 3}}``).
    """

    scores: list[CandidateScore]

    @field_validator("scores", mode="before")
    @classmethod
    def _short_forms(cls, value: Any) -> Any:
        if isinstance(value, dict):
            return [{"id": k, "score": v} for k, v in value.items()]
        if isinstance(value, list) and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in value):
            return [{"id": i + 1, "score": v} for i, v in enumerate(value)]
        return value

    def checked(self, n: int, scale: float) -> list[float]:
        """Scores by presented id (``1..n``), each in ``0..scale``; raises ``ValueError`` naming the fault."""
        ids = sorted(s.id for s in self.scores)
        if ids != list(range(1, n + 1)):
            raise ValueError(f"ids {ids} are not exactly 1..{n}")
        out = [0.0] * n
        for entry in self.scores:
            if not 0.0 <= entry.score <= scale:
                raise ValueError(f"candidate {entry.id} score {entry.score:g} outside 0..{scale:g}")
            out[entry.id - 1] = float(entry.score)
        return out


class Presentation(BaseModel):
    """One presentation: ``order[slot]`` = the candidate index shown at that slot (shown to the judge as slot+1)."""

    order: list[int]
    scores: list[float] | None = Field(None, description="normalised 0..1 per candidate index; None = abstain")
    raw: str = ""
    reason: str = ""


class GroupVerdict(BaseModel):
    scores: list[float | None]
    presentations: list[Presentation]
    disagreement: float | None = Field(None, description="mean over candidates of max - min across presentations")
    top_changed: bool = Field(False, description="the answered presentations disagree on the best candidate")
    reason: str = ""
    model: str = ""

    @property
    def abstained(self) -> bool:
        return all(s is None for s in self.scores)

    @property
    def answered(self) -> int:
        return sum(p.scores is not None for p in self.presentations)


_FENCED = re.compile(r"```(?:json)?\s*(\{.*?\})\s*```", flags=re.DOTALL)


def json_candidates(text: str) -> list[str]:
    """JSON objects a judge may have written: fenced blocks first, then the widest ``{...}`` span."""
    found = [m.group(1) for m in _FENCED.finditer(text)]
    start, end = text.find("{"), text.rfind("}")
    if 0 <= start < end:
        found.append(text[start : end + 1])
    return found


def read_group_answer(text: str, n: int, scale: float) -> tuple[list[float] | None, str]:
    """A judge's text -> scores by presented id in ``0..scale``, or ``None`` and why it abstains."""
    problems: list[str] = []
    for candidate in json_candidates(text):
        try:
            value = json.loads(candidate)
        except json.JSONDecodeError as exc:
            problems.append(f"not JSON ({exc.msg})")
            continue
        try:
            return GroupAnswer.model_validate(value).checked(n, scale), ""
        except (ValidationError, ValueError) as exc:
            problems.append(_short_error(exc))
    if not problems:
        return None, f"no JSON object in answer: {text[:120]!r}"
    return None, f"invalid answer ({problems[-1]}): {text[:120]!r}"


def _short_error(exc: Exception) -> str:
    if isinstance(exc, ValidationError):
        err = exc.errors()[0]
        return f"{'.'.join(str(p) for p in err['loc']) or 'answer'}: {err['msg']}"
    return str(exc)


def answer_schema(n: int, scale: int) -> dict[str, Any]:
    """The JSON Schema of a group answer for ``n`` candidates: ``{"scores": {"1": int, ..., "n": int}}``.

    Sent as ``response_format`` so a grammar-constrained server (llama.cpp) or a strict endpoint (OpenAI) returns
    exactly one integer per candidate; without it small models copy the example and drop candidates.
    """
    ids = [str(i) for i in range(1, n + 1)]
    score = {"type": "integer", "minimum": 0, "maximum": scale}
    scores = {"type": "object", "properties": dict.fromkeys(ids, score), "required": ids, "additionalProperties": False}
    return {
        "type": "object",
        "properties": {"scores": scores},
        "required": ["scores"],
        "additionalProperties": False,
    }


def presentation_orders(n: int, k: int, seed: int) -> list[list[int]]:
    """k presentation orders: as given, reversed, then seeded shuffles (distinct while distinct ones remain)."""
    orders = [list(range(n))]
    if k >= 2 and n >= 2:
        orders.append(list(reversed(range(n))))
    rng = random.Random(seed)
    tries = 0
    while len(orders) < k:
        order = list(range(n))
        rng.shuffle(order)
        tries += 1
        if order not in orders or tries > 50:
            orders.append(order)
    return orders[:k]


def group_seed(prompt: str, candidates: list[str]) -> int:
    """A seed from the group's content, so a rerun shows the same shuffles (and hits the request cache)."""
    digest = hashlib.sha256(json.dumps([prompt, candidates], ensure_ascii=False).encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big")


def combine_presentations(n: int, presentations: list[Presentation], *, model: str = "") -> GroupVerdict:
    """Average each candidate over the answered presentations; report the spread and whether the top changed."""
    answered = [p for p in presentations if p.scores is not None]
    if not answered:
        reasons = "; ".join(p.reason for p in presentations) or "no presentation"
        return GroupVerdict(scores=[None] * n, presentations=presentations, reason=f"abstain ({reasons})", model=model)
    answered_scores = [p.scores for p in answered if p.scores is not None]  # every answered presentation's
    per_candidate = [[given[i] for given in answered_scores] for i in range(n)]
    scores = [sum(values) / len(values) for values in per_candidate]
    disagreement = sum(max(v) - min(v) for v in per_candidate) / n
    # the best candidates of each presentation (ties included); the top changed when no candidate is best in all
    best = [{i for i in range(n) if given[i] == max(given)} for given in answered_scores]
    top_changed = not set.intersection(*best)
    reason = f"{len(answered)}/{len(presentations)} presentations answered; disagreement {disagreement:.2f}"
    if top_changed:
        reason += "; the presentations disagree on the best candidate"
    return GroupVerdict(
        scores=scores,
        presentations=presentations,
        disagreement=disagreement,
        top_changed=top_changed,
        reason=reason,
        model=model,
    )


class GroupJudge(JudgeStrategy):
    """Scores G candidates to one prompt in one request per presentation; ``permutations`` presentations."""

    def __init__(
        self,
        client: ChatClient,
        *,
        template: str = "group",
        permutations: int = 2,
        scale: int = 10,
        max_tokens: int = 512,
        question: str | None = None,
        structured: bool = True,
    ) -> None:
        if permutations < 1:
            raise ValueError(f"permutations must be >= 1, got {permutations}")
        if scale < 1:
            raise ValueError(f"scale must be >= 1, got {scale}")
        self.client = client
        self.template = template
        self.permutations = permutations
        self.scale = scale
        self.question = question
        self.structured = structured
        self.params = ChatParams(temperature=0.0, max_tokens=max_tokens)
        check_template(template, prompt="p", candidates=["a", "b"], scale=scale, question=question)

    def params_for(self, n: int) -> ChatParams:
        """Sampling parameters for a group of ``n``; with ``structured`` the endpoint is held to the answer schema."""
        if not self.structured:
            return self.params
        return self.params.model_copy(update={"json_schema": json.dumps(answer_schema(n, self.scale))})

    @property
    def model(self) -> str:
        return self.client.model

    def messages(self, prompt: str, shown: list[str]) -> list[dict[str, str]]:
        return render_messages(self.template, prompt=prompt, candidates=shown, scale=self.scale, question=self.question)

    async def ajudge(self, prompt: str, candidates: list[str]) -> GroupVerdict:
        n = len(candidates)
        if n == 0:
            return GroupVerdict(scores=[], presentations=[], reason="empty group", model=self.model)
        orders = presentation_orders(n, self.permutations, group_seed(prompt, candidates))
        presentations = await asyncio.gather(*(self._present(prompt, candidates, order) for order in orders))
        return combine_presentations(n, list(presentations), model=self.model)

    async def _present(self, prompt: str, candidates: list[str], order: list[int]) -> Presentation:
        try:
            messages = self.messages(prompt, [candidates[i] for i in order])
            result = await self.client.acomplete(messages, self.params_for(len(order)))
        except JudgeError as exc:
            return Presentation(order=order, reason=f"judge failed: {exc}")
        return self.read(result, order)

    def read(self, result: ChatResult, order: list[int]) -> Presentation:
        shown, why = read_group_answer(result.text, len(order), self.scale)
        if shown is None:
            if result.finish_reason == "length":
                why = "answer cut off before a complete JSON object (max_tokens)"
            return Presentation(order=order, raw=result.text, reason=why)
        scores = [0.0] * len(order)
        for slot, index in enumerate(order):
            scores[index] = shown[slot] / self.scale
        return Presentation(order=order, scores=scores, raw=result.text)
