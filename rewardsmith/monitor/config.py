"""Monitor settings: what the shadow is, how often and how much to check, and when a signal is an alarm."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field


class MonitorConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", arbitrary_types_allowed=True)

    shadow: Any = Field(description="reward spec of the shadow verifier (what the training reward should agree with)")
    format_reward: Any | None = Field(None, description="reward spec of a format check, for 'format up, accuracy flat'")
    every: int = Field(1, ge=1, description="check every N scored batches")
    sample: int = Field(64, ge=1, description="completions shadow-scored per check (whole groups)")
    window: int = Field(30, ge=2, description="checks the signals look back over")
    train_threshold: float = Field(1.0, description="a training score >= this counts as 'the reward says correct'")
    shadow_threshold: float = Field(1.0, description="a shadow score >= this counts as correct")
    alpha: float = Field(0.01, gt=0, lt=1, description="significance level of every trend test")
    min_checks: int = Field(6, ge=3, description="checks before a trend is tested")
    min_precision: float = Field(0.5, description="alarm when precision's upper 95% bound falls below this")
    min_passes: int = Field(8, ge=1, description="training passes needed before precision is judged")
    length_ratio: float = Field(1.5, gt=1, description="length blow-up: late mean over early mean at least this")
    min_share: float = Field(0.1, description="hedging / attack-pattern share that makes a significant rise an alarm")
    collapse_level: float = Field(0.75, description="within-group share of the modal answer that counts as collapse")
    n_permutations: int = Field(2000, ge=100, description="block permutations per trend test")
    stop_on_alarm: bool = Field(False, description="ask the trainer to stop at the first alarm")
    seed: int = 0
