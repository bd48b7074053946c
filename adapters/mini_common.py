"""What every mini trainer shares: the config base, model loading, tokenising, sequence log-probs, the log.

The mini trainers are plain PyTorch loops over ``transformers`` causal LMs, meant to be read in one sitting.
Sequences are laid out as ``[prompt | completion | pad]`` (right padding) for training and with left padding
for generation; ``completion_mask`` marks the tokens whose log-probs count.
"""

from __future__ import annotations

import json
import random
import tempfile
import time
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import torch
from pydantic import BaseModel, ConfigDict, Field

#: ``model: tiny`` builds the offline tiny model instead of loading a path.
TINY_MODEL = "tiny"


class MiniConfig(BaseModel):
    """Options every mini trainer has. Unknown keys are errors."""

    model_config = ConfigDict(extra="forbid")

    model: str = Field(TINY_MODEL, description="model directory, or 'tiny' to build the offline tiny model")
    seed: int = 0
    learning_rate: float = Field(1e-5, gt=0)
    weight_decay: float = Field(0.0, ge=0)
    max_grad_norm: float | None = Field(1.0, gt=0, description="gradient clipping; null disables it")
    max_steps: int = Field(10, ge=1, description="optimizer steps")
    batch_size: int = Field(4, ge=1, description="prompts (GRPO) or examples (preference) per step")
    max_length: int = Field(256, ge=8, description="prompt + completion tokens kept for training")
    device: str = Field("auto", description="'auto', 'cpu', 'cuda', ...")
    num_threads: int | None = Field(
        None, ge=1, description="torch CPU threads for this process (small models on a busy CPU: 1); None keeps torch's"
    )
    dtype: str = Field("float32", description="float32 | bfloat16 | float16")
    log_file: str | None = Field(None, description="metrics log (jsonl), one line per step")
    output_dir: str | None = Field(None, description="save the trained model here at the end")
    progress: bool = Field(True, description="show a progress bar")


def resolve_device(name: str) -> torch.device:
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    return torch.device(name)


def prepare_run(config: MiniConfig) -> torch.device:
    """Seed Python and torch, apply ``num_threads``, and return the device to train on."""
    random.seed(config.seed)
    torch.manual_seed(config.seed)
    if config.num_threads is not None:
        torch.set_num_threads(config.num_threads)
    return resolve_device(config.device)


def load_model_and_tokenizer(path: str, device: torch.device, dtype: str = "float32") -> tuple[Any, Any]:
    """A causal LM and its tokenizer; ``'tiny'`` builds the offline tiny model in a temporary folder."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    if path == TINY_MODEL:
        from rewardkit.adapters.tiny_model import build_tiny_model

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


def render_prompt(tokenizer: Any, prompt: Any) -> str:
    """Prompt text: a message list goes through the chat template (with the generation prompt)."""
    if isinstance(prompt, str):
        return prompt
    return tokenizer.apply_chat_template(list(prompt), tokenize=False, add_generation_prompt=True)


def render_completion(tokenizer: Any, completion: Any) -> str:
    """Completion text ending with EOS: a message list becomes its assistant content."""
    from rewardkit.types import completion_text

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


def encode_pairs(
    tokenizer: Any, prompts: Sequence[Any], completions: Sequence[Any], max_length: int
) -> Encoded:
    """Tokenise prompt/completion pairs, keep the completion whole where possible (left-truncate the prompt)."""
    rows = []
    for prompt, completion in zip(prompts, completions, strict=True):
        p = tokenizer(render_prompt(tokenizer, prompt), add_special_tokens=False)["input_ids"]
        c = tokenizer(render_completion(tokenizer, completion), add_special_tokens=False)["input_ids"]
        c = c[:max_length - 1]
        p = p[-(max_length - len(c)):] if max_length > len(c) else []
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
        comp[i, len(p):n] = 1
    return Encoded(input_ids=ids, attention_mask=attn, completion_mask=comp)


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


def batches(rows: Sequence[Mapping[str, Any]], batch_size: int, seed: int) -> Iterator[list[Mapping[str, Any]]]:
    """Endless shuffled batches (reshuffled each epoch, seeded); the last partial batch wraps around."""
    if not rows:
        raise ValueError("no training rows")
    rng = random.Random(seed)
    order: list[int] = []
    while True:
        while len(order) < batch_size:
            epoch = list(range(len(rows)))
            rng.shuffle(epoch)
            order.extend(epoch)
        yield [rows[i] for i in order[:batch_size]]
        order = order[batch_size:]


def make_optimizer(model: torch.nn.Module, config: MiniConfig) -> torch.optim.Optimizer:
    params = [p for p in model.parameters() if p.requires_grad]
    return torch.optim.AdamW(params, lr=config.learning_rate, weight_decay=config.weight_decay)


def optimizer_step(model: torch.nn.Module, optimizer: torch.optim.Optimizer, config: MiniConfig) -> float:
    """Clip, step, zero; returns the gradient norm before clipping."""
    params = [p for p in model.parameters() if p.grad is not None]
    if config.max_grad_norm is not None:
        norm = float(torch.nn.utils.clip_grad_norm_(params, config.max_grad_norm))
    else:
        norm = float(torch.norm(torch.stack([p.grad.detach().norm() for p in params]))) if params else 0.0
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)
    return norm


class MetricsLog:
    """Step metrics to a jsonl file (appended, flushed each line) and to a tqdm bar."""

    def __init__(self, path: str | None, total: int, desc: str, progress: bool = True) -> None:
        from tqdm import tqdm

        self.path = Path(path) if path else None
        if self.path:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.path.write_text("")
        self.bar = tqdm(total=total, desc=desc, unit="step", disable=not progress)
        self.start, self.cpu_start = time.perf_counter(), time.process_time()
        self.history: list[dict[str, float]] = []

    def log(self, step: int, metrics: Mapping[str, float]) -> None:
        record = {
            "step": step,
            "elapsed_s": round(time.perf_counter() - self.start, 4),
            "cpu_s": round(time.process_time() - self.cpu_start, 4),  # this process's CPU time (all threads)
            **metrics,
        }
        self.history.append(record)
        if self.path:
            with self.path.open("a", encoding="utf-8") as fh:
                fh.write(json.dumps(record) + "\n")
        shown = {k: f"{v:.4g}" for k, v in metrics.items() if k in ("loss", "reward", "accuracy")}
        self.bar.set_postfix(shown)
        self.bar.update(1)

    def close(self) -> None:
        self.bar.close()


def save_model(model: Any, tokenizer: Any, output_dir: str | None) -> None:
    if output_dir:
        model.save_pretrained(output_dir)
        tokenizer.save_pretrained(output_dir)


def masked_mean(values: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    return (values * mask).sum() / mask.sum().clamp(min=1.0)


def train_loop(
    config: MiniConfig,
    model: torch.nn.Module,
    rows: Sequence[Mapping[str, Any]],
    step_loss: Any,
    desc: str,
) -> list[dict[str, float]]:
    """The offline loop of the preference trainers: batch, ``step_loss(batch) -> (loss, metrics)``, step, log."""
    optimizer = make_optimizer(model, config)
    log = MetricsLog(config.log_file, config.max_steps, desc, config.progress)
    model.train()
    feed = batches(rows, config.batch_size, config.seed)
    try:
        for step in range(1, config.max_steps + 1):
            loss, metrics = step_loss(next(feed))
            loss.backward()
            grad_norm = optimizer_step(model, optimizer, config)
            log.log(step, {"loss": float(loss.detach()), "grad_norm": grad_norm, **metrics})
    finally:
        log.close()
    return log.history
