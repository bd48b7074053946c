"""Mini PPO: the starting point of the family (policy, frozen reference, reward, critic), in plain PyTorch.

One round: take ``batch_size`` prompts, sample ``num_generations`` completions each, score each completion with
the reward terms (any rewardsmith reward spec, ``reward_model`` included), then run ``ppo_epochs`` passes of
``num_mini_batches`` clipped updates of policy and critic on the round (RLHF-style PPO, Ouyang et al. 2022)::

    r_t      = -kl_coef * (log pi_old(y_t) - log ref(y_t))  (+ score on the last completion token)
    delta_t  = r_t + gamma * V(s_{t+1}) - V(s_t)             (V = 0 past the last token)
    A_t      = sum_l (gamma * lam)^l delta_{t+l}             (GAE), R_t = A_t + V(s_t)
    A        <- (A - mean(A)) / std(A)                        (whiten_advantages, over the round's tokens)
    pg       = mean_t max(-A_t rho_t, -A_t clip(rho_t, 1 - eps, 1 + eps)),  rho_t = pi / pi_old
    vf       = 0.5 * mean_t max((V_t - R_t)^2, (clip(V_t, V_old - eps_v, V_old + eps_v) - R_t)^2)
    loss     = pg + vf_coef * vf

The critic is a value head on the policy's trunk (``critic: value_head``, the classic shared-body design) or a
separate model with its own head (``critic: separate``, ``critic_model`` a model directory or ``tiny``). An
unscorable completion (every reward term ``None``) is left out of both losses for the round.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import torch
from pydantic import Field, model_validator

from rewardsmith.adapters.mini.batching import BatchFeed, Encoded
from rewardsmith.adapters.mini.checkpoints import Checkpointer
from rewardsmith.adapters.mini.logprobs import next_token_logps
from rewardsmith.adapters.mini.loop import make_optimizer, optimizer_step
from rewardsmith.adapters.mini.metrics_log import MetricsLog
from rewardsmith.adapters.mini.models import load_model_and_tokenizer, load_policy, save_model
from rewardsmith.adapters.mini.rollout import (
    OnlineConfig,
    combine_rewards,
    completion_logps,
    generate_rollout,
    online_terms,
    reward_metrics,
    score_rollout,
)
from rewardsmith.adapters.spec import RewardSpec
from rewardsmith.reward import Reward

CRITIC_FILE = "critic.pt"


# -- pure pieces (unit-tested against hand-computed values) ------------------------------------------
def masked_mean(values: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    return (values * mask).sum() / mask.sum().clamp(min=1.0)


def masked_whiten(values: torch.Tensor, mask: torch.Tensor, shift_mean: bool = True) -> torch.Tensor:
    """``(x - mean) / sqrt(var + 1e-8)`` over the masked entries (unbiased variance); the mean is added back
    when ``shift_mean`` is false (whitening rewards keeps their sign)."""
    mean = masked_mean(values, mask)
    count = mask.sum()
    var = (((values - mean) ** 2) * mask).sum() / (count - 1).clamp(min=1.0)
    whitened = (values - mean) * torch.rsqrt(var + 1e-8)
    return whitened if shift_mean else whitened + mean


def per_token_rewards(
    scores: torch.Tensor, logps: torch.Tensor, ref_logps: torch.Tensor | None, mask: torch.Tensor, kl_coef: float
) -> torch.Tensor:
    """``-kl_coef * (log pi - log ref)`` per completion token, plus each sequence's score on its last token."""
    rewards = torch.zeros_like(logps)
    if ref_logps is not None and kl_coef:
        rewards = -kl_coef * (logps - ref_logps)
    last = (mask.sum(-1).long() - 1).clamp(min=0)
    rewards = rewards.clone()
    rewards[torch.arange(rewards.size(0)), last] += scores
    return rewards * mask


def generalized_advantages(
    rewards: torch.Tensor, values: torch.Tensor, mask: torch.Tensor, gamma: float, lam: float
) -> tuple[torch.Tensor, torch.Tensor]:
    """GAE over per-token ``rewards`` and ``values`` ``(B, T)``; returns ``(advantages, returns)``, masked.

    Completion masks are contiguous from the first token, so ``mask[:, t + 1] == 0`` marks ``t`` as a
    sequence's last token: the next state's value and the carried advantage are cut there.
    """
    width = rewards.size(1)
    advantages = torch.zeros_like(rewards)
    carried = torch.zeros_like(rewards[:, 0])
    for t in reversed(range(width)):
        alive = mask[:, t + 1] if t + 1 < width else torch.zeros_like(mask[:, 0])
        next_value = values[:, t + 1] * alive if t + 1 < width else torch.zeros_like(carried)
        delta = rewards[:, t] + gamma * next_value - values[:, t]
        carried = delta + gamma * lam * carried * alive
        advantages[:, t] = carried
    advantages = advantages * mask
    return advantages, (advantages + values) * mask


