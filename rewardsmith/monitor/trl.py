"""The monitor as a TRL/transformers ``TrainerCallback``: stop training at an alarm when asked.

The signals reach the trainer's logs (``log_history``, every reporter) through TRL's ``log_metric``, which the
watched reward calls at each check::

    monitor = HackMonitor(shadow="math_equivalence", stop_on_alarm=True)
    trainer = GRPOTrainer(..., reward_funcs=[monitor.watch(reward)], callbacks=[HackMonitorCallback(monitor)])

The monitor keeps its state in the training process: watch a reward that TRL calls in that process (not the
experimental async GRPO, which scores in a spawned one).
"""

from __future__ import annotations

from typing import Any

from transformers import TrainerCallback

from rewardsmith.monitor.monitor import HackMonitor


class HackMonitorCallback(TrainerCallback):
    """Asks the trainer to stop after the step whose check raised an alarm (with ``stop_on_alarm=True``)."""

    def __init__(self, monitor: HackMonitor) -> None:
        self.monitor = monitor

    def on_step_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> Any:
        if self.monitor.alarmed and self.monitor.config.stop_on_alarm:
            control.should_training_stop = True
        return control
