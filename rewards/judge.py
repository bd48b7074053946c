"""``llm_judge``: an LLM judge as a reward, on a 1..N scale (pointwise) or pairwise against a reference column.

- ``mode="scale"``: ``score = (s - 1) / (scale - 1)`` where ``s`` is the judge's 1..scale score for the completion
  given the ``guideline``, probability-weighted over the score tokens when the endpoint returns log-probs (G-Eval);
  see :class:`~rewardsmith.judges.scale.ScaleJudge`. (Weighted criteria judged one by one are ``llm_rubric``.)
- ``mode="pairwise"``: ``score = P(completion is better than row[reference_column])``, judged in both
  presentation orders and averaged (see :class:`~rewardsmith.judges.pairwise.PairwiseJudge`).

The names from before the scale judge had its own still work in spec files: ``mode: rubric`` is ``mode: scale``
and the key ``rubric`` is ``guideline``.

A judge that abstains (unparseable or truncated answer) or an endpoint that fails after retries gives
``None`` with the reason, never 0.0: an infrastructure failure must not look like a bad completion. A completion
longer than ``max_completion_chars`` is not sent and scores 0.0 (:mod:`~rewardsmith.rewards.judge_base`). Keep
``max_completion_chars`` within the judge's context: a request the endpoint still refuses for its length is the
configuration's failure, ``None``.
Scoring is async (all samples of a batch in flight, bounded by the client's ``concurrency``); each
sample is bounded by ``sample_timeout`` seconds, so a stuck endpoint cannot stall a training step.

>>> reward = get_reward("llm_judge", {"mode": "scale", "guideline": "Is the answer correct?",
...                                   "client": {"backend": "embedded"}})  # doctest: +SKIP
>>> reward(["4"], prompts=["What is 2+2?"])  # doctest: +SKIP
[0.71]
"""

from __future__ import annotations

import asyncio
from typing import Any, Literal

from pydantic import Field, model_validator

from rewardsmith.judges.clients.factory import JudgeClientConfig
from rewardsmith.registry import register_reward
from rewardsmith.reward import ConfigError, RewardConfig
from rewardsmith.rewards.judge_base import MAX_COMPLETION_CHARS, JudgeReward
from rewardsmith.types import RewardResult, prompt_text

#: config keys and values spec files wrote before the scale judge had its own name, and what they are now
FORMER_KEYS = {"rubric": "guideline"}
FORMER_MODES = {"rubric": "scale"}


class LLMJudgeConfig(RewardConfig):
    mode: Literal["scale", "pairwise"] = Field(
        "scale", description="a score on a 1..scale scale, or pairwise vs reference ('rubric': former name of 'scale')"
    )
    client: JudgeClientConfig = Field(default_factory=JudgeClientConfig, description="judge backend (see make_client)")
    guideline: str | None = Field(
        None, description="scale mode: what a good response does ('rubric': former name of this key)"
    )
    scale: int = Field(5, ge=2, le=100, description="scale mode: scores are 1..scale")
    question: str | None = Field(None, description="pairwise mode: the comparison question / principle")
    reference_column: str = Field("reference", description="pairwise mode: dataset column with the reference response")
    template: str | None = Field(None, description="prompt template name or path (default: scale / pairwise)")
    use_logprobs: bool = Field(True, description="soft scores from option-token log-probs when available")
    chain_of_thought: bool = Field(False, description="pairwise mode: reason first, clamp the verdict to 0.4/0.6")
    sample_timeout: float = Field(180.0, gt=0, description="seconds per sample before it is unscorable")
    max_completion_chars: int = Field(
        MAX_COMPLETION_CHARS, gt=0, description="longer completions are not sent to the judge and score 0.0"
    )

    @model_validator(mode="before")
    @classmethod
    def _former_names(cls, data: Any) -> Any:
        """Spec files written before the scale judge had its own name keep working (``mode: rubric``, ``rubric:``)."""
        if not isinstance(data, dict):
            return data
        data = dict(data)
        for former, name in FORMER_KEYS.items():
            if former in data:
                if name in data:
                    raise ValueError(f"give {name!r} or its former name {former!r}, not both")
                data[name] = data.pop(former)
        if isinstance(data.get("mode"), str):
            data["mode"] = FORMER_MODES.get(data["mode"], data["mode"])
        return data

    @model_validator(mode="after")
    def _mode_fields(self) -> LLMJudgeConfig:
        if self.mode == "scale" and self.chain_of_thought:
            raise ValueError("chain_of_thought applies to mode='pairwise' only")
        return self