def ppo_losses(
    logps: torch.Tensor,
    old_logps: torch.Tensor,
    values: torch.Tensor,
    old_values: torch.Tensor,
    advantages: torch.Tensor,
    returns: torch.Tensor,
    mask: torch.Tensor,
    *,
    cliprange: float = 0.2,
    cliprange_value: float = 0.2,
) -> tuple[torch.Tensor, torch.Tensor, dict[str, float]]:
    """The clipped policy loss and the clipped value loss over masked tokens; returns ``(pg, vf, stats)``."""
    ratio = torch.exp(logps - old_logps)
    pg_unclipped = -advantages * ratio
    pg_clipped = -advantages * torch.clamp(ratio, 1.0 - cliprange, 1.0 + cliprange)
    pg_loss = masked_mean(torch.max(pg_unclipped, pg_clipped), mask)
    values_clipped = old_values + torch.clamp(values - old_values, -cliprange_value, cliprange_value)
    vf_unclipped = (values - returns) ** 2
    vf_clipped = (values_clipped - returns) ** 2
    vf_loss = 0.5 * masked_mean(torch.max(vf_unclipped, vf_clipped), mask)
    stats = {
        "clip_ratio": float(masked_mean((pg_clipped > pg_unclipped).float(), mask).detach()),
        "value_clip_ratio": float(masked_mean((vf_clipped > vf_unclipped).float(), mask).detach()),
        "approx_kl": float(0.5 * masked_mean((logps - old_logps) ** 2, mask).detach()),
    }
    return pg_loss, vf_loss, stats


# -- the critic ----------------------------------------------------------------------------------------
class Critic(torch.nn.Module):
    """``V(s_t)`` for every completion position: a scalar head over a causal LM trunk's last hidden states.

    With ``critic: value_head`` the trunk is the policy itself (one body, two heads, one forward pass); with
    ``critic: separate`` it is a model of its own.
    """

    def __init__(self, trunk: torch.nn.Module | None, hidden_size: int) -> None:
        super().__init__()
        self.trunk = trunk
        self.head = torch.nn.Linear(hidden_size, 1)
        torch.nn.init.normal_(self.head.weight, std=1.0 / math.sqrt(hidden_size + 1))
        torch.nn.init.zeros_(self.head.bias)

    def values(self, hidden: torch.Tensor, completion_width: int) -> torch.Tensor:
        """Values ``(B, C)`` read at the positions whose logits predict the completion tokens."""
        return self.head(hidden[:, -(completion_width + 1) : -1].float()).squeeze(-1)


def forward_with_values(
    policy: torch.nn.Module, critic: Critic, batch: Encoded, width: int
) -> tuple[torch.Tensor, torch.Tensor]:
    """Completion log-probs under the policy and the critic's values, ``(B, C)`` each."""
    positions = (batch.attention_mask.cumsum(-1) - 1).clamp(min=0)
    inputs = {"input_ids": batch.input_ids, "attention_mask": batch.attention_mask, "position_ids": positions}
    if critic.trunk is None:  # shared body: one forward gives both heads
        out = policy(**inputs, use_cache=False, output_hidden_states=True, logits_to_keep=width + 1)
        logps = next_token_logps(out.logits, batch.input_ids[:, -width:])
        return logps, critic.values(out.hidden_states[-1], width)
    logps = completion_logps(policy, batch, width)
    out = critic.trunk(**inputs, use_cache=False, output_hidden_states=True, logits_to_keep=1)
    return logps, critic.values(out.hidden_states[-1], width)


# -- config --------------------------------------------------------------------------------------------
class MiniPPOConfig(OnlineConfig):
    """Mini PPO options (plus everything in :class:`OnlineConfig`; ``batch_size`` counts prompts; the reward may be
    ``[reward_model]`` with a trained model)."""

    num_generations: int = Field(1, ge=1, description="completions per prompt")
    kl_coef: float = Field(0.05, ge=0, description="per-token KL penalty to the frozen reference (0: no reference)")
    gamma: float = Field(1.0, ge=0, le=1, description="discount")
    lam: float = Field(0.95, ge=0, le=1, description="GAE lambda")
    cliprange: float = Field(0.2, gt=0, description="policy ratio clip")
    cliprange_value: float = Field(0.2, gt=0, description="value clip around the rollout's values")
    vf_coef: float = Field(0.1, ge=0, description="weight of the value loss")
    ppo_epochs: int = Field(4, ge=1, description="passes over each rollout batch")
    num_mini_batches: int = Field(1, ge=1, description="updates per pass (the round split into this many parts)")
    whiten_advantages: bool = True
    whiten_rewards: bool = False
    critic: Literal["value_head", "separate"] = Field("value_head", description="value head on the policy trunk")
    critic_model: str | None = Field(None, description="critic: separate: its model directory or 'tiny'")

    @model_validator(mode="after")
    def _critic(self) -> MiniPPOConfig:
        if self.critic_model is not None and self.critic != "separate":
            raise ValueError("critic_model is for critic: separate")
        if self.num_mini_batches > self.batch_size * self.num_generations:
            raise ValueError("num_mini_batches exceeds the completions per round (batch_size * num_generations)")
        return self


