"""``llm_rubric``: a rubric of weighted criteria judged per criterion (structured output) as a reward in [0, 1].

Each completion gets a verdict per criterion from :class:`~rewardsmith.judges.criteria.CriteriaJudge` (one request
holding every criterion, or one request per criterion with ``per_criterion``), aggregated by ``weighted_mean``,
``min`` or ``all_required``; a failed required criterion scores 0.0. A criterion whose verdict cannot be read
abstains alone; the sample is ``None`` only when no criterion answered or a required one abstained. The reason
lists every criterion: ``weighted_mean 0.667: correct=pass (w1, required); concise=fail (w0.5)``.

Criteria are inline or in a YAML file (``criteria_file``)::

    name: math-answer
    criteria:
      - {id: correct, description: "The final answer equals the reference.", weight: 2, required: true}
      - {id: shows_work, description: "The steps that lead to the answer are shown.", weight: 1}

>>> reward = get_reward("llm_rubric", {"criteria_file": "rubric.yaml",
...                                    "client": {"backend": "embedded"}})  # doctest: +SKIP
>>> reward(["4"], prompts=["What is 2+2?"])  # doctest: +SKIP
[0.67]
"""

from __future__ import annotations

import asyncio
from typing import Any, Literal

from pydantic import Field, model_validator

from rewardsmith.judges.clients.factory import JudgeClientConfig
from rewardsmith.judges.criteria import Criterion, Rubric, load_rubric
from rewardsmith.registry import register_reward
from rewardsmith.reward import ConfigError, RewardConfig
from rewardsmith.rewards.judge_base import MAX_COMPLETION_CHARS, JudgeReward
from rewardsmith.types import RewardResult, prompt_text


class RubricRewardConfig(RewardConfig):
    client: JudgeClientConfig = Field(default_factory=JudgeClientConfig, description="judge backend (see make_client)")
    criteria: list[Criterion] | None = Field(None, description="inline criteria: [{id, description, weight, required}]")
    criteria_file: str | None = Field(None, description="YAML file with a 'criteria' list (instead of inline)")
    aggregation: Literal["weighted_mean", "min", "all_required"] = "weighted_mean"
    scale: int | None = Field(None, ge=1, le=100, description="None: pass/fail per criterion; N: graded 0..N")
    pass_threshold: float = Field(0.5, ge=0.0, le=1.0, description="graded value at which a criterion passes")
    per_criterion: bool = Field(False, description="one request per criterion instead of one for all")
    reference_column: str | None = Field(None, description="dataset column shown to the judge as a reference answer")
    template: str = Field("criteria", description="prompt template name or path")
    structured: bool = Field(True, description="send the answer's JSON Schema as response_format")
    max_tokens: int = Field(384, ge=8)
    sample_timeout: float = Field(180.0, gt=0, description="seconds per sample before it is unscorable")
    max_completion_chars: int = Field(
        MAX_COMPLETION_CHARS, gt=0, description="longer completions are not sent to the judge and score 0.0"
    )

    @model_validator(mode="after")
    def _one_source(self) -> RubricRewardConfig:
        if (self.criteria is None) == (self.criteria_file is None):
            raise ValueError("give exactly one of criteria (inline) or criteria_file")
        return self


@register_reward("llm_rubric")
class LLMRubric(JudgeReward[RubricRewardConfig]):
    """An LLM judge checking weighted criteria; the score aggregates the per-criterion verdicts."""

    name = "llm_rubric"
    Config = RubricRewardConfig

    def __init__(self, config: Any = None, **overrides: Any) -> None:
        super().__init__(config, **overrides)
        cfg = self.config
        try:
            if cfg.criteria_file:
                self.rubric = load_rubric(cfg.criteria_file)
            else:  # the config's validator makes criteria the source here
                self.rubric = Rubric(criteria=tuple(cfg.criteria or ()))
            self._judge_for(client=None)  # template and aggregation checked now, not mid-training
        except (OSError, ValueError) as exc:
            raise ConfigError(f"reward {self.name!r}: {exc}") from None

    @property
    def gold_columns(self) -> tuple[str, ...]:
        """The reference column when one is configured; judging against the criteria alone reads no gold."""
        return (self.config.reference_column,) if self.config.reference_column else ()

    def _judge_for(self, client: Any):
        from rewardsmith.judges.criteria import CriteriaJudge

        cfg = self.config
        return CriteriaJudge(
            client, self.rubric, aggregation=cfg.aggregation, scale=cfg.scale, per_criterion=cfg.per_criterion,
            template=cfg.template, structured=cfg.structured, max_tokens=cfg.max_tokens,
            pass_threshold=cfg.pass_threshold,
        )  # fmt: skip

    def build_strategy(self) -> Any:
        return self._judge_for(self.client)

    async def ascore_batch(self, completions: list[str | None], rows: list[dict[str, Any]]) -> list[RewardResult]:
        judge = self.strategy
        return list(await asyncio.gather(*(self._one(judge, c, r) for c, r in zip(completions, rows, strict=True))))

    async def _one(self, judge: Any, completion: str | None, row: dict[str, Any]) -> RewardResult:
        if (unshown := self.not_shown(completion)) is not None:
            return unshown
        prompt = prompt_text(row.get("prompt")) or ""
        reference = None
        if self.config.reference_column is not None:
            column = self.config.reference_column
            reference, missing = self.reference(row, column, f"no reference in column {column!r}")
            if missing is not None:
                return missing
        scored = await self.asked(
            judge.ajudge(prompt, str(completion), reference=reference), self.config.sample_timeout
        )
        if isinstance(scored, RewardResult):
            return scored
        verdicts = {v.id: v.value for v in scored.verdicts}
        return RewardResult(score=scored.score, reason=scored.reason, criteria=verdicts)
