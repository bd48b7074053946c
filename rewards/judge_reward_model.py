"""``reward_model``: a trained reward model's scalar for each (prompt, completion), locally or over HTTP.

``model`` is a local directory holding an ``AutoModelForSequenceClassification`` with one output (what
``rewardsmith train rm`` and TRL's ``RewardTrainer`` write), scored in batches with the tokenizer's chat template, or
the URL of a reward server: OpenRLHF-style (``…/get_reward``; the dataset's ``label_column`` goes along as
``labels``) or vLLM's pooling API (``…/classify`` or ``…/pooling`` of ``vllm serve MODEL --runner pooling``; the
server renders each pair with the model's chat template). ``protocol`` names the format when the URL does not.
The score is the model's logit (``transform="sigmoid"`` maps it into (0, 1)). A model that cannot load
or run, or a server that fails after retries, makes the batch unscorable (``None`` with the reason), never 0.0.

>>> reward = get_reward("reward_model", {"model": "runs/rm/final"})  # doctest: +SKIP
>>> reward(["Paris.", "I do not know."], prompts=["Capital of France?"] * 2)  # doctest: +SKIP
[1.73, -0.41]
"""

from __future__ import annotations

import math
from typing import Any, Literal

from pydantic import Field

from rewardsmith.judges.base import JudgeError
from rewardsmith.registry import register_reward
from rewardsmith.reward import ConfigError, RewardConfig
from rewardsmith.rewards.judge_base import JudgeReward
from rewardsmith.types import RewardResult


class RewardModelConfig(RewardConfig):
    model: str = Field(
        description="local model directory, or an http(s):// reward server URL (OpenRLHF /get_reward, vLLM /classify "
        "or /pooling)"
    )
    protocol: Literal["auto", "openrlhf", "vllm-classify", "vllm-pooling"] = Field(
        "auto",
        description="remote: the server's wire format; auto: a URL ending in /classify or /pooling is vLLM, any "
        "other is OpenRLHF",
    )
    served_model: str | None = Field(
        None, description="remote vLLM: model name sent in requests (default: the server's)"
    )
    batch_size: int = Field(8, ge=1, description="local: pairs per forward pass")
    max_length: int = Field(1024, ge=8, description="local: tokens per pair (truncated from the left)")
    device: str = Field("cpu", description="local: torch device")
    use_chat_template: bool = Field(
        True, description="local and vLLM: render (prompt, completion) with the model's chat template"
    )
    label_column: str | None = Field(None, description="remote OpenRLHF: dataset column sent as 'labels'")
    timeout: float = Field(60.0, gt=0, description="remote: seconds per request")
    max_retries: int = Field(2, ge=0, description="remote: retries on connection errors, 429 and 5xx")
    transform: Literal["none", "sigmoid"] = Field("none", description="map the logit: none, or sigmoid into (0, 1)")
    cache_dir: str | None = Field(
        None, description="directory of the request cache (shared with the judges): a rerun asks the model nothing"
    )
    rpm: float | None = Field(None, gt=0, description="client-side limit on calls to the model per minute")


@register_reward("reward_model")
class RewardModelReward(JudgeReward[RewardModelConfig]):
    """A Bradley–Terry / sequence-classification reward model as a reward function.

    Its client is the reward model (:func:`~rewardsmith.judges.reward_model.make_reward_model`, built on first use)
    behind the cache, pacing and accounting a judge client has (``ManagedRewardModel``, in
    :mod:`rewardsmith.judges.clients.managed_reward_model`); its work blocks (a forward pass, a sync HTTP request),
    so it writes ``score_batch``.
    """

    name = "reward_model"
    Config = RewardModelConfig

    def __init__(self, config: Any = None, **overrides: Any) -> None:
        super().__init__(config, **overrides)
        from pathlib import Path

        remote = self.config.model.startswith(("http://", "https://"))
        if not remote and not Path(self.config.model).is_dir():
            raise ConfigError(f"reward {self.name!r}: {self.config.model!r} is neither a model directory nor a URL")
        if not remote and self.config.protocol != "auto":
            raise ConfigError(f"reward {self.name!r}: protocol {self.config.protocol!r} needs a server URL")

    def build_client(self) -> Any:
        from rewardsmith.judges.cache import RequestCache
        from rewardsmith.judges.clients.managed_reward_model import ManagedRewardModel
        from rewardsmith.judges.limits import RateLimiter
        from rewardsmith.judges.reward_model import make_reward_model

        cfg = self.config
        return ManagedRewardModel(
            make_reward_model(cfg.model, **cfg.model_dump()),
            cache=RequestCache(cfg.cache_dir) if cfg.cache_dir else None,
            limiter=RateLimiter(cfg.rpm),
        )

    def score_batch(self, completions: list[str | None], rows: list[dict[str, Any]]) -> list[RewardResult]:
        todo = [i for i, c in enumerate(completions) if c is not None]
        out = [RewardResult.unscorable("completion is not text") for _ in completions]
        if not todo:
            return out
        prompts = [_prompt(rows[i].get("prompt")) for i in todo]
        column = self.config.label_column
        labels = [rows[i].get(column) for i in todo] if column else None
        try:
            scores = self.client.score(prompts, [c for c in completions if c is not None], labels)  # todo's texts
        except JudgeError as exc:
            return [RewardResult.unscorable(str(exc)) if i in todo else out[i] for i in range(len(completions))]
        for i, raw in zip(todo, scores, strict=True):
            value = 1.0 / (1.0 + math.exp(-raw)) if self.config.transform == "sigmoid" and raw > -700 else raw
            if self.config.transform == "sigmoid" and raw <= -700:
                value = 0.0
            out[i] = RewardResult(score=value, reason=f"reward model {raw:.4f}", raw_reward=raw)
        return out


def _prompt(prompt: Any) -> Any:
    """A plain prompt as text; a conversational one as its messages (the chat template renders them)."""
    if isinstance(prompt, list) and all(isinstance(m, dict) for m in prompt):
        return prompt
    return "" if prompt is None else str(prompt)
