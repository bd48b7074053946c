"""Monitor settings: what the shadow is, how often and how much to check, and when a signal is an alarm."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field


class MonitorConfig(BaseModel):
    """The monitor's settings; the false-alarm rate of a whole run is stated, not per check.

    A run is clean when, at every check, the expected share of a checked group that the training reward pays and
    the shadow rejects is at most ``tolerance``, and among the completions it pays the expected share the shadow
    rejects is at most ``1 - min_precision``. On a clean run the chance of *any* alarm within ``horizon`` checks is at
    most ``alpha`` (default: 1 % over 200 checks, for both tests together), whatever the run's length up to it and
    however often it is checked; past the horizon it grows by at most ``alpha`` per further ``horizon`` checks. The
    tests are one-sided e-CUSUMs over whole groups (:mod:`rewardsmith.monitor.sequential`).
    """

    model_config = ConfigDict(extra="forbid", arbitrary_types_allowed=True)

    shadow: Any = Field(description="reward spec of the shadow verifier (what the training reward should agree with)")
    format_reward: Any | None = Field(None, description="reward spec of a format check, for 'format up, accuracy flat'")
    every: int = Field(1, ge=1, description="check every N scored batches")
    sample: int = Field(64, ge=1, description="completions shadow-scored per check (whole groups)")
    window: int = Field(30, ge=1, description="checks the reported levels (precision, shares) look back over")
    train_threshold: float = Field(1.0, description="a training score >= this counts as 'the reward says correct'")
    shadow_threshold: float = Field(1.0, description="a shadow score >= this counts as correct")
    alpha: float = Field(
        0.01, gt=0, lt=1, description="run-level false-alarm rate: P(any alarm within `horizon` checks of a clean run)"
    )
    horizon: int = Field(200, ge=1, description="checks over which `alpha` is spent")
    tolerance: float = Field(
        0.05, gt=0, lt=1, description="share of a group the reward may pay while the shadow rejects it (clean runs)"
    )
    min_precision: float = Field(
        0.5, gt=0, lt=1, description="precision (shadow accepts what the reward pays) a clean run keeps"
    )
    length_ratio: float = Field(1.5, gt=1, description="paid-but-rejected completions this much longer: named")
    collapse_level: float = Field(0.75, description="within-group share of the modal answer that counts as collapse")
    stop_on_alarm: bool = Field(False, description="ask the trainer to stop at the first alarm")
    seed: int = 0
