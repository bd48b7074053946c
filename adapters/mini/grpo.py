"""Mini GRPO: group-relative policy optimisation with rewardsmith rewards, in plain PyTorch.

One round: take ``batch_size`` prompts, sample ``num_generations`` completions each, score them with the
reward terms (``r = sum_k w_k r_k`` over the terms that scored; all-unscorable samples get advantage 0),
normalise within each prompt's group (or, with ``advantage: rloo``, subtract the mean of the group's other
samples: ``A_i = r_i - mean_{j != i} r_j``), then run ``num_iterations`` clipped policy-gradient steps on the batch.
With ``reward_aggregation: normalize_then_sum`` (GDPO) each term is normalised within its group first, the weighted
normalised terms are summed and the sum is whitened over the batch (:func:`decoupled_advantages`)::

    A_i      = (r_i - mean_group(r)) / (std_group(r) + 1e-4)        # scale_rewards="group" ("none": no division)
    rho_it   = exp(log pi(y_it) - log pi_old(y_it))
    l_it     = -min(rho_it * A_i, clip(rho_it, 1 - eps_low, 1 + eps_high) * A_i) + beta * k3_it
    k3_it    = exp(log ref - log pi) - (log ref - log pi) - 1     # only when beta > 0 (frozen reference)
                                                                   # times rho_it by default (unbiased off-policy)

and aggregate ``l_it`` per ``loss_aggregation``: ``sequence_mean`` (mean over tokens, then sequences: the GRPO
paper), ``token_mean`` (over all tokens of the batch: DAPO), ``dr_grpo`` (sum / (sequences * max length)).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import torch
from pydantic import Field

from rewardsmith.adapters.mini.batching import BatchFeed, Encoded
from rewardsmith.adapters.mini.checkpoints import Checkpointer
from rewardsmith.adapters.mini.loop import make_optimizer, optimizer_step
from rewardsmith.adapters.mini.metrics_log import MetricsLog
from rewardsmith.adapters.mini.models import load_policy, save_model
from rewardsmith.adapters.mini.rollout import (  # noqa: F401  (RewardTerms, sample_tokens: part of this API)
    OnlineConfig,
    RewardTerms,
    combine_rewards,
    completion_logps,
    generate_rollout,
    online_terms,
    reward_metrics,
    sample_tokens,
    score_rollout,
)
from rewardsmith.adapters.spec import RewardSpec
from rewardsmith.reward import Reward

Aggregation = Literal["sequence_mean", "token_mean", "dr_grpo"]


# -- pure pieces (unit-tested against hand-computed values and TRL) -----------------------------------
def group_advantages(
    rewards: torch.Tensor, num_generations: int, scale: Literal["group", "batch", "none"] = "group", eps: float = 1e-4
) -> torch.Tensor:
    """Group-normalised advantages of ``rewards`` (N,) laid out as consecutive groups; NaN rewards get 0.

    Mean and (unbiased) standard deviation ignore NaN entries, so an unscorable sample neither moves its
    group's baseline nor receives a spurious advantage.
    """
    groups = rewards.view(-1, num_generations)
    mean = torch.nanmean(groups, dim=1, keepdim=True)
    advantages = groups - mean
    if scale == "group":
        advantages = advantages / (_nanstd(groups, dim=1, keepdim=True) + eps)
    elif scale == "batch":
        advantages = advantages / (_nanstd(rewards.view(1, -1), dim=1, keepdim=True) + eps)
    advantages = advantages.reshape(-1)
    return torch.nan_to_num(advantages, nan=0.0)


def rloo_advantages(rewards: torch.Tensor, num_generations: int) -> torch.Tensor:
    """Leave-one-out advantages (RLOO): ``A_i = r_i - mean_{j != i} r_j`` within each group; NaN rewards get 0.

    The baseline of a sample is the mean of the *other* scored samples of its group, so it is unbiased (it does not
    depend on the sample's own reward), and there is no division by the group's std (RLOO, Ahmadian et al. 2024).
    A sample whose group has no other scored sample gets advantage 0.
    """
    groups = rewards.view(-1, num_generations)
    scored = ~torch.isnan(groups)
    values = torch.nan_to_num(groups, nan=0.0)
    others = scored.sum(dim=1, keepdim=True) - scored.long()
    baseline = (values.sum(dim=1, keepdim=True) - values) / others.clamp(min=1)
    advantages = torch.where(scored & (others > 0), groups - baseline, torch.zeros_like(groups))
    return advantages.reshape(-1)


def decoupled_advantages(
    per_term: torch.Tensor,
    weights: Sequence[float],
    num_generations: int,
    advantage: Literal["grpo", "rloo"] = "grpo",
    scale: Literal["group", "batch", "none"] = "group",
    eps: float = 1e-4,
) -> torch.Tensor:
    """GDPO's ``normalize_then_sum``: each term normalised within its group, weighted, summed, then whitened.

    ``per_term`` is ``(N, K)``. Per term ``k``: ``grpo`` gives :func:`group_advantages` (scaled per ``scale``),
    ``rloo`` gives :func:`rloo_advantages` divided by the term's group std (so a term's spread no longer sets its
    share of the sum, which is the point). Then ``S = sum_k w_k A_k`` and ``A = (S - mean S) / (std S + eps)`` over
    the batch's scored samples, as TRL and verl's ``gdpo`` estimator do. An unscorable term (NaN) adds nothing to
    its sample's sum; a sample with every term unscorable gets advantage 0.
    """
    columns = []
    for k in range(per_term.size(1)):
        rewards = per_term[:, k]
        if advantage == "rloo":
            spread = _nanstd(rewards.view(-1, num_generations), dim=1, keepdim=True)
            column = (rloo_advantages(rewards, num_generations).view(-1, num_generations) / (spread + eps)).reshape(-1)
        else:
            column = group_advantages(rewards, num_generations, scale, eps)
        columns.append(torch.nan_to_num(column, nan=0.0))
    w = torch.as_tensor(list(weights), dtype=per_term.dtype, device=per_term.device)
    total = (torch.stack(columns, dim=1) * w).sum(dim=1)
    scored = ~torch.isnan(per_term).all(dim=1)
    if not scored.any():
        return torch.zeros_like(total)
    mean = total[scored].mean()
    std = total[scored].std() if scored.sum() > 1 else torch.zeros_like(mean)
    return torch.where(scored, (total - mean) / (std + eps), torch.zeros_like(total))


def _nanstd(x: torch.Tensor, dim: int, keepdim: bool) -> torch.Tensor:
    count = (~torch.isnan(x)).sum(dim=dim, keepdim=True)
    mean = torch.nanmean(x, dim=dim, keepdim=True)
    var = torch.nansum((x - mean) ** 2, dim=dim, keepdim=True) / (count - 1).clamp(min=1)
    std = var.sqrt()
    return std if keepdim else std.squeeze(dim)


def grpo_loss(
    logps: torch.Tensor,
    old_logps: torch.Tensor,
    advantages: torch.Tensor,
    mask: torch.Tensor,
    *,
    epsilon_low: float = 0.2,
    epsilon_high: float = 0.2,
    beta: float = 0.0,
    ref_logps: torch.Tensor | None = None,
    aggregation: Aggregation = "sequence_mean",
    max_completion_length: int | None = None,
    kl_importance_correction: bool = True,
) -> tuple[torch.Tensor, dict[str, float]]:
    """The clipped surrogate (plus ``beta`` * k3 KL) over per-token log-probs ``(B, T)``; returns loss and stats."""
    ratio = torch.exp(logps - old_logps)
    clipped = torch.clamp(ratio, 1 - epsilon_low, 1 + epsilon_high)
    adv = advantages.unsqueeze(1)
    per_token = -torch.min(ratio * adv, clipped * adv)
    stats: dict[str, float] = {}
    if beta != 0.0:
        if ref_logps is None:
            raise ValueError("beta > 0 needs ref_logps")
        delta = ref_logps - logps
        kl = torch.exp(delta) - delta - 1
        stats["kl"] = float(((kl * mask).sum() / mask.sum().clamp(min=1.0)).detach())
        if kl_importance_correction:  # k3 * rho: unbiased reverse-KL gradient off-policy (TRL's default)
            kl = kl * ratio
        per_token = per_token + beta * kl
    if aggregation == "sequence_mean":
        loss = ((per_token * mask).sum(-1) / mask.sum(-1).clamp(min=1.0)).mean()
    elif aggregation == "token_mean":
        loss = (per_token * mask).sum() / mask.sum().clamp(min=1.0)
    elif aggregation == "dr_grpo":
        length = max_completion_length or mask.size(1)
        loss = (per_token * mask).sum() / (mask.size(0) * length)
    else:
        raise ValueError(f"unknown loss aggregation {aggregation!r}")
    is_clipped = ((ratio < 1 - epsilon_low) & (adv < 0)) | ((ratio > 1 + epsilon_high) & (adv > 0))
    stats["clip_ratio"] = float(((is_clipped.float() * mask).sum() / mask.sum().clamp(min=1.0)).detach())
    return loss, stats


# -- config --------------------------------------------------------------------------------------------
class MiniGRPOConfig(OnlineConfig):
    """Mini GRPO options (plus everything in :class:`OnlineConfig`; ``batch_size`` counts prompts)."""

    num_generations: int = Field(4, ge=2, description="completions per prompt (the group)")
    beta: float = Field(0.0, ge=0, description="KL coefficient to the frozen reference (0: no reference model)")
    epsilon: float = Field(0.2, gt=0, description="lower clip range")
    epsilon_high: float | None = Field(None, gt=0, description="upper clip range (DAPO clip-higher); default epsilon")
    advantage: Literal["grpo", "rloo"] = Field(
        "grpo", description="grpo: group mean baseline (scaled per scale_rewards); rloo: leave-one-out mean, no scaling"
    )
    scale_rewards: Literal["group", "batch", "none"] = Field("group", description="divide advantages by the std")
    reward_aggregation: Literal["sum_then_normalize", "normalize_then_sum"] = Field(
        "sum_then_normalize",
        description="sum the weighted terms, then normalise (GRPO); or normalise each term in its group, sum, whiten "
        "(GDPO, TRL's multi_objective_aggregation)",
    )
    loss_aggregation: Aggregation = "sequence_mean"
    num_iterations: int = Field(1, ge=1, description="optimizer steps per generation round (mu)")
    kl_importance_correction: bool = Field(True, description="weight the k3 KL by the importance ratio")


def round_advantages(
    config: MiniGRPOConfig, per_term: torch.Tensor, rewards: torch.Tensor, weights: Sequence[float]
) -> torch.Tensor:
    """A round's advantages per the config: ``advantage`` (grpo/rloo) under ``reward_aggregation``."""
    if config.reward_aggregation == "normalize_then_sum":
        return decoupled_advantages(per_term, weights, config.num_generations, config.advantage, config.scale_rewards)
    if config.advantage == "rloo":
        return rloo_advantages(rewards, config.num_generations)
    return group_advantages(rewards, config.num_generations, config.scale_rewards)


