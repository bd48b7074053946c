"""Mini-trainer checkpoints: an interrupted and resumed run ends where an uninterrupted one does.

Every run is seeded on one torch thread, so "the same run" means bit-identical weights, not merely close ones.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from tests.support.extras import require_extras

require_extras("trl")

import torch
import yaml
from safetensors.torch import load_file

from rewardsmith.adapters.demo.tasks import CharacterShare, digit_run
from rewardsmith.adapters.mini.checkpoints import list_checkpoints
from rewardsmith.adapters.mini.grpo import train_grpo
from rewardsmith.cli.main import main

pytestmark = pytest.mark.slow

STEPS = 6
DPO = {
    "task": {"name": "arithmetic_pairs", "n": 8},
    "batch_size": 3,  # 8 rows / 3: the feed wraps mid-epoch, so the cursor state matters
    "learning_rate": 1e-2,
    "progress": False,
    "num_threads": 1,
    "seed": 1,
}


def write_config(path, model_dir, **extra):
    path.write_text(yaml.safe_dump({"model": str(model_dir), **DPO, **extra}))
    return str(path)


def steps_in(log):
    return [json.loads(line)["step"] for line in log.read_text().splitlines()]


def weights(directory):
    return load_file(str(directory / "model.safetensors"))


def assert_same_weights(a, b):
    wa, wb = weights(a), weights(b)
    assert wa.keys() == wb.keys()
    assert all(torch.equal(wa[k], wb[k]) for k in wa), [k for k in wa if not torch.equal(wa[k], wb[k])]


@pytest.fixture(scope="module")
def uninterrupted(tiny_model_dir, tmp_path_factory):
    """DPO for STEPS steps in one go: the weights every resumed run must reproduce."""
    root = tmp_path_factory.mktemp("straight")
    config = write_config(root / "c.yaml", tiny_model_dir, max_steps=STEPS, output_dir=str(root / "out"))
    assert main(["train", "dpo", "--config", config, "--log-file", str(root / "log.jsonl")]) == 0
    assert steps_in(root / "log.jsonl") == list(range(1, STEPS + 1))
    return root / "out"


def test_stop_and_resume_matches_uninterrupted_run(tiny_model_dir, tmp_path, uninterrupted, capsys):
    log, out = tmp_path / "log.jsonl", tmp_path / "out"
    config = write_config(tmp_path / "c.yaml", tiny_model_dir, output_dir=str(out), log_file=str(log), save_steps=2)
    assert main(["train", "dpo", "--config", config, "--max-steps", "3"]) == 0
    assert [s for s, _ in list_checkpoints(out)] == [3]  # step 2, then the last step; only the newest is kept
    assert main(["train", "dpo", "--config", config, "--max-steps", str(STEPS), "--resume"]) == 0
    summary = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert summary["steps"] == STEPS
    assert steps_in(log) == list(range(1, STEPS + 1))
    assert [s for s, _ in list_checkpoints(out)] == [STEPS]
    assert_same_weights(out, uninterrupted)
    assert_same_weights(out / f"checkpoint-{STEPS:06d}", uninterrupted)


def test_checkpoint_guards(tiny_model_dir, tmp_path, capsys):
    out = tmp_path / "out"
    config = write_config(tmp_path / "c.yaml", tiny_model_dir, output_dir=str(out), save_steps=1, max_steps=1)
    assert main(["train", "dpo", "--config", config]) == 0
    assert main(["train", "dpo", "--config", config]) == 2  # would silently mix two runs
    assert "--resume" in capsys.readouterr().err
    changed = write_config(tmp_path / "d.yaml", tiny_model_dir, output_dir=str(out), max_steps=2, beta=0.5)
    assert main(["train", "dpo", "--config", changed, "--resume"]) == 2
    assert "beta" in capsys.readouterr().err
    assert main(["train", "dpo", "--config", changed, "--overwrite", "--save-steps", "2"]) == 0
    assert [s for s, _ in list_checkpoints(out)] == [2]
    no_dir = write_config(tmp_path / "e.yaml", tiny_model_dir, save_steps=1)
    assert main(["train", "dpo", "--config", no_dir]) == 2
    assert "need output_dir" in capsys.readouterr().err


def test_resume_skips_a_torn_save_and_unsaved_log_lines(tiny_model_dir, tmp_path, uninterrupted):
    """What a kill mid-save leaves: a temporary folder, log records past the checkpoint, a torn last line."""
    log, out = tmp_path / "log.jsonl", tmp_path / "out"
    config = write_config(tmp_path / "c.yaml", tiny_model_dir, output_dir=str(out), log_file=str(log), save_steps=2)
    assert main(["train", "dpo", "--config", config, "--max-steps", "2"]) == 0
    torn = out / ".checkpoint-000004.abc.tmp"
    torn.mkdir()
    (torn / "trainer_state.json").write_text('{"step": 4')
    with log.open("a") as fh:
        fh.write(json.dumps({"step": 3, "loss": 9.0}) + "\n" + '{"step": 4, "lo')
    assert main(["train", "dpo", "--config", config, "--max-steps", str(STEPS), "--resume"]) == 0
    records = [json.loads(line) for line in log.read_text().splitlines()]
    assert [r["step"] for r in records] == list(range(1, STEPS + 1))
    assert records[2]["loss"] != 9.0
    assert not torn.exists()
    assert_same_weights(out, uninterrupted)


def test_sigkill_then_resume(tiny_model_dir, tmp_path, uninterrupted):
    """A real SIGKILL after step 4 is logged (checkpoint at 3): the resumed run retrains 4 and matches."""
    log, out = tmp_path / "log.jsonl", tmp_path / "out"
    config = write_config(tmp_path / "c.yaml", tiny_model_dir, output_dir=str(out), log_file=str(log), save_steps=3)
    command = [sys.executable, "-m", "rewardsmith", "train", "dpo", "--config", config, "--resume"]
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    proc = subprocess.Popen([*command, "--max-steps", "1000"], env=env, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    try:
        while time.monotonic() < deadline and proc.poll() is None:
            if log.exists() and len(steps_in_safe(log)) >= 4:
                break
            time.sleep(0.005)
        proc.send_signal(signal.SIGKILL)
    finally:
        proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL
    killed_at = len(steps_in_safe(log))
    assert killed_at >= 4 and list_checkpoints(out), killed_at
    resumed = subprocess.run(
        [*command, "--max-steps", str(STEPS)], env=env, capture_output=True, text=True, timeout=180
    )
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    saved = list_checkpoints(out)[-1][0]
    assert steps_in(log) == list(range(1, max(saved, STEPS) + 1))
    if saved <= STEPS:  # the kill landed before the run passed STEPS: its end state is the uninterrupted one
        assert_same_weights(out, uninterrupted)


def steps_in_safe(log):
    """Steps of the complete lines only (the writer may be mid-line)."""
    text = log.read_text()
    return [json.loads(line)["step"] for line in text.split("\n")[:-1]]


def test_grpo_resume_inside_a_generation_round(tiny_model_dir, tmp_path):
    """num_iterations=2, a stop after step 3: the saved round finishes, and the next one samples the same."""
    base = {
        "model": str(tiny_model_dir),
        "learning_rate": 1e-2,
        "batch_size": 2,
        "num_generations": 4,
        "max_completion_length": 8,
        "num_iterations": 2,
        "progress": False,
        "seed": 2,
    }
    rows = digit_run(8)
    straight = train_grpo({**base, "max_steps": 6, "output_dir": str(tmp_path / "a")}, rows, CharacterShare())
    first = {**base, "max_steps": 3, "save_steps": 1, "output_dir": str(tmp_path / "b")}
    train_grpo(first, rows, CharacterShare())
    resumed = train_grpo({**first, "max_steps": 6, "resume": True}, rows, CharacterShare())
    assert [h["step"] for h in resumed] == [1, 2, 3, 4, 5, 6]
    assert [h["loss"] for h in resumed] == [h["loss"] for h in straight]
    assert_same_weights(tmp_path / "b", tmp_path / "a")
