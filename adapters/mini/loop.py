"""The optimisation loop the offline trainers share: optimizer, clipped steps, logging, checkpoints."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import torch

from rewardsmith.adapters.mini.batching import BatchFeed
from rewardsmith.adapters.mini.checkpoints import Checkpointer
from rewardsmith.adapters.mini.config import MiniConfig
from rewardsmith.adapters.mini.metrics_log import MetricsLog

#: Devices whose parameters AdamW updates with its fused kernel (one pass, no temporaries).
FUSED_ADAMW_DEVICES = frozenset({"cpu", "cuda"})


def make_optimizer(config: MiniConfig, *models: torch.nn.Module) -> torch.optim.Optimizer:
    """AdamW over the trainable parameters of ``models``, fused where torch has the kernel (TRL's default).

    The default multi-tensor AdamW allocates a square-root tensor of every parameter on each step: one more copy
    of the model (2 GB for a 0.5B model in float32) at the step's peak, which the fused kernel never holds.
    """
    params = [p for model in models for p in model.parameters() if p.requires_grad]
    fused = bool(params) and all(p.device.type in FUSED_ADAMW_DEVICES and p.is_floating_point() for p in params)
    return torch.optim.AdamW(params, lr=config.learning_rate, weight_decay=config.weight_decay, fused=fused or None)


def optimizer_step(model: torch.nn.Module, optimizer: torch.optim.Optimizer, config: MiniConfig) -> float:
    """Clip, step, zero; returns the gradient norm before clipping."""
    params = [p for p in model.parameters() if p.grad is not None]
    if config.max_grad_norm is not None:
        norm = float(torch.nn.utils.clip_grad_norm_(params, config.max_grad_norm))
    else:
        norms = [grad.detach().norm() for p in params if (grad := p.grad) is not None]
        norm = float(torch.norm(torch.stack(norms))) if params else 0.0
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)
    return norm


def train_loop(
    config: MiniConfig,
    model: torch.nn.Module,
    rows: Sequence[Mapping[str, Any]],
    step_loss: Any,
    desc: str,
    tokenizer: Any = None,
) -> list[dict[str, float]]:
    """The offline loop of the preference trainers: batch, ``step_loss(batch) -> (loss, metrics)``, step, log.

    Checkpoints every ``save_steps`` and resumes per ``config.resume`` (see the module docstring).
    """
    optimizer = make_optimizer(config, model)
    feed = BatchFeed(rows, config.batch_size, config.seed)
    checkpoints = Checkpointer(config, model, tokenizer, optimizer)
    resumed = checkpoints.start()
    if resumed is not None:
        feed.load_state_dict(resumed.feed)
    log = MetricsLog(config.log_file, config.max_steps, desc, config.progress, resumed)
    model.train()
    try:
        for step in range((resumed.step if resumed else 0) + 1, config.max_steps + 1):
            loss, metrics = step_loss(next(feed))
            loss.backward()
            grad_norm = optimizer_step(model, optimizer, config)
            log.log(step, {"loss": float(loss.detach()), "grad_norm": grad_norm, **metrics})
            if checkpoints.due(step):
                checkpoints.save(step, feed, log)
    finally:
        log.close()
    return log.history