# -- the trainer ---------------------------------------------------------------------------------------
class MiniGRPOTrainer:
    """GRPO on a causal LM; ``train()`` returns the per-step metrics (also written to ``log_file``)."""

    def __init__(
        self,
        config: MiniGRPOConfig | Mapping[str, Any],
        rows: Sequence[Mapping[str, Any]],
        rewards: Reward | RewardSpec | Sequence[Reward | tuple[Reward, float]] | None = None,
        model: Any = None,
        tokenizer: Any = None,
        monitor: Any = None,
    ) -> None:
        self.monitor = monitor  # a rewardsmith.monitor.HackMonitor: shadow checks of every round
        self.config = config if isinstance(config, MiniGRPOConfig) else MiniGRPOConfig.model_validate(dict(config))
        self.terms = online_terms(self.config, rows, rewards, "GRPO")
        if self.config.reward_aggregation == "normalize_then_sum" and len(self.terms.rewards) < 2:
            raise ValueError(
                f"reward_aggregation: normalize_then_sum normalises each reward term, and there is one "
                f"({self.terms.names[0]}): list the parts of a weighted sum as terms of the spec, or use "
                "sum_then_normalize"
            )
        self.rows = list(rows)
        self.device, self.model, self.tokenizer, self.reference = load_policy(
            self.config, model, tokenizer, reference=self.config.beta > 0
        )
        self.optimizer = make_optimizer(self.config, self.model)

    # one generation round -------------------------------------------------------------------------
    def generate(self, batch_rows: list[Mapping[str, Any]]) -> tuple[Encoded, torch.Tensor, list[str]]:
        """Sample the group for each prompt; returns the sequences, the completion mask and the texts."""
        cfg = self.config
        return generate_rollout(self.model, self.tokenizer, batch_rows, cfg.sampling(), self.device)

    def score(self, batch_rows: list[Mapping[str, Any]], completions: list[str]) -> torch.Tensor:
        """``(N, K)`` reward table for the completions (rows repeated per generation, TRL-style columns)."""
        return score_rollout(self.terms, batch_rows, completions, self.config.num_generations)

    def new_round(self, batch_rows: list[Mapping[str, Any]]) -> Round:
        """Generate, score and baseline one batch of prompts: everything its ``num_iterations`` steps reuse."""
        cfg = self.config
        batch, mask, completions = self.generate(batch_rows)
        per_term = self.score(batch_rows, completions)
        rewards = combine_rewards(per_term, self.terms.weights)
        advantages = round_advantages(cfg, per_term, rewards, self.terms.weights).to(self.device)
        mask = mask.to(torch.float32)
        width = mask.size(1)
        with torch.no_grad():
            old = completion_logps(self.model, batch, width) if cfg.num_iterations > 1 else None
            ref = completion_logps(self.reference, batch, width) if self.reference is not None else None
        metrics = reward_metrics(rewards, per_term, self.terms.names, mask)
        if self.monitor is not None:
            from rewardsmith.monitor.mini import observe_round

            metrics.update(observe_round(self.monitor, batch_rows, completions, rewards, cfg.num_generations))
        return Round(batch, mask, advantages, old, ref, metrics)

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
            current = Round.from_state(resumed.extra, self.device) if resumed.extra else None
        log = MetricsLog(cfg.log_file, cfg.max_steps, "mini GRPO", cfg.progress, resumed)
        eps_high = cfg.epsilon_high if cfg.epsilon_high is not None else cfg.epsilon
        try:
            while step < cfg.max_steps:
                if current is None:
                    current = self.new_round(next(feed))
                logps = completion_logps(self.model, current.batch, current.mask.size(1))
                loss, stats = grpo_loss(
                    logps,
                    current.old if current.old is not None else logps.detach(),
                    current.advantages,
                    current.mask,
                    epsilon_low=cfg.epsilon,
                    epsilon_high=eps_high,
                    beta=cfg.beta,
                    ref_logps=current.ref,
                    aggregation=cfg.loss_aggregation,
                    max_completion_length=cfg.max_completion_length,
                    kl_importance_correction=cfg.kl_importance_correction,
                )
                loss.backward()
                grad_norm = optimizer_step(self.model, self.optimizer, cfg)
                step += 1
                current.iterations += 1
                log.log(step, {"loss": float(loss.detach()), "grad_norm": grad_norm, **stats, **current.metrics})
                if current.iterations >= cfg.num_iterations:
                    current = None
                if checkpoints.due(step):
                    checkpoints.save(step, feed, log, current.state() if current is not None else None)
                if self.monitor is not None and self.monitor.alarmed and self.monitor.config.stop_on_alarm:
                    break
        finally:
            log.close()
        save_model(self.model, self.tokenizer, cfg.output_dir)
        return log.history


