"""Loading, freezing and saving the ``transformers`` causal LMs the mini trainers train."""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from typing import Any, NamedTuple

import torch

from rewardsmith.adapters.mini.config import TINY_MODEL, MiniConfig, prepare_run


def load_model_and_tokenizer(path: str, device: torch.device, dtype: str = "float32") -> tuple[Any, Any]:
    """A causal LM and its tokenizer; ``'tiny'`` builds the offline tiny model in a temporary folder."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    if path == TINY_MODEL:
        from rewardsmith.adapters.demo.tiny_model import build_tiny_model

        path = str(build_tiny_model(tempfile.mkdtemp(prefix="rewardsmith-tiny-")))
    tokenizer = AutoTokenizer.from_pretrained(path)
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    # Typed as a Module: transformers wraps ``PreTrainedModel.to`` so that type checkers see it unbound.
    model: torch.nn.Module = AutoModelForCausalLM.from_pretrained(path, dtype=getattr(torch, dtype))
    return model.to(device), tokenizer


#: how a trainer loads what it trains: ``(path, device, dtype) -> (model, tokenizer)``
Loader = Callable[[str, torch.device, str], tuple[Any, Any]]


class Policy(NamedTuple):
    """What a run trains and measures against: device, policy, tokenizer, frozen reference (or ``None``)."""

    device: torch.device
    model: Any
    tokenizer: Any
    reference: torch.nn.Module | None

    def required_reference(self) -> torch.nn.Module:
        """The frozen reference of a method that always needs one (loaded with ``reference=True``)."""
        if self.reference is None:
            raise RuntimeError("this policy was loaded without a reference model (load_policy(..., reference=True))")
        return self.reference


def load_policy(
    config: MiniConfig,
    model: Any = None,
    tokenizer: Any = None,
    *,
    reference: bool,
    loader: Loader = load_model_and_tokenizer,
) -> Policy:
    """Seed the run, then take the given model and tokenizer or load ``config.model`` (with ``loader``: a reward
    model is a sequence classifier); the frozen reference copy is made only when ``reference`` (a KL term or a
    log-ratio needs it). The order (seed, load, copy) fixes the RNG stream, so a resumed run draws what an
    uninterrupted one does."""
    device = prepare_run(config)
    if model is None:
        model, tokenizer = loader(config.model, device, config.dtype)
    return Policy(device, model, tokenizer, frozen_copy(model) if reference else None)


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
