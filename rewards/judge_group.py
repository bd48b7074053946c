"""``llm_judge_group``: the G completions of one prompt judged together (listwise, RULER-style) as GRPO rewards.

GRPO turns rewards into advantages within each prompt's group, so a judge only has to order the group well.
This reward sends each group to :class:`~rewardsmith.judges.group.GroupJudge` in one request per presentation
(prompt once, all candidates), ``permutations`` presentations averaged against position bias, and gives each
completion ``score = mean over presentations of (judge score / scale)`` in [0, 1]. The reason names the group,
the per-presentation scores and their disagreement.

Groups come from (``group_by``):

- ``"column"``: rows with the same value in ``group_column`` (default ``group_id``) form a group;
- ``"num_generations"``: TRL's layout, the G generations of a prompt are adjacent in the batch: consecutive rows
  with the same prompt, cut every ``num_generations`` rows (set it to ``GRPOConfig.num_generations``);
- ``"prompt"``: all rows with an equal prompt (text or messages) form one group;
- ``"auto"`` (default): ``column`` when every row has ``group_column``, else ``num_generations`` when it is set,
  else ``prompt``.

A group whose judge abstained in every presentation, failed, or ran past ``group_timeout`` gives ``None`` to
each of its completions (never 0.0: a judge failure must not look like a bad group).

>>> reward = get_reward("llm_judge_group", {"num_generations": 4, "permutations": 2,
...                                         "client": {"backend": "embedded"}})  # doctest: +SKIP
>>> reward(["4", "5", "four", "22"] , prompts=["What is 2+2?"] * 4)  # doctest: +SKIP
[0.95, 0.1, 0.85, 0.05]
"""

from __future__ import annotations

import asyncio
import json
from typing import Any, Literal

from pydantic import Field

from rewardsmith.groups import BatchDependency
from rewardsmith.judges.clients.factory import JudgeClientConfig
from rewardsmith.registry import register_reward
from rewardsmith.reward import ConfigError, RewardConfig
from rewardsmith.rewards.judge_base import MAX_COMPLETION_CHARS, JudgeReward, too_long_for_judge
from rewardsmith.types import RewardResult, prompt_text


class GroupJudgeConfig(RewardConfig):
    client: JudgeClientConfig = Field(default_factory=JudgeClientConfig, description="judge backend (see make_client)")
    group_by: Literal["auto", "column", "num_generations", "prompt"] = Field("auto", description="how groups form")
    num_generations: int | None = Field(None, ge=1, description="TRL's GRPOConfig.num_generations (adjacent layout)")
    group_column: str = Field("group_id", description="dataset column naming each row's group")
    permutations: int = Field(2, ge=1, le=16, description="presentations per group (given order, reversed, shuffles)")
    scale: int = Field(10, ge=1, le=100, description="the judge scores 0..scale")
    question: str | None = Field(None, description="what makes a response better (default: correct, helpful, honest)")
    template: str = Field("group", description="prompt template name or path")
    max_tokens: int = Field(512, ge=16, description="answer budget per presentation")
    structured: bool = Field(True, description="send the answer's JSON Schema as response_format")
    group_timeout: float = Field(300.0, gt=0, description="seconds per group before its completions are unscorable")
    max_completion_chars: int = Field(
        MAX_COMPLETION_CHARS, gt=0, description="longer completions are not shown to the judge and score 0.0"
    )


