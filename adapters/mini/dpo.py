"""Mini DPO and IPO: offline preference optimisation against a frozen reference, in plain PyTorch.

Both losses read the same four numbers per pair: the policy's and the reference's completion log-probs of
the chosen and the rejected answer. With ``h = (log pi(y_w) - log ref(y_w)) - (log pi(y_l) - log ref(y_l))``:

- DPO (sigmoid): ``-(1 - eps) * log sigmoid(beta * h) - eps * log sigmoid(-beta * h)`` (``eps`` = label smoothing).
- IPO: ``(h' - 1 / (2 * beta)) ** 2`` where ``h'`` uses per-token *averaged* log-ratios (as TRL does; the
  squared loss otherwise scales with completion length). ``length_normalize=False`` gives the paper's sums.

Rows are ``{prompt, chosen, rejected}`` in plain or conversational form; other columns are ignored.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

import torch
import torch.nn.functional as F
from pydantic import Field

from rewardsmith.adapters.mini.batching import Encoded, encode_pairs
from rewardsmith.adapters.mini.config import MiniConfig
from rewardsmith.adapters.mini.logprobs import per_token_logps
from rewardsmith.adapters.mini.loop import train_loop
from rewardsmith.adapters.mini.models import load_policy, save_model


def dpo_loss(
    chosen_logps: torch.Tensor,
    rejected_logps: torch.Tensor,
    ref_chosen_logps: torch.Tensor,
    ref_rejected_logps: torch.Tensor,
    beta: float,
    label_smoothing: float = 0.0,
) -> torch.Tensor:
    """Per-pair DPO loss ``-(1-eps) log s(beta h) - eps log s(-beta h)``; ``h`` is the log-ratio margin."""
    margin = (chosen_logps - ref_chosen_logps) - (rejected_logps - ref_rejected_logps)
    return -(1 - label_smoothing) * F.logsigmoid(beta * margin) - label_smoothing * F.logsigmoid(-beta * margin)


def ipo_loss(
    chosen_logps: torch.Tensor,
    rejected_logps: torch.Tensor,
    ref_chosen_logps: torch.Tensor,
    ref_rejected_logps: torch.Tensor,
    beta: float,
    chosen_lengths: torch.Tensor | None = None,
    rejected_lengths: torch.Tensor | None = None,
) -> torch.Tensor:
    """Per-pair IPO loss ``(h - 1/(2 beta))**2``; log-ratios divided by token counts when lengths are given."""
    chosen_ratio = chosen_logps - ref_chosen_logps
    rejected_ratio = rejected_logps - ref_rejected_logps
    if chosen_lengths is not None and rejected_lengths is not None:
        chosen_ratio = chosen_ratio / chosen_lengths.clamp(min=1.0)
        rejected_ratio = rejected_ratio / rejected_lengths.clamp(min=1.0)
    return (chosen_ratio - rejected_ratio - 1 / (2 * beta)) ** 2


class MiniDPOConfig(MiniConfig):
    """Mini DPO/IPO options (plus everything in :class:`MiniConfig`)."""

    loss: Literal["sigmoid", "ipo"] = Field("sigmoid", description="sigmoid = DPO, ipo = IPO")
    beta: float = Field(0.1, gt=0)
    label_smoothing: float = Field(0.0, ge=0, lt=0.5, description="conservative DPO (sigmoid only)")
    length_normalize: bool = Field(True, description="IPO on per-token averaged log-ratios (TRL's form)")


def pair_batch(tokenizer: Any, rows: Sequence[Mapping[str, Any]], max_length: int) -> Encoded:
    """``[chosen..., rejected...]`` as one right-padded batch (one forward pass for both halves)."""
    prompts = [r["prompt"] for r in rows]
    return encode_pairs(
        tokenizer, prompts + prompts, [r["chosen"] for r in rows] + [r["rejected"] for r in rows], max_length
    )


def preference_loss(
    config: MiniDPOConfig, policy: torch.nn.Module, reference: torch.nn.Module, batch: Encoded
) -> tuple[torch.Tensor, dict[str, float]]:
    """Mean DPO/IPO loss of a ``[chosen; rejected]`` batch and its metrics."""
    logps, mask = per_token_logps(policy, batch)
    with torch.no_grad():
        ref_logps, _ = per_token_logps(reference, batch)
    chosen, rejected = logps.sum(-1).chunk(2)
    ref_chosen, ref_rejected = ref_logps.sum(-1).chunk(2)
    if config.loss == "sigmoid":
        losses = dpo_loss(chosen, rejected, ref_chosen, ref_rejected, config.beta, config.label_smoothing)
    else:
        lengths = mask.sum(-1).chunk(2) if config.length_normalize else (None, None)
        losses = ipo_loss(chosen, rejected, ref_chosen, ref_rejected, config.beta, *lengths)
    chosen_reward = config.beta * (chosen - ref_chosen).detach()
    rejected_reward = config.beta * (rejected - ref_rejected).detach()
    metrics = {
        "rewards/chosen": float(chosen_reward.mean()),
        "rewards/rejected": float(rejected_reward.mean()),
        "rewards/margin": float((chosen_reward - rejected_reward).mean()),
        "accuracy": float((chosen_reward > rejected_reward).float().mean()),
    }
    return losses.mean(), metrics


def train_dpo(
    config: MiniDPOConfig | Mapping[str, Any],
    rows: Sequence[Mapping[str, Any]],
    model: Any = None,
    tokenizer: Any = None,
) -> list[dict[str, float]]:
    """Train with DPO or IPO on preference rows; returns the per-step metrics (also written to ``log_file``)."""
    config = config if isinstance(config, MiniDPOConfig) else MiniDPOConfig.model_validate(dict(config))
    policy = load_policy(config, model, tokenizer, reference=True)
    device, model, tokenizer, reference = policy.device, policy.model, policy.tokenizer, policy.required_reference()

    def step_loss(batch_rows: list[Mapping[str, Any]]) -> tuple[torch.Tensor, dict[str, float]]:
        batch = pair_batch(tokenizer, batch_rows, config.max_length).to(device)
        return preference_loss(config, model, reference, batch)

    desc = f"mini {'DPO' if config.loss == 'sigmoid' else 'IPO'}"
    history = train_loop(config, model, rows, step_loss, desc, tokenizer)
    save_model(model, tokenizer, config.output_dir)
    return history
