"""The GRPO demo (`rewardsmith train grpo --demo`, the quick start's first command): a real short run of the mini
GRPO trainer whose exit status says whether the verifiable reward rose."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.support.extras import require_extras

require_extras("judge-local")

from rewardsmith.adapters.demo.grpo import GRPODemoResult, report, run_grpo_demo

pytestmark = pytest.mark.slow


def test_the_demo_command_trains_prints_the_rising_reward_and_exits_0():
    completed = subprocess.run(
        [sys.executable, "-m", "rewardsmith", "train", "grpo", "--demo"], capture_output=True, text=True, timeout=300
    )
    assert completed.returncode == 0, completed.stderr[-3000:]
    lines = completed.stdout.splitlines()
    steps = [line for line in lines if line[:4].strip().isdigit()]
    assert len(steps) == 20
    rewards = [float(line.split()[1]) for line in steps]
    assert sum(rewards[-3:]) / 3 > sum(rewards[:3]) / 3 + 0.2
    assert any(line.startswith("mean reward") and "drove the policy" in line for line in lines)
    assert "rewardsmith rlaif pairs --demo" in lines[-1]


def test_a_reward_that_did_not_rise_fails(tmp_path, capsys):
    printed: list[str] = []
    log = tmp_path / "metrics.jsonl"
    result = run_grpo_demo(max_steps=6, min_rise=5.0, log_file=str(log), echo=printed.append)
    assert len(result.rewards) == 6 and not result.rose
    assert len(log.read_text().splitlines()) == 6
    assert printed[0].startswith("GRPO demo:")
    assert report(result) == 1
    assert "FAILED" in capsys.readouterr().err
    risen = GRPODemoResult(rewards=[0.1] * 3 + [0.9] * 3, first=0.1, last=0.9, min_rise=0.2, train_s=1.0)
    assert risen.rose and report(risen) == 0
    with pytest.raises(ValueError, match="at least 6 steps"):
        run_grpo_demo(max_steps=4)


def test_demo_and_config_are_one_or_the_other(tmp_path, capsys):
    from rewardsmith.cli.main import main

    assert main(["train", "grpo", "--demo", "--config", str(tmp_path / "x.yaml")]) == 2
    assert "either --demo or --config" in capsys.readouterr().err
    assert main(["train", "grpo"]) == 2
    assert "--config FILE (or --demo)" in capsys.readouterr().err