# -- the trainer ---------------------------------------------------------------------------------------
@dataclass
class PPORound:
    """One rollout and everything its ``ppo_epochs * num_mini_batches`` updates reuse (saved mid-round)."""

    batch: Encoded
    mask: torch.Tensor
    old_logps: torch.Tensor
    old_values: torch.Tensor
    advantages: torch.Tensor
    returns: torch.Tensor
    order: torch.Tensor  # (updates, N) sample order; update u uses its mini-batch slice
    metrics: dict[str, float]
    iterations: int = 0

    TENSORS = ("mask", "old_logps", "old_values", "advantages", "returns", "order")

    def minibatch(self, update: int, num_mini_batches: int) -> torch.Tensor:
        epoch, part = divmod(update, num_mini_batches)
        return torch.tensor_split(self.order[epoch], num_mini_batches)[part]

    def state(self) -> dict[str, Any]:
        return {
            **{k: v.cpu() for k, v in self.batch},
            **{k: getattr(self, k).cpu() for k in self.TENSORS},
            "metrics": dict(self.metrics),
            "iterations": self.iterations,
        }

    @classmethod
    def from_state(cls, state: Mapping[str, Any], device: torch.device) -> PPORound:
        batch = Encoded(**{k: state[k] for k in ("input_ids", "attention_mask", "completion_mask")}).to(device)
        tensors = {k: state[k].to(device) for k in cls.TENSORS}
        return cls(batch=batch, metrics=dict(state["metrics"]), iterations=int(state["iterations"]), **tensors)


def _rows_of(batch: Encoded, index: torch.Tensor) -> Encoded:
    return Encoded(**{k: v[index] for k, v in batch})