@register_reward("llm_judge_group")
class LLMGroupJudge(JudgeReward[GroupJudgeConfig]):
    """The completions of one prompt scored side by side by an LLM judge; relative rewards in [0, 1]."""

    name = "llm_judge_group"
    Config = GroupJudgeConfig

    def __init__(self, config: Any = None, **overrides: Any) -> None:
        super().__init__(config, **overrides)
        from rewardsmith.judges.templates import TemplateError, check_template

        try:
            check_template(
                self.config.template, prompt="p", candidates=["a", "b"], scale=self.config.scale, question=None
            )
        except TemplateError as exc:
            raise ConfigError(f"reward {self.name!r}: {exc}") from None
        if self.config.group_by == "num_generations" and self.config.num_generations is None:
            raise ConfigError(f"reward {self.name!r}: group_by='num_generations' needs num_generations")

    @property
    def batch_dependency(self) -> BatchDependency:
        return "group"

    def groups(self, rows: list[dict[str, Any]]) -> list[list[int]]:
        cfg = self.config
        return assign_groups(rows, cfg.group_by, cfg.num_generations, cfg.group_column)

    def build_strategy(self) -> Any:
        from rewardsmith.judges.group import GroupJudge

        cfg = self.config
        return GroupJudge(
            self.client, template=cfg.template, permutations=cfg.permutations, scale=cfg.scale,
            max_tokens=cfg.max_tokens, question=cfg.question, structured=cfg.structured,
        )  # fmt: skip

    async def ascore_batch(self, completions: list[str | None], rows: list[dict[str, Any]]) -> list[RewardResult]:
        groups = self.groups(rows)
        out: list[RewardResult] = [RewardResult.unscorable("not grouped")] * len(completions)
        judge = self.strategy
        judged = await asyncio.gather(*(self._judge_group(judge, completions, rows, g) for g in groups))
        for number, (members, results) in enumerate(zip(groups, judged, strict=True)):
            for i, result in zip(members, results, strict=True):
                out[i] = result.model_copy(update={"reason": f"group {number} ({len(members)}): {result.reason}"})
        return out

    async def _judge_group(
        self, judge: Any, completions: list[str | None], rows: list[dict[str, Any]], members: list[int]
    ) -> list[RewardResult]:
        if any(completions[i] is None for i in members):
            return [RewardResult.unscorable("a completion of the group is not text") for _ in members]
        # a completion too long to show scores 0.0 and the rest of its group is judged without it
        overlong = {i: too_long_for_judge(str(completions[i]), self.config.max_completion_chars) for i in members}
        shown = [i for i in members if overlong[i] is None]
        if len(shown) < len(members):
            judged = iter(await self._judge_group(judge, completions, rows, shown) if shown else [])
            return [overlong[i] or next(judged) for i in members]
        prompt = prompt_text(rows[members[0]].get("prompt")) or ""
        verdict = await self.asked(
            judge.ajudge(prompt, [completions[i] for i in members]), self.config.group_timeout, "group judge"
        )
        if isinstance(verdict, RewardResult):  # a timeout or a failure costs the group, never the training step
            return [verdict] * len(members)
        if verdict.abstained:
            return [
                RewardResult.unscorable(f"judge abstained: {verdict.reason}", group_disagreement=None) for _ in members
            ]
        results = []
        for position, score in enumerate(verdict.scores):
            shown = [p.scores[position] for p in verdict.presentations if p.scores is not None]
            per = ", ".join(f"{s:.2f}" for s in shown)
            results.append(
                RewardResult(
                    score=score,
                    reason=f"score {score:.3f} (presentations {per}); {verdict.reason}",
                    group_disagreement=verdict.disagreement,
                    top_changed=verdict.top_changed,
                )
            )
        return results


def prompt_key(prompt: Any) -> str:
    """A comparable key for a plain or conversational prompt (messages compared as JSON)."""
    if isinstance(prompt, str):
        return prompt
    try:
        return json.dumps(prompt, sort_keys=True, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return repr(prompt)


def assign_groups(
    rows: list[dict[str, Any]], group_by: str, num_generations: int | None, group_column: str = "group_id"
) -> list[list[int]]:
    """Row indices per group, each group in batch order; groups ordered by their first row."""
    if group_by == "auto":
        if rows and all(group_column in row for row in rows):
            group_by = "column"
        elif num_generations is not None:
            group_by = "num_generations"
        else:
            group_by = "prompt"
    if group_by == "column":
        return _by_key(rows, lambda row: prompt_key(row.get(group_column)))
    if group_by == "prompt":
        return _by_key(rows, lambda row: prompt_key(row.get("prompt")))
    if num_generations is None:
        raise ValueError("group_by='num_generations' needs num_generations")
    groups: list[list[int]] = []
    previous: str | None = None
    for i, row in enumerate(rows):
        key = prompt_key(row.get("prompt"))
        if groups and key == previous and len(groups[-1]) < num_generations:
            groups[-1].append(i)
        else:
            groups.append([i])
        previous = key
    return groups


def _by_key(rows: list[dict[str, Any]], key: Any) -> list[list[int]]:
    groups: dict[str, list[int]] = {}
    for i, row in enumerate(rows):
        groups.setdefault(key(row), []).append(i)
    return list(groups.values())
