"""The mini trainers' shared config and device setup."""

from __future__ import annotations

import random

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
