"""Mini ORPO: reference-free preference optimisation, SFT on the chosen answer plus an odds-ratio term.

With per-token *averaged* completion log-probs ``a_w`` (chosen) and ``a_l`` (rejected), odds
``odds(a) = p / (1 - p)`` where ``p = exp(a)``::

    log_odds = (a_w - a_l) - (log(1 - exp(a_w)) - log(1 - exp(a_l)))
    loss     = NLL(chosen) - beta * mean(log sigmoid(log_odds))

``NLL(chosen)`` is the per-token cross-entropy of the chosen completion (the SFT term; prompt tokens excluded,
as in the paper). No reference model is loaded, which halves memory against DPO.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import torch
import torch.nn.functional as F
from pydantic import Field

from rewardsmith.adapters.mini.config import MiniConfig
from rewardsmith.adapters.mini.dpo import pair_batch
from rewardsmith.adapters.mini.logprobs import per_token_logps
from rewardsmith.adapters.mini.loop import train_loop
from rewardsmith.adapters.mini.models import load_policy, save_model


def log1mexp(x: torch.Tensor) -> torch.Tensor:
    """``log(1 - exp(x))`` for ``x < 0``, stable on both sides of ``-log 2``."""
    return torch.where(x < -0.6931471805599453, torch.log1p(-torch.exp(x)), torch.log(-torch.expm1(x)))


def odds_ratio_term(chosen_avg_logps: torch.Tensor, rejected_avg_logps: torch.Tensor) -> torch.Tensor:
    """Per-pair ``log sigmoid(log_odds)`` (at most 0; the loss subtracts ``beta`` times its mean)."""
    chosen, rejected = chosen_avg_logps.float(), rejected_avg_logps.float()
    log_odds = (chosen - rejected) - (log1mexp(chosen) - log1mexp(rejected))
    return F.logsigmoid(log_odds)


def orpo_loss(
    chosen_nll: torch.Tensor, chosen_avg_logps: torch.Tensor, rejected_avg_logps: torch.Tensor, beta: float
) -> torch.Tensor:
    """Scalar ORPO loss ``NLL - beta * mean(log sigmoid(log_odds))``."""
    return chosen_nll - beta * odds_ratio_term(chosen_avg_logps, rejected_avg_logps).mean()


class MiniORPOConfig(MiniConfig):
    """Mini ORPO options (plus everything in :class:`MiniConfig`)."""

    beta: float = Field(0.1, gt=0, description="weight of the odds-ratio term (the paper's lambda)")


def train_orpo(
    config: MiniORPOConfig | Mapping[str, Any],
    rows: Sequence[Mapping[str, Any]],
    model: Any = None,
    tokenizer: Any = None,
) -> list[dict[str, float]]:
    """Train with ORPO on ``{prompt, chosen, rejected}`` rows; returns the per-step metrics."""
    config = config if isinstance(config, MiniORPOConfig) else MiniORPOConfig.model_validate(dict(config))
    device, model, tokenizer, _ = load_policy(config, model, tokenizer, reference=False)

    def step_loss(batch_rows: list[Mapping[str, Any]]) -> tuple[torch.Tensor, dict[str, float]]:
        batch = pair_batch(tokenizer, batch_rows, config.max_length).to(device)
        logps, mask = per_token_logps(model, batch)
        avg = logps.sum(-1) / mask.sum(-1).clamp(min=1.0)
        chosen_avg, rejected_avg = avg.chunk(2)
        chosen_logps, chosen_mask = logps.chunk(2)[0], mask.chunk(2)[0]
        nll = -chosen_logps.sum() / chosen_mask.sum().clamp(min=1.0)
        loss = orpo_loss(nll, chosen_avg, rejected_avg, config.beta)
        metrics = {
            "nll": float(nll.detach()),
            "log_odds_ratio": float(odds_ratio_term(chosen_avg, rejected_avg).mean().detach()),
            "accuracy": float((chosen_avg > rejected_avg).float().mean()),
        }
        return loss, metrics

    history = train_loop(config, model, rows, step_loss, "mini ORPO", tokenizer)
    save_model(model, tokenizer, config.output_dir)
    return history