@register_reward("llm_judge")
class LLMJudge(JudgeReward[LLMJudgeConfig]):
    """An LLM judge as a reward: a 1..N scale score in [0, 1], or P(completion beats the reference)."""

    def __init__(self, config: Any = None, **overrides: Any) -> None:
        super().__init__(config, **overrides)
        self._strategy_for_check()

    @property
    def gold_columns(self) -> tuple[str, ...]:
        """The reference column in pairwise mode; a scale score reads no gold."""
        return (self.config.reference_column,) if self.config.mode == "pairwise" else ()

    def _strategy_for_check(self) -> None:
        """Render the template once so a bad template or guideline fails at construction, not mid-training."""
        from rewardsmith.judges.scale import check_scale_template
        from rewardsmith.judges.templates import TemplateError, check_template

        cfg = self.config
        try:
            if cfg.mode == "scale":
                check_scale_template(cfg.template or "scale", guideline=cfg.guideline, scale=cfg.scale)
            else:
                check_template(
                    cfg.template or ("pairwise_cot" if cfg.chain_of_thought else "pairwise"),
                    prompt="p", first="a", second="b", question=cfg.question,
                )  # fmt: skip
        except TemplateError as exc:
            raise ConfigError(f"reward {self.name!r}: {exc}") from None

    def build_strategy(self) -> Any:
        cfg = self.config
        if cfg.mode == "scale":
            from rewardsmith.judges.scale import ScaleJudge

            return ScaleJudge(
                self.client, guideline=cfg.guideline, scale=cfg.scale, template=cfg.template or "scale",
                use_logprobs=cfg.use_logprobs,
            )  # fmt: skip
        from rewardsmith.judges.pairwise import PairwiseJudge

        return PairwiseJudge(
            self.client, template=cfg.template, use_logprobs=cfg.use_logprobs, chain_of_thought=cfg.chain_of_thought
        )

    async def ascore_batch(self, completions: list[str | None], rows: list[dict[str, Any]]) -> list[RewardResult]:
        return list(await asyncio.gather(*(self._ascore_one(c, r) for c, r in zip(completions, rows, strict=True))))

    async def _ascore_one(self, completion: str | None, row: dict[str, Any]) -> RewardResult:
        if (unshown := self.not_shown(completion)) is not None:
            return unshown
        prompt = prompt_text(row.get("prompt")) or ""
        return await self.asked(self._judge(prompt, str(completion), row), self.config.sample_timeout)

    async def _judge(self, prompt: str, completion: str, row: dict[str, Any]) -> RewardResult:
        cfg = self.config
        if cfg.mode == "scale":
            verdict = await self.strategy.ajudge(prompt, completion)
            if verdict.normalized is None:
                return RewardResult.unscorable(f"judge abstained: {verdict.reason}", judge_raw=verdict.raw)
            return RewardResult(
                score=verdict.normalized,
                reason=f"rubric {verdict.score:.2f}/{cfg.scale} ({verdict.source})",
                judge_raw=verdict.raw,
            )
        reference, missing = self.reference(
            row, cfg.reference_column, f"no reference response in column {cfg.reference_column!r}"
        )
        if missing is not None:
            return missing
        verdict = await self.strategy.ajudge(prompt, completion, reference, question=cfg.question)
        if verdict.prob_a is None:
            return RewardResult.unscorable(f"judge abstained: {verdict.reason}", flipped=verdict.flipped)
        return RewardResult(
            score=verdict.prob_a,
            reason=f"P(better than reference)={verdict.prob_a:.3f}; {verdict.reason}",
            flipped=verdict.flipped,
        )
