"""Checkpoints and resume.

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
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch

from rewardsmith.adapters.mini.batching import BatchFeed
from rewardsmith.adapters.mini.config import MiniConfig
from rewardsmith.adapters.mini.metrics_log import MetricsLog

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


def rng_state() -> dict[str, Any]:
    """Python, NumPy and torch (CPU and CUDA) generator states, in types ``torch.load(weights_only=True)`` reads."""
    state: dict[str, Any] = {"python": random.getstate(), "torch": torch.get_rng_state()}
    if torch.cuda.is_available():
        state["cuda"] = torch.cuda.get_rng_state_all()
    try:
        import numpy as np
    except ImportError:
        return state
    legacy = np.random.get_state(legacy=True)
    assert isinstance(legacy, tuple), "the global NumPy generator is MT19937, whose legacy state is a 5-tuple"
    kind, keys, pos, has_gauss, cached = legacy
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
