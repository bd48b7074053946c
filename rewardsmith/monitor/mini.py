"""The monitor's hook for the mini GRPO trainer: one generation round as the batch TRL would have passed."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from rewardsmith.monitor.monitor import HackMonitor


def observe_round(
    monitor: HackMonitor,
    rows: Sequence[Mapping[str, Any]],
    completions: list[str],
    rewards: Any,
    num_generations: int,
) -> dict[str, float]:
    """Feed a round (rows repeated per generation, the combined rewards) to ``monitor``; returns its latest metrics."""
    repeated = [r for r in rows for _ in range(num_generations)]
    columns = {("prompts" if k == "prompt" else k): [r.get(k) for r in repeated] for k in repeated[0]}
    scores = [None if math.isnan(v) else float(v) for v in (float(x) for x in rewards)]
    before = len(monitor.history)
    monitor.observe(completions, scores, columns)
    return dict(monitor.latest) if len(monitor.history) > before else {}