@dataclass
class Round:
    """One generation round: sequences, completion mask, advantages, old/reference log-probs, reward metrics.

    With ``num_iterations > 1`` a checkpoint can fall inside a round; its state is saved so the remaining
    iterations reuse the same generations after a resume.
    """

    batch: Encoded
    mask: torch.Tensor
    advantages: torch.Tensor
    old: torch.Tensor | None
    ref: torch.Tensor | None
    metrics: dict[str, float]
    iterations: int = 0

    def state(self) -> dict[str, Any]:
        tensors = {"mask": self.mask, "advantages": self.advantages, "old": self.old, "ref": self.ref}
        return {
            **{k: v.cpu() for k, v in self.batch},
            **{k: None if v is None else v.cpu() for k, v in tensors.items()},
            "metrics": dict(self.metrics),
            "iterations": self.iterations,
        }

    @classmethod
    def from_state(cls, state: Mapping[str, Any], device: torch.device) -> Round:
        def move_optional(value: torch.Tensor | None) -> torch.Tensor | None:
            return None if value is None else value.to(device)

        batch = Encoded(**{k: state[k] for k in ("input_ids", "attention_mask", "completion_mask")}).to(device)
        return cls(
            batch,
            state["mask"].to(device),
            state["advantages"].to(device),
            move_optional(state["old"]),
            move_optional(state["ref"]),
            dict(state["metrics"]),
            int(state["iterations"]),
        )


def train_grpo(
    config: MiniGRPOConfig | Mapping[str, Any],
    rows: Sequence[Mapping[str, Any]],
    rewards: Reward | RewardSpec | Sequence[Reward | tuple[Reward, float]] | None = None,
) -> list[dict[str, float]]:
    """Build a :class:`MiniGRPOTrainer` and train; returns the per-step metrics."""
    return MiniGRPOTrainer(config, rows, rewards).train()
