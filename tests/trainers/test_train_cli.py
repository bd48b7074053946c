"""``rewardsmith train …``: every algorithm from a YAML config on the tiny offline model, and config errors."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
import yaml

from rewardsmith.cli.main import main

pytestmark = pytest.mark.slow

SMALL = {"max_steps": 2, "batch_size": 2, "progress": False, "learning_rate": 1e-3, "num_threads": 1}

CASES = [
    ("grpo", {"task": {"name": "digit_run", "n": 8}, "num_generations": 4, "max_completion_length": 8}),
    ("dpo", {"task": {"name": "arithmetic_pairs", "n": 8}}),
    ("ipo", {"task": {"name": "arithmetic_pairs", "n": 8}, "beta": 0.5}),
    ("kto", {"task": {"name": "arithmetic_unpaired", "n": 8}, "batch_size": 4}),
    ("orpo", {"task": {"name": "arithmetic_pairs", "n": 8, "options": {"conversational": True}}}),
]


def write(path, data):
    path.write_text(yaml.safe_dump(data))
    return str(path)


@pytest.mark.parametrize(("algorithm", "extra"), CASES)
def test_train_each_algorithm_writes_metrics(tiny_model_dir, tmp_path, capsys, algorithm, extra):
    log = tmp_path / f"{algorithm}.jsonl"
    config = write(tmp_path / "c.yaml", {"model": str(tiny_model_dir), **SMALL, **extra, "log_file": str(log)})
    assert main(["train", algorithm, "--config", config]) == 0
    summary = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert summary["algorithm"] == algorithm and summary["steps"] == 2
    lines = [json.loads(line) for line in log.read_text().splitlines()]
    assert [r["step"] for r in lines] == [1, 2] and all("loss" in r for r in lines)
    if algorithm == "grpo":
        assert "reward" in lines[0] and "rewards/character_share" in lines[0]  # the task's default reward
    if algorithm == "ipo":  # policy == reference at step 1: (0 - 1/(2*0.5))^2 = 1
        assert lines[0]["loss"] == pytest.approx(1.0, abs=1e-5)
    if algorithm == "dpo":
        assert lines[0]["loss"] == pytest.approx(0.6931, abs=1e-3)


def test_train_from_data_file_and_overrides(tiny_model_dir, tmp_path, capsys):
    from rewardsmith.adapters.demo.tasks import arithmetic_pairs

    data = tmp_path / "pairs.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in [r | {"judge_model": "smol"} for r in arithmetic_pairs(6)]))
    config = write(tmp_path / "c.yaml", {"model": str(tiny_model_dir), **SMALL, "data": str(data)})
    out_dir, log = tmp_path / "model", tmp_path / "m.jsonl"
    assert (
        main(
            [
                "train",
                "dpo",
                "--config",
                config,
                "--max-steps",
                "3",
                "--log-file",
                str(log),
                "--output-dir",
                str(out_dir),
            ]
        )
        == 0
    )
    assert len(log.read_text().splitlines()) == 3
    assert (out_dir / "config.json").exists() and (out_dir / "tokenizer.json").exists()


@pytest.mark.parametrize(
    ("algorithm", "config", "message"),
    [
        ("grpo", {"task": {"name": "digit_run"}, "num_generation": 4}, "num_generation"),
        ("dpo", {"task": {"name": "digit_run"}}, "needs pair rows"),
        ("kto", {}, "exactly one of 'data' or 'task'"),
        ("grpo", {"task": {"name": "digit_run"}, "rewards": ["no_such_reward"]}, "no_such_reward"),
        ("orpo", {"task": {"name": "arithmetic_pairs"}, "beta": -1}, "beta"),
        ("grpo", {"data": "x.jsonl"}, "needs 'rewards'"),
    ],
)
def test_invalid_configs_exit_2_with_the_reason(tmp_path, capsys, algorithm, config, message):
    (tmp_path / "x.jsonl").write_text('{"prompt": "p"}\n')
    if "data" in config:
        config = {**config, "data": str(tmp_path / "x.jsonl")}
    path = write(tmp_path / "bad.yaml", {"model": "tiny", **config})
    assert main(["train", algorithm, "--config", path]) == 2
    assert message in capsys.readouterr().err


def test_console_entry_point(tmp_path):
    config = write(
        tmp_path / "c.yaml", {"model": "tiny", **SMALL, "max_steps": 1, "task": {"name": "arithmetic_unpaired", "n": 4}}
    )
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    proc = subprocess.run(
        [sys.executable, "-m", "rewardsmith", "train", "kto", "--config", config],
        capture_output=True,
        text=True,
        timeout=240,
        env=env,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert json.loads(proc.stdout.strip().splitlines()[-1])["steps"] == 1
