"""The reward-hacking monitor in the mini GRPO trainer on the tiny offline model: alarm, stop, metrics logged."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.extras import require_extras

require_extras("trl")

from rewardsmith import get_reward
from rewardsmith.adapters.mini.grpo import MiniGRPOTrainer
from rewardsmith.monitor import HackMonitor

pytestmark = pytest.mark.slow

SAMPLE = Path(__file__).resolve().parents[2] / "rewardsmith" / "samples" / "hack_math_rows.jsonl"
ROWS = [json.loads(line) for line in SAMPLE.read_text().splitlines()]
BASE = {"learning_rate": 1e-3, "batch_size": 2, "num_generations": 4, "max_completion_length": 16, "progress": False}


def run(model_dir, tmp_path, monitor, steps):
    log = tmp_path / "metrics.jsonl"
    config = {**BASE, "model": str(model_dir), "max_steps": steps, "seed": 0, "log_file": str(log)}
    config["output_dir"] = str(tmp_path / "out")
    trainer = MiniGRPOTrainer(config, ROWS, get_reward("regex_match", {"pattern": "[0-9]"}), monitor=monitor)
    history = trainer.train()
    return history, [json.loads(line) for line in log.read_text().splitlines()]


def test_mini_trainer_stops_on_the_alarm_of_a_hackable_reward(tiny_model_dir, tmp_path):
    monitor = HackMonitor(shadow="math_equivalence", stop_on_alarm=True)
    history, logged = run(tiny_model_dir, tmp_path, monitor, steps=20)
    assert monitor.alarms and monitor.alarms[0].signal == "divergence"
    assert len(history) == len(logged) < 6  # stopped within a bounded number of steps
    assert logged[-1]["monitor/alarm"] == 1.0 and logged[-1]["monitor/precision_high"] < 0.5


def test_mini_trainer_clean_run_logs_signals_without_alarm(tiny_model_dir, tmp_path):
    monitor = HackMonitor(shadow={"name": "regex_match", "config": {"pattern": "[0-9]"}})
    _, logged = run(tiny_model_dir, tmp_path, monitor, steps=8)
    assert len(logged) == 8 and not monitor.alarmed
    assert all(entry["monitor/precision"] == 1.0 and entry["monitor/alarm"] == 0.0 for entry in logged)
