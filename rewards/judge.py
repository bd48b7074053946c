"""``llm_judge``: an LLM judge as a reward, pointwise (rubric) or pairwise against a reference column.

- ``mode="rubric"``: ``score = (s - 1) / (scale - 1)`` where ``s`` is the judge's 1..scale score,
  probability-weighted over the score tokens when the endpoint returns log-probs (G-Eval).
- ``mode="pairwise"``: ``score = P(completion is better than row[reference_column])``, judged in both
  presentation orders and averaged (see :class:`~rewardsmith.judges.pairwise.PairwiseJudge`).

A judge that abstains (unparseable or truncated answer) or an endpoint that fails after retries gives
``None`` with the reason, never 0.0: an infrastructure failure must not look like a bad completion. A completion
longer than ``max_completion_chars`` is not sent and scores 0.0: what the completion's own size makes uncheckable
is its verdict (a trainer ignores ``None``, so a completion that escaped to it by overflowing the judge's context
would be taught to). Keep ``max_completion_chars`` within the judge's context: a request the endpoint still
refuses for its length is the configuration's failure, ``None``.
Scoring is async (all samples of a batch in flight, bounded by the client's ``concurrency``); each
sample is bounded by ``sample_timeout`` seconds, so a stuck endpoint cannot stall a training step.

>>> reward = get_reward("llm_judge", {"mode": "rubric", "rubric": "Is the answer correct?",
...                                   "client": {"backend": "embedded"}})  # doctest: +SKIP
>>> reward(["4"], prompts=["What is 2+2?"])  # doctest: +SKIP
[0.71]
"""

from __future__ import annotations

import asyncio
from typing import Any, Literal

from pydantic import Field, model_validator

from rewardsmith.bridge import run_sync
from rewardsmith.first_use import build_once
from rewardsmith.judges.clients.factory import JudgeClientConfig, ManagedChatClient
from rewardsmith.registry import register_reward
from rewardsmith.reward import ConfigError, Reward, RewardConfig
from rewardsmith.types import RewardResult, completion_text, prompt_text

#: default ``max_completion_chars`` of the judge rewards: about 8k tokens, inside a common judge's context
MAX_COMPLETION_CHARS = 32_000


class LLMJudgeConfig(RewardConfig):
    mode: Literal["rubric", "pairwise"] = Field("rubric", description="pointwise rubric score or pairwise vs reference")
    client: JudgeClientConfig = Field(default_factory=JudgeClientConfig, description="judge backend (see make_client)")
    rubric: str | None = Field(None, description="rubric mode: what a good response does")
    scale: int = Field(5, ge=2, le=100, description="rubric mode: scores are 1..scale")
    question: str | None = Field(None, description="pairwise mode: the comparison question / principle")
    reference_column: str = Field("reference", description="pairwise mode: dataset column with the reference response")
    template: str | None = Field(None, description="prompt template name or path (default: rubric / pairwise)")
    use_logprobs: bool = Field(True, description="soft scores from option-token log-probs when available")
    chain_of_thought: bool = Field(False, description="pairwise mode: reason first, clamp the verdict to 0.4/0.6")
    sample_timeout: float = Field(180.0, gt=0, description="seconds per sample before it is unscorable")
    max_completion_chars: int = Field(
        MAX_COMPLETION_CHARS, gt=0, description="longer completions are not sent to the judge and score 0.0"
    )

    @model_validator(mode="after")
    def _mode_fields(self) -> LLMJudgeConfig:
        if self.mode == "rubric" and self.chain_of_thought:
            raise ValueError("chain_of_thought applies to mode='pairwise' only")
        return self


def too_long_for_judge(completion: str, limit: int) -> RewardResult | None:
    """The 0.0 of a completion too long to show the judge, or ``None`` when it fits."""
    if len(completion) <= limit:
        return None
    return RewardResult(score=0.0, reason=f"{len(completion)} chars > max_completion_chars={limit}: not judged")


class JudgeClientMixin:
    """A judge reward's client: built lazily, dropped on pickling (a spawned scoring process opens its own
    connections), and closed with the event loop the bridge keeps for the calling thread."""

    #: attributes rebuilt after unpickling instead of copied
    _TRANSIENT: tuple[str, ...] = ("_client",)
    _client: ManagedChatClient | None

    def __getstate__(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if k not in self._TRANSIENT}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        for name in self._TRANSIENT:
            setattr(self, name, None)

    @property
    def client(self) -> ManagedChatClient:
        """Built on first use, once: threads arriving together share one client (one embedded server)."""
        # the mixin's host is a Reward whose config has a judge client
        return build_once(self, "_client", self.config.client.build)  # type: ignore[attr-defined]

    def score_batch(self, completions: list[str | None], rows: list[dict[str, Any]]) -> list[RewardResult]:
        # the thread's kept loop reuses the client's connections across batches and closes them when it closes;
        # the mixin's host is a Reward, which has ascore_batch
        return run_sync(self.ascore_batch(completions, rows), close=self.client)  # type: ignore[attr-defined]


