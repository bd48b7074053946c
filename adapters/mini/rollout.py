"""Rollouts the online mini trainers (GRPO, PPO) share: sample completions, score them, read their log-probs.

A rollout is ``[left-padded prompt | completion | pad]`` sequences with a completion mask that keeps the tokens up
to and including the first EOS. Scoring repeats each row's columns per generation and hands them to the reward
terms the way TRL does, so a rewardsmith reward sees the same keyword arguments here as in ``GRPOTrainer``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import torch
from pydantic import Field, field_validator

from rewardsmith.adapters.mini.batching import Encoded, render_prompt
from rewardsmith.adapters.mini.config import MiniConfig
from rewardsmith.adapters.mini.logprobs import next_token_logps
from rewardsmith.adapters.spec import RewardSpec, load_spec
from rewardsmith.reward import Reward


class OnlineConfig(MiniConfig):
    """Options of the trainers that sample their own completions (GRPO, PPO): the reward and how to sample."""

    rewards: Any = Field(None, description="reward spec (see adapters.spec); None: the task's default reward")
    num_generations: int = Field(4, ge=1, description="completions per prompt")
    max_prompt_length: int = Field(128, ge=1)
    max_completion_length: int = Field(32, ge=1)
    temperature: float = Field(1.0, gt=0)
    top_p: float = Field(1.0, gt=0, le=1)

    @field_validator("rewards")
    @classmethod
    def _spec(cls, value: Any) -> Any:
        return None if value is None else load_spec(value)

    def sampling(self) -> SamplingOptions:
        return SamplingOptions(
            self.num_generations, self.max_prompt_length, self.max_completion_length, self.temperature, self.top_p
        )


def online_terms(
    config: OnlineConfig,
    rows: Sequence[Mapping[str, Any]],
    rewards: Reward | RewardSpec | Sequence[Reward | tuple[Reward, float]] | None,
    trainer: str,
) -> RewardTerms:
    """The reward terms of an online run (given, else the config's), after checking the rows carry prompts."""
    rewards = rewards if rewards is not None else config.rewards
    if rewards is None:
        raise ValueError("no rewards: give `rewards` in the config or to the trainer")
    if not rows or any("prompt" not in r for r in rows):
        raise ValueError(f"{trainer} rows need a 'prompt' column")
    return RewardTerms(rewards)


class RewardTerms:
    """Reward callables with weights; scoring returns an ``(N, K)`` tensor (NaN = unscorable)."""

    def __init__(self, rewards: Reward | RewardSpec | Sequence[Reward | tuple[Reward, float]]) -> None:
        if isinstance(rewards, RewardSpec):
            self.rewards, self.weights = rewards.reward_funcs(), rewards.reward_weights()
        elif isinstance(rewards, Reward):
            self.rewards, self.weights = [rewards], [1.0]
        else:
            pairs = [(r, 1.0) if isinstance(r, Reward) else (r[0], float(r[1])) for r in rewards]
            self.rewards, self.weights = [p[0] for p in pairs], [p[1] for p in pairs]
        if not self.rewards:
            raise ValueError("an online trainer needs at least one reward")

    @property
    def names(self) -> list[str]:
        return [getattr(r, "__name__", type(r).__name__) for r in self.rewards]

    def score(self, completions: list[Any], columns: dict[str, list[Any]]) -> torch.Tensor:
        table = [
            [math.nan if s.score is None else s.score for s in r.details(completions, **columns)] for r in self.rewards
        ]
        return torch.tensor(table, dtype=torch.float32).T


def combine_rewards(per_term: torch.Tensor, weights: Sequence[float]) -> torch.Tensor:
    """``sum_k w_k r_k`` ignoring NaN (unscorable) terms; NaN where every term is NaN. ``per_term`` is (N, K)."""
    w = torch.as_tensor(list(weights), dtype=per_term.dtype, device=per_term.device)
    total = (per_term * w).nansum(dim=1)
    return torch.where(torch.isnan(per_term).all(dim=1), torch.full_like(total, math.nan), total)


def reward_metrics(
    rewards: torch.Tensor, per_term: torch.Tensor, names: list[str], mask: torch.Tensor
) -> dict[str, float]:
    """Mean/std of the combined reward over scored samples, the unscorable share, lengths, each term's mean."""
    scored = ~torch.isnan(rewards)
    metrics = {
        "reward": float(rewards[scored].mean()) if scored.any() else math.nan,
        "reward_std": float(rewards[scored].std()) if scored.sum() > 1 else 0.0,
        "unscorable": float((~scored).float().mean()),
        "completion_length": float(mask.sum(-1).mean()),
    }
    for k, name in enumerate(names):
        column = per_term[:, k]
        ok = ~torch.isnan(column)
        metrics[f"rewards/{name}"] = float(column[ok].mean()) if ok.any() else math.nan
    return metrics


def completion_logps(model: torch.nn.Module, batch: Encoded, completion_width: int) -> torch.Tensor:
    """Per-token log-probs of the last ``completion_width`` tokens ``(B, C)``; only their logits are computed.

    Positions come from the attention mask, so left-padded prompts see the positions generation saw.
    """
    positions = (batch.attention_mask.cumsum(-1) - 1).clamp(min=0)
    logits = model(
        input_ids=batch.input_ids,
        attention_mask=batch.attention_mask,
        position_ids=positions,
        use_cache=False,
        logits_to_keep=completion_width + 1,
    ).logits
    return next_token_logps(logits, batch.input_ids[:, -completion_width:])


@torch.no_grad()
def sample_tokens(
    model: torch.nn.Module,
    prompt_ids: torch.Tensor,
    prompt_mask: torch.Tensor,
    *,
    max_new_tokens: int,
    eos_token_id: int,
    pad_token_id: int,
    temperature: float = 1.0,
    top_p: float = 1.0,
) -> torch.Tensor:
    """Sample continuations of left-padded prompts with a KV cache; ``(B, <= max_new_tokens)`` token ids.

    A plain loop (forward the new token, sample from ``softmax(logits / temperature)``, optionally nucleus-
    filtered) instead of ``generate``: the mini trainer needs nothing else, and skipping ``generate``'s
    per-call and per-token machinery is most of a small model's generation time. After EOS a row emits pad.
    """
    positions = (prompt_mask.cumsum(-1) - 1).clamp(min=0)
    out = model(
        input_ids=prompt_ids, attention_mask=prompt_mask, position_ids=positions, use_cache=True, logits_to_keep=1
    )
    mask, last = prompt_mask, positions[:, -1:]
    done = torch.zeros(prompt_ids.size(0), dtype=torch.bool, device=prompt_ids.device)
    tokens = []
    for _ in range(max_new_tokens):
        logits = out.logits[:, -1].float() / temperature
        probs = torch.softmax(logits, dim=-1)
        if top_p < 1.0:
            sorted_probs, order = probs.sort(dim=-1, descending=True)
            outside = sorted_probs.cumsum(-1) - sorted_probs > top_p
            probs = probs.scatter(-1, order, sorted_probs.masked_fill(outside, 0.0))
        token = torch.multinomial(probs, 1).squeeze(1)
        token = torch.where(done, torch.full_like(token, pad_token_id), token)
        tokens.append(token)
        done = done | (token == eos_token_id)
        if bool(done.all()):
            break
        mask = torch.cat([mask, torch.ones_like(mask[:, :1])], dim=1)
        last = last + 1
        out = model(
            input_ids=token.unsqueeze(1), attention_mask=mask, position_ids=last, use_cache=True, **_cache_kwargs(out)
        )
    return torch.stack(tokens, dim=1)


def _cache_kwargs(output: Any) -> dict[str, Any]:
    # transformers 5.x names the KV cache `cache`; 4.x names it `past_key_values`.
    if getattr(output, "cache", None) is not None:
        return {"cache": output.cache}
    return {"past_key_values": output.past_key_values}


@dataclass(frozen=True)
class SamplingOptions:
    """How a rollout samples: completions per prompt, length budgets, temperature and nucleus."""

    num_generations: int
    max_prompt_length: int
    max_completion_length: int
    temperature: float = 1.0
    top_p: float = 1.0


@torch.no_grad()
def generate_rollout(
    model: Any, tokenizer: Any, rows: Sequence[Mapping[str, Any]], options: SamplingOptions, device: torch.device
) -> tuple[Encoded, torch.Tensor, list[str]]:
    """Sample ``num_generations`` completions per row; returns the sequences, the completion mask and the texts.

    Completions of one prompt are consecutive, so ``rewards.view(-1, num_generations)`` is the group layout.
    """
    tok = tokenizer
    texts = [render_prompt(tok, r["prompt"]) for r in rows]
    ids = [tok(t, add_special_tokens=False)["input_ids"][-options.max_prompt_length :] for t in texts]
    width = max(len(x) for x in ids)
    prompt_ids = torch.full((len(ids), width), tok.pad_token_id, dtype=torch.long)
    prompt_mask = torch.zeros_like(prompt_ids)
    for i, x in enumerate(ids):  # left padding for generation
        prompt_ids[i, width - len(x) :] = torch.tensor(x)
        prompt_mask[i, width - len(x) :] = 1
    prompt_ids = prompt_ids.repeat_interleave(options.num_generations, 0).to(device)
    prompt_mask = prompt_mask.repeat_interleave(options.num_generations, 0).to(device)
    model.eval()
    completion_ids = sample_tokens(
        model,
        prompt_ids,
        prompt_mask,
        max_new_tokens=options.max_completion_length,
        eos_token_id=tok.eos_token_id,
        pad_token_id=tok.pad_token_id,
        temperature=options.temperature,
        top_p=options.top_p,
    )
    model.train()  # the online trainers optimise right after sampling
    is_eos = completion_ids == tok.eos_token_id
    first_eos = torch.where(is_eos.any(1), is_eos.int().argmax(1), completion_ids.size(1))
    positions = torch.arange(completion_ids.size(1), device=completion_ids.device).unsqueeze(0)
    completion_mask = (positions <= first_eos.unsqueeze(1)).long()
    completion_ids = completion_ids.masked_fill(completion_mask == 0, tok.pad_token_id)
    completions = tok.batch_decode(completion_ids, skip_special_tokens=True)
    batch = Encoded(
        input_ids=torch.cat([prompt_ids, completion_ids], 1),
        attention_mask=torch.cat([prompt_mask, completion_mask], 1),
        completion_mask=torch.cat([torch.zeros_like(prompt_mask), completion_mask], 1),
    )
    return batch, completion_mask, completions


def score_rollout(
    terms: RewardTerms, rows: Sequence[Mapping[str, Any]], completions: list[str], num_generations: int
) -> torch.Tensor:
    """``(N, K)`` reward table for the completions (rows repeated per generation, TRL-style columns)."""
    repeated = [r for r in rows for _ in range(num_generations)]
    conversational = not isinstance(repeated[0]["prompt"], str)
    shaped = [[{"role": "assistant", "content": c}] for c in completions] if conversational else completions
    columns = {("prompts" if k == "prompt" else k): [r.get(k) for r in repeated] for k in repeated[0]}
    return terms.score(shaped, columns)
