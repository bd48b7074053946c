"""Mini KTO: learning from unpaired good/bad examples (Kahneman-Tversky Optimisation), in plain PyTorch.

Each row is ``{prompt, completion, label}`` (label true = desirable). With ``r = log pi(y|x) - log ref(y|x)``
and a batch-level KL estimate ``z`` (clamped at 0, no gradient)::

    desirable:    loss = w_d * (1 - sigmoid(beta * (r - z)))
    undesirable:  loss = w_u * (1 - sigmoid(beta * (z - r)))

``z`` is the mean log-ratio of *mismatched* pairs: completion ``i-1`` answered to prompt ``i`` (the KTO paper's
estimator, the same rotation TRL uses), so it measures drift without rewarding the matched answers.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import torch
from pydantic import Field

from rewardsmith.adapters.mini.batching import encode_pairs
from rewardsmith.adapters.mini.config import MiniConfig
from rewardsmith.adapters.mini.logprobs import sequence_logps
from rewardsmith.adapters.mini.loop import train_loop
from rewardsmith.adapters.mini.models import load_policy, save_model


def kto_loss(
    logps: torch.Tensor,
    ref_logps: torch.Tensor,
    labels: torch.Tensor,
    kl: torch.Tensor | float,
    beta: float,
    desirable_weight: float = 1.0,
    undesirable_weight: float = 1.0,
) -> torch.Tensor:
    """Per-example KTO loss (desirable examples first keep their positions; order follows ``labels``)."""
    ratio = logps - ref_logps
    kl = torch.as_tensor(kl, dtype=ratio.dtype, device=ratio.device)
    desirable = desirable_weight * (1 - torch.sigmoid(beta * (ratio - kl)))
    undesirable = undesirable_weight * (1 - torch.sigmoid(beta * (kl - ratio)))
    return torch.where(labels.bool(), desirable, undesirable)


def kl_estimate(mismatched_logps: torch.Tensor, mismatched_ref_logps: torch.Tensor) -> torch.Tensor:
    """KTO's reference point ``z = max(0, mean(log pi - log ref))`` over mismatched pairs, without gradient."""
    return (mismatched_logps - mismatched_ref_logps).mean().detach().clamp(min=0)


class MiniKTOConfig(MiniConfig):
    """Mini KTO options (plus everything in :class:`MiniConfig`)."""

    beta: float = Field(0.1, gt=0)
    desirable_weight: float = Field(1.0, gt=0)
    undesirable_weight: float = Field(1.0, gt=0)
    estimate_kl: bool = Field(True, description="false: z = 0 (cheaper; APO-zero-like)")


def _label(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, (int, float)) and value in (0, 1):
        return bool(value)
    raise ValueError(f"KTO label must be a boolean (or 0/1), got {value!r}")


def train_kto(
    config: MiniKTOConfig | Mapping[str, Any],
    rows: Sequence[Mapping[str, Any]],
    model: Any = None,
    tokenizer: Any = None,
) -> list[dict[str, float]]:
    """Train with KTO on ``{prompt, completion, label}`` rows; returns the per-step metrics."""
    config = config if isinstance(config, MiniKTOConfig) else MiniKTOConfig.model_validate(dict(config))
    for row in rows:  # a bad label fails before a model is loaded
        _label(row.get("label"))
    policy = load_policy(config, model, tokenizer, reference=True)
    device, model, tokenizer, reference = policy.device, policy.model, policy.tokenizer, policy.required_reference()

    def step_loss(batch_rows: list[Mapping[str, Any]]) -> tuple[torch.Tensor, dict[str, float]]:
        prompts = [r["prompt"] for r in batch_rows]
        completions = [r["completion"] for r in batch_rows]
        labels = torch.tensor([_label(r["label"]) for r in batch_rows], device=device)
        batch = encode_pairs(tokenizer, prompts, completions, config.max_length).to(device)
        logps = sequence_logps(model, batch)
        with torch.no_grad():
            ref_logps = sequence_logps(reference, batch)
            kl = torch.zeros((), device=device)
            if config.estimate_kl and len(batch_rows) > 1:
                shifted = completions[-1:] + completions[:-1]
                mismatched = encode_pairs(tokenizer, prompts, shifted, config.max_length).to(device)
                kl = kl_estimate(sequence_logps(model, mismatched), sequence_logps(reference, mismatched))
        losses = kto_loss(logps, ref_logps, labels, kl, config.beta, config.desirable_weight, config.undesirable_weight)
        rewards = config.beta * (logps - ref_logps).detach()
        metrics = {"kl": float(kl)}
        if labels.any():
            metrics["rewards/desirable"] = float(rewards[labels].mean())
        if (~labels).any():
            metrics["rewards/undesirable"] = float(rewards[~labels].mean())
        return losses.mean(), metrics

    history = train_loop(config, model, rows, step_loss, "mini KTO", tokenizer)
    save_model(model, tokenizer, config.output_dir)
    return history
