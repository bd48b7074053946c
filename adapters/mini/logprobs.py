"""Per-token and per-sequence log-probabilities of completions under a model."""

from __future__ import annotations

import torch

from rewardsmith.adapters.mini.batching import Encoded


def token_logps(logits: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    """``log softmax(logits)[label]`` per position, without materialising the full log-softmax twice."""
    logits = logits.float()
    return torch.gather(logits, -1, labels.unsqueeze(-1)).squeeze(-1) - torch.logsumexp(logits, dim=-1)


def per_token_logps(model: torch.nn.Module, batch: Encoded) -> tuple[torch.Tensor, torch.Tensor]:
    """Log-prob of each next token and the mask of completion tokens, both ``(B, T-1)``.

    Position ``t`` holds ``log p(x_{t+1} | x_{<=t})``, so the mask is ``completion_mask[:, 1:]``.
    """
    logits = model(input_ids=batch.input_ids, attention_mask=batch.attention_mask, use_cache=False).logits
    logps = token_logps(logits[:, :-1], batch.input_ids[:, 1:])
    mask = batch.completion_mask[:, 1:].to(logps.dtype)
    return logps * mask, mask


def sequence_logps(model: torch.nn.Module, batch: Encoded, average: bool = False) -> torch.Tensor:
    """Summed (or per-token averaged) completion log-prob of each sequence, ``(B,)``."""
    logps, mask = per_token_logps(model, batch)
    total = logps.sum(-1)
    return total / mask.sum(-1).clamp(min=1.0) if average else total