@register_reward("llm_judge")
class LLMJudge(JudgeClientMixin, Reward[LLMJudgeConfig]):
    """An LLM judge as a reward: rubric score in [0, 1], or P(completion beats the reference)."""

    def __init__(self, config: Any = None, **overrides: Any) -> None:
        super().__init__(config, **overrides)
        self._client: ManagedChatClient | None = None
        self._strategy: Any = None
        self._strategy_for_check()

    _TRANSIENT = ("_client", "_strategy")

    def gold_columns(self) -> tuple[str, ...]:
        """The reference column in pairwise mode; a rubric reads no gold."""
        return (self.config.reference_column,) if self.config.mode == "pairwise" else ()

    def _strategy_for_check(self) -> None:
        """Render the template once so a bad template or rubric fails at construction, not mid-training."""
        from rewardsmith.judges.templates import TemplateError, check_template

        cfg = self.config
        try:
            if cfg.mode == "rubric":
                check_template(
                    cfg.template or "rubric",
                    prompt="p",
                    response="r",
                    scale=cfg.scale,
                    rubric=cfg.rubric,
                    reference=None,
                )
            else:
                check_template(
                    cfg.template or ("pairwise_cot" if cfg.chain_of_thought else "pairwise"),
                    prompt="p", first="a", second="b", question=cfg.question,
                )  # fmt: skip
        except TemplateError as exc:
            raise ConfigError(f"reward {self.name!r}: {exc}") from None

    @property
    def strategy(self):
        return build_once(self, "_strategy", self._build_strategy)

    def _build_strategy(self):
        cfg = self.config
        if cfg.mode == "rubric":
            from rewardsmith.judges.rubric import RubricJudge

            return RubricJudge(
                self.client, rubric=cfg.rubric, scale=cfg.scale, template=cfg.template or "rubric",
                use_logprobs=cfg.use_logprobs,
            )  # fmt: skip
        from rewardsmith.judges.pairwise import PairwiseJudge

        return PairwiseJudge(
            self.client, template=cfg.template, use_logprobs=cfg.use_logprobs, chain_of_thought=cfg.chain_of_thought
        )

    async def ascore_batch(self, completions: list[str | None], rows: list[dict[str, Any]]) -> list[RewardResult]:
        return list(await asyncio.gather(*(self._ascore_one(c, r) for c, r in zip(completions, rows, strict=True))))

    async def _ascore_one(self, completion: str | None, row: dict[str, Any]) -> RewardResult:
        if completion is None:
            return RewardResult.unscorable("completion is not text")
        if (overlong := too_long_for_judge(completion, self.config.max_completion_chars)) is not None:
            return overlong
        prompt = prompt_text(row.get("prompt")) or ""
        try:
            return await asyncio.wait_for(self._judge(prompt, completion, row), timeout=self.config.sample_timeout)
        except asyncio.TimeoutError:
            return RewardResult.unscorable(f"judge timed out after {self.config.sample_timeout:g}s")
        except Exception as exc:  # a judge bug costs one sample, never the training step
            return RewardResult.unscorable(f"judge failed: {type(exc).__name__}: {exc}")

    async def _judge(self, prompt: str, completion: str, row: dict[str, Any]) -> RewardResult:
        cfg = self.config
        if cfg.mode == "rubric":
            verdict = await self.strategy.ascore(prompt, completion)
            if verdict.normalized is None:
                return RewardResult.unscorable(f"judge abstained: {verdict.reason}", judge_raw=verdict.raw)
            return RewardResult(
                score=verdict.normalized,
                reason=f"rubric {verdict.score:.2f}/{cfg.scale} ({verdict.source})",
                judge_raw=verdict.raw,
            )
        # A reference is a response: a conversational one is read like a completion (its assistant turns).
        reference = completion_text(row.get(cfg.reference_column))
        if not reference:
            return RewardResult.unscorable(f"no reference response in column {cfg.reference_column!r}")
        verdict = await self.strategy.ajudge(prompt, completion, reference, question=cfg.question)
        if verdict.prob_a is None:
            return RewardResult.unscorable(f"judge abstained: {verdict.reason}", flipped=verdict.flipped)
        return RewardResult(
            score=verdict.prob_a,
            reason=f"P(better than reference)={verdict.prob_a:.3f}; {verdict.reason}",
            flipped=verdict.flipped,
        )