class MiniPPOTrainer:
    """PPO on a causal LM with a critic; ``train()`` returns the per-step metrics (also written to ``log_file``)."""

    def __init__(
        self,
        config: MiniPPOConfig | Mapping[str, Any],
        rows: Sequence[Mapping[str, Any]],
        rewards: Reward | RewardSpec | Sequence[Reward | tuple[Reward, float]] | None = None,
        model: Any = None,
        tokenizer: Any = None,
    ) -> None:
        self.config = config if isinstance(config, MiniPPOConfig) else MiniPPOConfig.model_validate(dict(config))
        self.terms = online_terms(self.config, rows, rewards, "PPO")
        self.rows = list(rows)
        cfg = self.config
        self.device, self.model, self.tokenizer, self.reference = load_policy(
            cfg, model, tokenizer, reference=cfg.kl_coef > 0
        )
        trunk = None
        if cfg.critic == "separate":
            trunk, _ = load_model_and_tokenizer(cfg.critic_model or cfg.model, self.device, cfg.dtype)
        hidden = (trunk or self.model).config.hidden_size
        self.critic = Critic(trunk, hidden).to(self.device)
        self.optimizer = make_optimizer(cfg, self.model, self.critic)

    @property
    def models_in_memory(self) -> dict[str, int]:
        """Parameter count of each model the trainer holds (policy, reference, critic; the reward is outside)."""
        counts = {"policy": sum(p.numel() for p in self.model.parameters())}
        if self.reference is not None:
            counts["reference"] = sum(p.numel() for p in self.reference.parameters())
        counts["critic"] = sum(p.numel() for p in self.critic.parameters())
        return counts

    @torch.no_grad()
    def new_round(self, batch_rows: list[Mapping[str, Any]]) -> PPORound:
        """Roll out, score, and compute the round's old log-probs, values, per-token rewards and advantages."""
        cfg = self.config
        batch, mask, completions = generate_rollout(self.model, self.tokenizer, batch_rows, cfg.sampling(), self.device)
        per_term = score_rollout(self.terms, batch_rows, completions, cfg.num_generations)
        scores = combine_rewards(per_term, self.terms.weights).to(self.device)
        mask = mask.to(torch.float32) * (~torch.isnan(scores)).float().unsqueeze(1)
        width = mask.size(1)
        old_logps, old_values = forward_with_values(self.model, self.critic, batch, width)
        ref = completion_logps(self.reference, batch, width) if self.reference is not None else None
        token_rewards = per_token_rewards(torch.nan_to_num(scores), old_logps, ref, mask, cfg.kl_coef)
        if cfg.whiten_rewards:
            token_rewards = masked_whiten(token_rewards, mask, shift_mean=False) * mask
        old_values = old_values * mask
        advantages, returns = generalized_advantages(token_rewards, old_values, mask, cfg.gamma, cfg.lam)
        if cfg.whiten_advantages:
            advantages = masked_whiten(advantages, mask) * mask
        n = batch.input_ids.size(0)
        order = torch.stack([torch.randperm(n) for _ in range(cfg.ppo_epochs)]).to(self.device)
        metrics = reward_metrics(scores.cpu(), per_term, self.terms.names, mask.cpu())
        if ref is not None:
            metrics["kl"] = float(masked_mean(old_logps - ref, mask))
        metrics["value_mean"] = float(masked_mean(old_values, mask))
        return PPORound(batch, mask, old_logps, old_values, advantages, returns, order, metrics)

    def update(self, current: PPORound) -> tuple[torch.Tensor, dict[str, float]]:
        """One clipped update on the round's next mini-batch; returns the loss (backpropagated) and stats."""
        cfg = self.config
        index = current.minibatch(current.iterations, cfg.num_mini_batches)
        width = current.mask.size(1)
        logps, values = forward_with_values(self.model, self.critic, _rows_of(current.batch, index), width)
        pg, vf, stats = ppo_losses(
            logps,
            current.old_logps[index],
            values,
            current.old_values[index],
            current.advantages[index],
            current.returns[index],
            current.mask[index],
            cliprange=cfg.cliprange,
            cliprange_value=cfg.cliprange_value,
        )
        loss = pg + cfg.vf_coef * vf
        loss.backward()
        return loss, {"policy_loss": float(pg.detach()), "value_loss": float(vf.detach()), **stats}

    def train(self) -> list[dict[str, float]]:
        """Run to ``max_steps`` optimizer steps, checkpointing and resuming per the config."""
        cfg = self.config
        feed = BatchFeed(self.rows, cfg.batch_size, cfg.seed)
        checkpoints = Checkpointer(cfg, self.model, self.tokenizer, self.optimizer)
        resumed = checkpoints.start()
        step, current = 0, None
        if resumed is not None:
            feed.load_state_dict(resumed.feed)
            step = resumed.step
            extra = resumed.extra or {}
            self.critic.load_state_dict(extra["critic"])
            current = PPORound.from_state(extra["round"], self.device) if extra.get("round") else None
        log = MetricsLog(cfg.log_file, cfg.max_steps, "mini PPO", cfg.progress, resumed)
        updates_per_round = cfg.ppo_epochs * cfg.num_mini_batches
        both = _Joined(self.model, self.critic)
        try:
            while step < cfg.max_steps:
                if current is None:
                    current = self.new_round(next(feed))
                loss, stats = self.update(current)
                grad_norm = optimizer_step(both, self.optimizer, cfg)
                step += 1
                current.iterations += 1
                log.log(step, {"loss": float(loss.detach()), "grad_norm": grad_norm, **stats, **current.metrics})
                if current.iterations >= updates_per_round:
                    current = None
                if checkpoints.due(step):
                    extra = {"critic": self.critic.state_dict(), "round": current.state() if current else None}
                    checkpoints.save(step, feed, log, extra)
        finally:
            log.close()
        save_model(self.model, self.tokenizer, cfg.output_dir)
        if cfg.output_dir:
            torch.save(self.critic.state_dict(), Path(cfg.output_dir) / CRITIC_FILE)
        return log.history


class _Joined(torch.nn.Module):
    """Policy and critic seen as one module, so gradient clipping covers both (a shared trunk counted once)."""

    def __init__(self, policy: torch.nn.Module, critic: Critic) -> None:
        super().__init__()
        self.policy, self.critic = policy, critic


def train_ppo(
    config: MiniPPOConfig | Mapping[str, Any],
    rows: Sequence[Mapping[str, Any]],
    rewards: Reward | RewardSpec | Sequence[Reward | tuple[Reward, float]] | None = None,
) -> list[dict[str, float]]:
    """Build a :class:`MiniPPOTrainer` and train; returns the per-step metrics."""
    return MiniPPOTrainer(config, rows, rewards).train()
