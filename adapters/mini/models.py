"""Loading, freezing and saving the ``transformers`` causal LMs the mini trainers train."""

from __future__ import annotations

import tempfile
from typing import Any

import torch

from rewardkit.adapters.mini.config import TINY_MODEL


def load_model_and_tokenizer(path: str, device: torch.device, dtype: str = "float32") -> tuple[Any, Any]:
    """A causal LM and its tokenizer; ``'tiny'`` builds the offline tiny model in a temporary folder."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    if path == TINY_MODEL:
        from rewardkit.adapters.demo.tiny_model import build_tiny_model

        path = str(build_tiny_model(tempfile.mkdtemp(prefix="rewardkit-tiny-")))
    tokenizer = AutoTokenizer.from_pretrained(path)
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    model = AutoModelForCausalLM.from_pretrained(path, dtype=getattr(torch, dtype)).to(device)
    return model, tokenizer


def frozen_copy(model: torch.nn.Module) -> torch.nn.Module:
    """A frozen, eval-mode copy (the reference policy)."""
    import copy

    ref = copy.deepcopy(model).eval()
    for p in ref.parameters():
        p.requires_grad_(False)
    return ref


def save_model(model: Any, tokenizer: Any, output_dir: str | None) -> None:
    if output_dir:
        model.save_pretrained(output_dir)
        if tokenizer is not None:
            tokenizer.save_pretrained(output_dir)
