"""Per-token and per-sequence log-probabilities of completions under a model.

The logits of a batch are the largest tensor a step holds (batch x length x vocabulary: 2.5 GB in float32 for
64 sequences of 65 positions over Qwen2.5's 151,936 tokens). Slicing off the last position, then ``log_softmax``
and ``gather`` under autograd, keeps three to four tensors of that size alive at once in the backward pass (the
exponentials, the gather's scattered gradient, the log-sum-exp's gradient, their sum, the slice's zero-padded
gradient). :func:`next_token_logps` keeps two: the logits, which the backward pass needs, and one gradient buffer
of their shape filled block by block; every other temporary is one block of rows.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import torch

from rewardsmith.adapters.mini.batching import Encoded

#: Elements of one block of logit rows that a temporary may hold (64 MiB in float32).
BLOCK_ELEMENTS = 1 << 24


def _rows_per_block(vocabulary: int) -> int:
    return max(1, BLOCK_ELEMENTS // max(1, vocabulary))


def _row_blocks(tensor: torch.Tensor, rows: int) -> Iterator[torch.Tensor]:
    """Views of ``tensor``'s rows (its last axis kept whole), in order, ``rows`` at most each.

    Views, never copies: a tensor with a sliced middle axis cannot be flattened without copying all of it. Tensors
    of one leading shape cut with one ``rows`` give blocks that match one to one.
    """
    if tensor.dim() > 2:
        for part in tensor.unbind(0):
            yield from _row_blocks(part, rows)
        return
    for start in range(0, tensor.size(0), rows):
        yield tensor[start : start + rows]


def _working_dtype(logits: torch.Tensor) -> torch.dtype:
    """float32 for half-precision logits (TRL's reason for its slower bf16 path), else their own dtype."""
    return torch.promote_types(logits.dtype, torch.float32)


def _log_partition(logits: torch.Tensor) -> torch.Tensor:
    """``logsumexp`` over the last axis in the working dtype, one block of rows at a time."""
    work = _working_dtype(logits)
    log_z = torch.empty(logits.shape[:-1], dtype=work, device=logits.device)
    rows = _rows_per_block(logits.size(-1))
    for block, out in zip(_row_blocks(logits, rows), _row_blocks(log_z.unsqueeze(-1), rows), strict=True):
        out.copy_(torch.logsumexp(block.to(work), dim=-1, keepdim=True))
    return log_z


def _shifted_logps(logits: torch.Tensor, labels: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Log-probs of ``labels`` under all but the last position of ``logits``, and those positions' log-partition."""
    predicting = logits[..., :-1, :]
    log_z = _log_partition(predicting)
    selected = torch.gather(predicting, -1, labels.unsqueeze(-1)).squeeze(-1).to(log_z.dtype)
    return selected - log_z, log_z


class _NextTokenLogps(torch.autograd.Function):
    """Forward as :func:`_shifted_logps`; backward writes ``g * (onehot(label) - softmax)`` block by block."""

    @staticmethod
    def forward(ctx: Any, logits: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
        logps, log_z = _shifted_logps(logits, labels)
        ctx.save_for_backward(logits, labels, log_z)
        return logps

    @staticmethod
    @torch.autograd.function.once_differentiable
    def backward(ctx: Any, grad: torch.Tensor) -> tuple[torch.Tensor, None]:
        logits, labels, log_z = ctx.saved_tensors
        grad_logits = torch.empty(logits.shape, dtype=logits.dtype, device=logits.device)
        grad_logits[..., -1, :] = 0  # the last position predicts nothing here
        rows = _rows_per_block(logits.size(-1))
        parts = zip(
            _row_blocks(logits[..., :-1, :], rows),
            _row_blocks(grad_logits[..., :-1, :], rows),
            _row_blocks(log_z.unsqueeze(-1), rows),
            _row_blocks(labels.unsqueeze(-1), rows),
            _row_blocks(grad.to(log_z.dtype).unsqueeze(-1), rows),
            strict=True,
        )
        for block, out, block_log_z, block_labels, block_grad in parts:
            in_place = out.dtype == block_log_z.dtype
            local = torch.sub(block, block_log_z, out=out) if in_place else block.to(block_log_z.dtype) - block_log_z
            local.exp_().mul_(block_grad.neg())
            local.scatter_add_(-1, block_labels, block_grad)
            if not in_place:
                out.copy_(local)
        return grad_logits, None


def next_token_logps(logits: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    """``log softmax(logits[..., t, :])[labels[..., t]]``: each label under the position before it.

    ``logits`` is ``(..., L + 1, V)`` as the model returned it, in any floating dtype, and ``labels`` ``(..., L)``;
    the last position's logits predict no label. The result is float32 (float64 for float64 logits). Under autograd
    no full-size temporary is held but the gradient.
    """
    if logits.shape[:-2] != labels.shape[:-1] or logits.size(-2) != labels.size(-1) + 1:
        raise ValueError(f"logits {tuple(logits.shape)} need one more position than labels {tuple(labels.shape)}")
    if logits.requires_grad and torch.is_grad_enabled():
        logps: torch.Tensor = _NextTokenLogps.apply(logits, labels)
        return logps
    with torch.no_grad():
        return _shifted_logps(logits, labels)[0]


def per_token_logps(model: torch.nn.Module, batch: Encoded) -> tuple[torch.Tensor, torch.Tensor]:
    """Log-prob of each next token and the mask of completion tokens, both ``(B, T-1)``.

    Position ``t`` holds ``log p(x_{t+1} | x_{<=t})``, so the mask is ``completion_mask[:, 1:]``.
    """
    logits = model(input_ids=batch.input_ids, attention_mask=batch.attention_mask, use_cache=False).logits
    logps = next_token_logps(logits, batch.input_ids[:, 1:])
    mask = batch.completion_mask[:, 1:].to(logps.dtype)
    return logps * mask, mask


def sequence_logps(model: torch.nn.Module, batch: Encoded, average: bool = False) -> torch.Tensor:
    """Summed (or per-token averaged) completion log-prob of each sequence, ``(B,)``."""
    logps, mask = per_token_logps(model, batch)
    total = logps.sum(-1)
    return total / mask.sum(-1).clamp(min=1.0) if average else total
