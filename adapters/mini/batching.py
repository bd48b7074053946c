"""Prompts and completions as token batches: ``[prompt | completion | pad]``, right padded, with a
``completion_mask`` marking the tokens whose log-probs count; and the seeded, resumable batch feed.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from typing import Any

import torch
from pydantic import BaseModel, ConfigDict


def render_prompt(tokenizer: Any, prompt: Any) -> str:
    """Prompt text: a message list goes through the chat template (with the generation prompt)."""
    if isinstance(prompt, str):
        return prompt
    return tokenizer.apply_chat_template(list(prompt), tokenize=False, add_generation_prompt=True)


def render_completion(tokenizer: Any, completion: Any) -> str:
    """Completion text ending with EOS: a message list becomes its assistant content."""
    from rewardsmith.types import completion_text

    text = completion_text(completion)
    if text is None:
        raise ValueError(f"completion has no assistant text: {completion!r}")
    eos = tokenizer.eos_token or ""
    return text if text.endswith(eos) else text + eos


class Encoded(BaseModel):
    """A right-padded batch of ``prompt + completion`` sequences."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    input_ids: torch.Tensor
    attention_mask: torch.Tensor
    completion_mask: torch.Tensor

    def to(self, device: torch.device) -> Encoded:
        return Encoded(**{k: v.to(device) for k, v in self})


def encode_pairs(tokenizer: Any, prompts: Sequence[Any], completions: Sequence[Any], max_length: int) -> Encoded:
    """Tokenise prompt/completion pairs, keep the completion whole where possible (left-truncate the prompt)."""
    rows = []
    for prompt, completion in zip(prompts, completions, strict=True):
        p = tokenizer(render_prompt(tokenizer, prompt), add_special_tokens=False)["input_ids"]
        c = tokenizer(render_completion(tokenizer, completion), add_special_tokens=False)["input_ids"]
        c = c[: max_length - 1]
        p = p[-(max_length - len(c)) :] if max_length > len(c) else []
        rows.append((p, c))
    return pad_sequences(rows, tokenizer.pad_token_id)


def pad_sequences(rows: Sequence[tuple[Sequence[int], Sequence[int]]], pad_id: int) -> Encoded:
    """Right-pad ``(prompt_ids, completion_ids)`` rows into one batch."""
    width = max(len(p) + len(c) for p, c in rows)
    ids = torch.full((len(rows), width), pad_id, dtype=torch.long)
    attn = torch.zeros((len(rows), width), dtype=torch.long)
    comp = torch.zeros((len(rows), width), dtype=torch.long)
    for i, (p, c) in enumerate(rows):
        n = len(p) + len(c)
        ids[i, :n] = torch.tensor(list(p) + list(c), dtype=torch.long)
        attn[i, :n] = 1
        comp[i, len(p) : n] = 1
    return Encoded(input_ids=ids, attention_mask=attn, completion_mask=comp)


class BatchFeed:
    """Endless shuffled batches (reshuffled each epoch, seeded); the last partial batch wraps around.

    Its state (the shuffling RNG and the rows not served yet) is the data cursor a checkpoint saves.
    """

    def __init__(self, rows: Sequence[Mapping[str, Any]], batch_size: int, seed: int) -> None:
        if not rows:
            raise ValueError("no training rows")
        self.rows, self.batch_size = rows, batch_size
        self.rng = random.Random(seed)
        self.order: list[int] = []

    def __iter__(self) -> BatchFeed:
        return self

    def __next__(self) -> list[Mapping[str, Any]]:
        while len(self.order) < self.batch_size:
            epoch = list(range(len(self.rows)))
            self.rng.shuffle(epoch)
            self.order.extend(epoch)
        batch = [self.rows[i] for i in self.order[: self.batch_size]]
        self.order = self.order[self.batch_size :]
        return batch

    def state_dict(self) -> dict[str, Any]:
        return {"rng": self.rng.getstate(), "order": list(self.order)}

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        version, internal, gauss = state["rng"]
        self.rng.setstate((version, tuple(internal), gauss))
        self.order = [int(i) for i in state["order"]]


def batches(rows: Sequence[Mapping[str, Any]], batch_size: int, seed: int) -> BatchFeed:
    """A :class:`BatchFeed` over ``rows``."""
    return BatchFeed(rows, batch_size, seed)
