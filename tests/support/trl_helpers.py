"""TRL trainer configs for the tiny offline model: CPU, fp32, no reports, no checkpoints, a log line per step."""

from __future__ import annotations

import os
from typing import Any

CPU_DEFAULTS: dict[str, Any] = {
    "use_cpu": True,
    "bf16": False,
    "report_to": "none",
    "save_strategy": "no",
    "logging_steps": 1,
}


def tiny_config(config_class: type, output_dir: str | os.PathLike, **overrides: Any):
    """Any TRL ``*Config`` with the CPU defaults; ``overrides`` win over them."""
    return config_class(output_dir=str(output_dir), **{**CPU_DEFAULTS, **overrides})


def tiny_grpo_config(output_dir: str | os.PathLike, **overrides: Any):
    """Two GRPO steps of one prompt x four 16-token generations."""
    from trl import GRPOConfig

    defaults = {"num_generations": 4, "per_device_train_batch_size": 4, "max_completion_length": 16, "max_steps": 2}
    return tiny_config(GRPOConfig, output_dir, **{**defaults, **overrides})


def tiny_dpo_config(output_dir: str | os.PathLike, **overrides: Any):
    """Two DPO steps of four pairs."""
    from trl import DPOConfig

    return tiny_config(DPOConfig, output_dir, **{"per_device_train_batch_size": 4, "max_steps": 2, **overrides})
