"""What every mini trainer shares: the config base, model loading, tokenising, sequence log-probs, the log,
checkpoints.

The mini trainers are plain PyTorch loops over ``transformers`` causal LMs, meant to be read in one sitting.
Sequences are laid out as ``[prompt | completion | pad]`` (right padding) for training and with left padding
for generation; ``completion_mask`` marks the tokens whose log-probs count.

Checkpoints (``save_steps > 0``) go to ``output_dir/checkpoint-NNNNNN``: the weights (``save_pretrained``), the
tokenizer, ``trainer_state.pt`` (optimizer, RNG states, data cursor, an unfinished GRPO round) and
``trainer_state.json`` (step, timers, step history, config). Each is written to a hidden temporary folder and
renamed into place, so a process killed mid-save leaves the previous checkpoint whole; only the newest is kept.
``resume: true`` continues from the newest one with the same data order and random streams, so a resumed run
ends with the weights of an uninterrupted one.
"""

from __future__ import annotations

import json
import os
import random
import re
import shutil
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch
from pydantic import BaseModel, ConfigDict, Field, model_validator

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
    output_dir: str | None = Field(None, description="save the trained model here at the end (and checkpoints)")
    progress: bool = Field(True, description="show a progress bar")
    save_steps: int = Field(
        0, ge=0, description="checkpoint into output_dir every N steps and at the last step; 0: final model only"
    )
    resume: bool = Field(False, description="continue from the newest checkpoint in output_dir (fresh if none)")
    overwrite: bool = Field(False, description="start fresh even though output_dir holds checkpoints (deletes them)")

    @model_validator(mode="after")
    def _checkpoint_options(self) -> MiniConfig:
        if (self.save_steps or self.resume or self.overwrite) and not self.output_dir:
            raise ValueError("save_steps, resume and overwrite need output_dir (where checkpoints live)")
        if self.resume and self.overwrite:
            raise ValueError("resume and overwrite exclude each other")
        return self


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
    """Step metrics to a jsonl file (appended, flushed each line) and to a tqdm bar.

    A fresh run empties the file. A resumed run (``resumed`` given) keeps the records up to the checkpoint's
    step, cuts the ones logged after it (those steps are trained again), appends from there, and carries the
    checkpoint's wall and CPU clocks on.
    """

    def __init__(
        self, path: str | None, total: int, desc: str, progress: bool = True, resumed: Resumed | None = None
    ) -> None:
        from tqdm import tqdm

        self.path = Path(path) if path else None
        done = resumed.step if resumed else 0
        if self.path:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            if resumed is None or not self.path.exists():
                self.path.write_text("")
            else:
                truncate_log(self.path, done)
        self.bar = tqdm(total=total, initial=done, desc=desc, unit="step", disable=not progress)
        elapsed, cpu = (resumed.elapsed_s, resumed.cpu_s) if resumed else (0.0, 0.0)
        self.start, self.cpu_start = time.perf_counter() - elapsed, time.process_time() - cpu
        self.history: list[dict[str, float]] = list(resumed.history) if resumed else []

    def clocks(self) -> tuple[float, float]:
        """Wall and CPU seconds of the run so far (across resumes)."""
        return time.perf_counter() - self.start, time.process_time() - self.cpu_start

    def log(self, step: int, metrics: Mapping[str, float]) -> None:
        elapsed, cpu = self.clocks()
        record = {
            "step": step,
            "elapsed_s": round(elapsed, 4),
            "cpu_s": round(cpu, 4),  # this process's CPU time (all threads)
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


def truncate_log(path: Path, last_step: int) -> None:
    """Cut a jsonl metrics log right after the record of ``last_step`` (also drops a torn last line)."""
    keep = 0
    with path.open("rb") as fh:
        for line in fh:
            try:
                record = json.loads(line) if line.endswith(b"\n") else None
            except ValueError:
                record = None
            if not isinstance(record, dict) or int(record.get("step", last_step + 1)) > last_step:
                break
            keep += len(line)
    with path.open("r+b") as fh:
        fh.truncate(keep)


# -- checkpoints ----------------------------------------------------------------------------------------
CHECKPOINT_PATTERN = re.compile(r"^checkpoint-(\d+)$")
STATE_FILE, INFO_FILE = "trainer_state.pt", "trainer_state.json"
#: Options a resumed run may change; any other difference from the checkpoint's config is an error.
RESUMABLE_CHANGES = frozenset(
    {"max_steps", "log_file", "output_dir", "progress", "save_steps", "resume", "overwrite", "num_threads", "device"}
)


@dataclass
class Resumed:
    """What a checkpoint hands back to a training loop (weights, optimizer and RNGs are already restored)."""

    step: int
    feed: dict[str, Any]
    history: list[dict[str, float]]
    elapsed_s: float = 0.0
    cpu_s: float = 0.0
    extra: dict[str, Any] | None = field(default=None)


def list_checkpoints(output_dir: str | Path) -> list[tuple[int, Path]]:
    """Complete checkpoints in ``output_dir`` as ``(step, path)``, oldest first (temporary folders are skipped)."""
    root = Path(output_dir)
    if not root.is_dir():
        return []
    found = []
    for child in root.iterdir():
        match = CHECKPOINT_PATTERN.match(child.name)
        if match and (child / INFO_FILE).is_file() and (child / STATE_FILE).is_file():
            found.append((int(match.group(1)), child))
    return sorted(found)


def latest_checkpoint(output_dir: str | Path) -> Path | None:
    found = list_checkpoints(output_dir)
    return found[-1][1] if found else None


def rng_state() -> dict[str, Any]:
    """Python, NumPy and torch (CPU and CUDA) generator states, in types ``torch.load(weights_only=True)`` reads."""
    state: dict[str, Any] = {"python": random.getstate(), "torch": torch.get_rng_state()}
    if torch.cuda.is_available():
        state["cuda"] = torch.cuda.get_rng_state_all()
    try:
        import numpy as np
    except ImportError:
        return state
    kind, keys, pos, has_gauss, cached = np.random.get_state()
    state["numpy"] = [kind, torch.from_numpy(keys.astype("int64")), int(pos), int(has_gauss), float(cached)]
    return state


def set_rng_state(state: Mapping[str, Any]) -> None:
    version, internal, gauss = state["python"]
    random.setstate((version, tuple(internal), gauss))
    torch.set_rng_state(state["torch"])
    if "cuda" in state and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(state["cuda"])
    if "numpy" in state:
        import numpy as np

        kind, keys, pos, has_gauss, cached = state["numpy"]
        np.random.set_state((kind, keys.numpy().astype("uint32"), pos, has_gauss, cached))


def _config_record(config: MiniConfig) -> dict[str, Any]:
    try:
        return json.loads(config.model_dump_json())
    except (TypeError, ValueError):
        return {k: repr(v) for k, v in config}


def _fsync(path: Path) -> None:
    """Flush a file or a folder's entries to disk (best effort: some filesystems refuse folders)."""
    flags = os.O_RDONLY | (getattr(os, "O_DIRECTORY", 0) if path.is_dir() else 0)
    try:
        fd = os.open(path, flags)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _fsync_tree(root: Path) -> None:
    for path in [*root.rglob("*"), root]:
        _fsync(path)


class Checkpointer:
    """Saves and restores a training loop's whole state; a no-op without ``save_steps`` or ``resume``."""

    def __init__(self, config: MiniConfig, model: Any, tokenizer: Any, optimizer: torch.optim.Optimizer) -> None:
        self.config, self.model, self.tokenizer, self.optimizer = config, model, tokenizer, optimizer

    def due(self, step: int) -> bool:
        every = self.config.save_steps
        return every > 0 and (step % every == 0 or step == self.config.max_steps)

    def start(self) -> Resumed | None:
        """Resume from the newest checkpoint, or clear the way for a fresh run; ``None`` when starting fresh."""
        cfg = self.config
        if not cfg.output_dir:
            return None
        found = list_checkpoints(cfg.output_dir)
        if cfg.resume:
            if found:
                return self.restore(found[-1][1])
            print(f"no checkpoint in {cfg.output_dir}: starting fresh", file=sys.stderr)
            return None
        if found and not cfg.overwrite:
            raise ValueError(
                f"{cfg.output_dir} holds a checkpoint (step {found[-1][0]}): resume it (resume: true, --resume) "
                "or discard it (overwrite: true, --overwrite)"
            )
        for _, path in found:
            shutil.rmtree(path)
        return None

    def restore(self, path: Path) -> Resumed:
        info = json.loads((path / INFO_FILE).read_text())
        changed = sorted(
            k
            for k, v in _config_record(self.config).items()
            if k not in RESUMABLE_CHANGES and info.get("config", {}).get(k, v) != v
        )
        if changed:
            raise ValueError(f"{path}: the config differs from the checkpoint's in {', '.join(changed)}")
        state = torch.load(path / STATE_FILE, map_location="cpu", weights_only=True)
        load_weights(self.model, path)
        self.optimizer.load_state_dict(state["optimizer"])
        set_rng_state(state["rng"])
        return Resumed(
            step=int(info["step"]),
            feed=state["feed"],
            history=info["history"],
            elapsed_s=float(info.get("elapsed_s", 0.0)),
            cpu_s=float(info.get("cpu_s", 0.0)),
            extra=state.get("extra"),
        )

    def save(self, step: int, feed: BatchFeed, log: MetricsLog, extra: Mapping[str, Any] | None = None) -> Path:
        """Write ``checkpoint-<step>`` atomically, then delete the older ones."""
        root = Path(self.config.output_dir or ".")
        root.mkdir(parents=True, exist_ok=True)
        final = root / f"checkpoint-{step:06d}"
        tmp = Path(tempfile.mkdtemp(prefix=f".{final.name}.", suffix=".tmp", dir=root))
        try:
            self.model.save_pretrained(tmp)
            if self.tokenizer is not None:
                self.tokenizer.save_pretrained(tmp)
            state = {
                "step": step,
                "optimizer": self.optimizer.state_dict(),
                "rng": rng_state(),
                "feed": feed.state_dict(),
                "extra": dict(extra) if extra is not None else None,
            }
            torch.save(state, tmp / STATE_FILE)
            elapsed, cpu = log.clocks()
            info = {
                "step": step,
                "elapsed_s": elapsed,
                "cpu_s": cpu,
                "config": _config_record(self.config),
                "history": log.history,
            }
            (tmp / INFO_FILE).write_text(json.dumps(info))
            _fsync_tree(tmp)
            if final.exists():
                shutil.rmtree(final)
            os.replace(tmp, final)
            _fsync(root)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
        for old_step, path in list_checkpoints(root):
            if old_step != step:
                shutil.rmtree(path, ignore_errors=True)
        for leftover in root.glob(".checkpoint-*.tmp"):
            shutil.rmtree(leftover, ignore_errors=True)
        return final


def load_weights(model: Any, directory: Path) -> None:
    """Load ``save_pretrained`` safetensors (single file or sharded) into ``model`` in place."""
    from safetensors.torch import load_file

    single, index = directory / "model.safetensors", directory / "model.safetensors.index.json"
    if single.is_file():
        files = [single]
    elif index.is_file():
        files = sorted({directory / f for f in json.loads(index.read_text())["weight_map"].values()})
    else:
        raise FileNotFoundError(f"{directory}: no model.safetensors")
    state: dict[str, torch.Tensor] = {}
    for f in files:
        state.update(load_file(str(f)))
    missing, unexpected = model.load_state_dict(state, strict=False)
    tied = _tied_names(model)
    if unexpected or set(missing) - tied:
        raise ValueError(f"{directory}: weights do not fit the model (missing {missing}, unexpected {unexpected})")


def _tied_names(model: Any) -> set[str]:
    """Parameter names that share storage with an earlier parameter (dropped by ``save_pretrained``)."""
    seen: dict[int, str] = {}
    tied = set()
    for name, param in model.named_parameters(remove_duplicate=False):
        if id(param) in seen:
            tied.add(name)
        else:
            seen[id(param)] = name
    return tied


def save_model(model: Any, tokenizer: Any, output_dir: str | None) -> None:
    if output_dir:
        model.save_pretrained(output_dir)
        if tokenizer is not None:
            tokenizer.save_pretrained(output_dir)


def masked_mean(values: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    return (values * mask).sum() / mask.sum().clamp(min=1.0)


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
    optimizer = make_optimizer(model, config)
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
