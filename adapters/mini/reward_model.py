"""Mini reward-model training: a Bradley–Terry reward model from preference pairs, in plain PyTorch.

The model is a ``transformers`` ``AutoModelForSequenceClassification`` with one output (a causal LM's body with a
new scalar head). Each row ``{prompt, chosen, rejected}`` (plain or conversational, the DPO format that ``rewardsmith
rlaif pairs`` writes) becomes two texts rendered exactly as the ``reward_model`` reward renders them at scoring
time (the chat template over the user prompt and the assistant response), scored in one ``[chosen; rejected]``
forward pass. With ``r_w, r_l`` the chosen and rejected rewards and ``m`` an optional per-row margin:

    loss = -mean log sigmoid(r_w - r_l - m)  +  c * mean((r_w + r_l) ** 2)

the second term (``center_rewards_coefficient`` ``c``, off by default) keeps rewards centred on zero. This is the
loss of TRL's ``RewardTrainer`` term for term; the tests check it on the same batch. Checkpoints, resume and the
metrics log are the shared mini-trainer loop's.

This closes the loop: constitution -> AI preference labels -> reward model -> ``reward_model`` reward for GRPO.
"""

from __future__ import annotations

import tempfile
from collections.abc import Mapping, Sequence
from typing import Any

import torch
import torch.nn.functional as F
from pydantic import Field

from rewardsmith.adapters.mini.config import TINY_MODEL, MiniConfig
from rewardsmith.adapters.mini.loop import train_loop
from rewardsmith.adapters.mini.models import load_policy, save_model


class MiniRMConfig(MiniConfig):
    """Mini reward-model options (plus everything in :class:`MiniConfig`)."""

    center_rewards_coefficient: float | None = Field(
        None, ge=0, description="weight of mean((r_w + r_l)^2), keeping rewards centred (TRL's option)"
    )
    margin_column: str | None = Field(None, description="row column with a margin the chosen reward must exceed by")


def bradley_terry_loss(
    chosen: torch.Tensor,
    rejected: torch.Tensor,
    margin: torch.Tensor | None = None,
    center_rewards_coefficient: float | None = None,
) -> torch.Tensor:
    """``-mean log sigmoid(r_w - r_l - m)`` (+ ``c * mean((r_w + r_l)^2)``), a scalar."""
    difference = chosen - rejected if margin is None else chosen - rejected - margin
    loss = -F.logsigmoid(difference).mean()
    if center_rewards_coefficient is not None:
        loss = loss + center_rewards_coefficient * torch.mean((chosen + rejected) ** 2)
    return loss


def load_reward_model(path: str, device: torch.device, dtype: str = "float32") -> tuple[Any, Any]:
    """A one-output sequence classifier and its tokenizer; ``'tiny'`` starts from the offline tiny model."""
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    if path == TINY_MODEL:
        from rewardsmith.adapters.demo.tiny_model import build_tiny_model

        path = str(build_tiny_model(tempfile.mkdtemp(prefix="rewardsmith-tiny-")))
    tokenizer = AutoTokenizer.from_pretrained(path)
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    model = AutoModelForSequenceClassification.from_pretrained(path, num_labels=1, dtype=getattr(torch, dtype))
    model.config.pad_token_id = tokenizer.pad_token_id
    return model.to(device), tokenizer


def render(tokenizer: Any, prompt: Any, response: Any) -> str:
    """The text a reward model reads, the same at training and at scoring (``reward_model`` reward)."""
    from rewardsmith.judges.reward_model import as_messages, plain_text
    from rewardsmith.types import completion_text

    text = completion_text(response)
    if text is None:
        raise ValueError(f"response has no assistant text: {response!r}")
    if getattr(tokenizer, "chat_template", None):
        return tokenizer.apply_chat_template(as_messages(prompt, text), tokenize=False)
    return f"{plain_text(prompt)}\n{text}"


def pair_inputs(tokenizer: Any, rows: Sequence[Mapping[str, Any]], max_length: int) -> dict[str, torch.Tensor]:
    """``[chosen..., rejected...]`` texts as one right-padded batch, truncated from the left."""
    texts = [render(tokenizer, r["prompt"], r["chosen"]) for r in rows]
    texts += [render(tokenizer, r["prompt"], r["rejected"]) for r in rows]
    tokenizer.truncation_side = "left"
    tokenizer.padding_side = "right"
    encoded = tokenizer(
        texts, padding=True, truncation=True, max_length=max_length, return_tensors="pt", add_special_tokens=False
    )
    return {"input_ids": encoded["input_ids"], "attention_mask": encoded["attention_mask"]}


def reward_loss(
    config: MiniRMConfig, model: torch.nn.Module, inputs: Mapping[str, torch.Tensor], margin: torch.Tensor | None
) -> tuple[torch.Tensor, dict[str, float]]:
    """The Bradley–Terry loss of a ``[chosen; rejected]`` batch and its metrics."""
    rewards = model(input_ids=inputs["input_ids"], attention_mask=inputs["attention_mask"]).logits.squeeze(-1)
    chosen, rejected = rewards.chunk(2)
    loss = bradley_terry_loss(chosen, rejected, margin, config.center_rewards_coefficient)
    chosen, rejected = chosen.detach(), rejected.detach()
    metrics = {
        "rewards/chosen": float(chosen.mean()),
        "rewards/rejected": float(rejected.mean()),
        "rewards/margin": float((chosen - rejected).mean()),
        "accuracy": float((chosen > rejected).float().mean()),
    }
    return loss, metrics


def train_rm(
    config: MiniRMConfig | Mapping[str, Any],
    rows: Sequence[Mapping[str, Any]],
    model: Any = None,
    tokenizer: Any = None,
) -> list[dict[str, float]]:
    """Train a reward model on preference rows; returns the per-step metrics (also written to ``log_file``)."""
    config = config if isinstance(config, MiniRMConfig) else MiniRMConfig.model_validate(dict(config))
    missing = [i for i, r in enumerate(rows) if not all(k in r for k in ("prompt", "chosen", "rejected"))]
    if missing:
        raise ValueError(f"rows {missing[:5]} lack prompt/chosen/rejected (a DPO-format dataset is needed)")
    device, model, tokenizer, _ = load_policy(config, model, tokenizer, reference=False, loader=load_reward_model)

    def step_loss(batch_rows: list[Mapping[str, Any]]) -> tuple[torch.Tensor, dict[str, float]]:
        inputs = {k: v.to(device) for k, v in pair_inputs(tokenizer, batch_rows, config.max_length).items()}
        margin = None
        if config.margin_column is not None:
            margin = torch.tensor([float(r[config.margin_column]) for r in batch_rows], device=device)
        return reward_loss(config, model, inputs, margin)

    history = train_loop(config, model, rows, step_loss, "mini reward model", tokenizer)
    save_model(model, tokenizer, config.output_dir)
    return history
