"""Ctrl-C on a long command: a real SIGINT to a real ``rewardsmith`` process says what was saved and the exact
command that resumes, and the process ends promptly with 130; the resumed run says where it resumed from."""

from __future__ import annotations

import os
import re
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from rewardsmith.cli.interrupts import command_line, count_records, stores_saved
from rewardsmith.cli.train import checkpoint_saved, resume_line
from tests.docs.runner import unmet_need

#: Seconds from SIGINT to exit that count as prompt: the C call Python finishes before it sees the signal (a
#: generation step, a request) on a loaded machine. A normal interpreter exit took 8-19 s.
PROMPT_S = 5.0
ENV = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"}


def start(argv: list[str], cwd: Path) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "rewardsmith", *argv],
        cwd=cwd,
        env=ENV,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=_hear_ctrl_c,
    )


def _hear_ctrl_c() -> None:
    """A shell's background job ignores SIGINT and its children inherit that: hand the child the default back, as
    a terminal's foreground process has it."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def interrupt_when(proc: subprocess.Popen, ready, timeout: float = 240) -> tuple[str, float]:
    """SIGINT once ``ready()`` holds; the process's stderr and the seconds it took to end after the signal."""
    deadline = time.monotonic() + timeout
    while not ready():
        assert proc.poll() is None, f"ended before it could be interrupted: {proc.communicate()}"
        assert time.monotonic() < deadline, "never got ready"
        time.sleep(0.1)
    sent = time.monotonic()
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    return err, time.monotonic() - sent


def resume_argv(stderr: str) -> list[str]:
    (line,) = [line for line in stderr.splitlines() if line.startswith("resume with: ")]
    words = shlex.split(line.removeprefix("resume with: "))
    assert words[0] == "rewardsmith"
    return words[1:]


def test_the_resume_line_is_the_command_as_typed():
    argv = ["rlaif", "pairs", "--data", "my prompts.jsonl", "--out", "o"]
    assert shlex.split(command_line(argv)) == ["rewardsmith", *argv]
    assert command_line(["train", "grpo", "--overwrite"], drop=["--overwrite"], add=["--resume"]) == (
        "rewardsmith train grpo --resume"
    )


def test_saved_counts_complete_records_only(tmp_path):
    store = tmp_path / "pairs.jsonl"
    assert stores_saved([(store, "judged pairs")]) == "nothing was saved yet"
    store.write_text('{"key": "a"}\n{"key": "b"}\n{"key": "c"')  # a torn last line is no record
    assert count_records(store) == 2
    assert stores_saved([(store, "judged pairs")]) == f"2 judged pairs in {store} (saved)"


@pytest.mark.slow
def test_ctrl_c_on_training_names_the_checkpoint_and_the_resume_command(tmp_path):
    pytest.importorskip("torch")
    config = tmp_path / "grpo.yaml"
    config.write_text(
        "model: tiny\ntask: {name: digit_run, n: 64}\nnum_generations: 4\nmax_completion_length: 8\n"
        "max_steps: 500\nnum_threads: 1\noutput_dir: out\nsave_steps: 1\n"
    )
    argv = ["train", "grpo", "--config", str(config)]
    proc = start(argv, tmp_path)
    err, took = interrupt_when(proc, lambda: any((tmp_path / "out").glob("checkpoint-*")))
    assert proc.returncode == 130, err
    assert took < PROMPT_S, f"{took:.1f}s to exit after Ctrl-C"
    match = re.search(r"interrupted: newest checkpoint: (\S+checkpoint-(\d+)) \(step (\d+)\)", err)
    assert match, err
    step = int(match[3])
    assert resume_argv(err) == [*argv, "--resume"]

    resumed = subprocess.run(
        [sys.executable, "-m", "rewardsmith", *resume_argv(err), "--max-steps", str(step + 1)],
        cwd=tmp_path,
        env=ENV,
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert resumed.returncode == 0, resumed.stderr
    assert f"resuming from {match[1]} (step {step} of {step + 1})" in resumed.stderr


@pytest.mark.parametrize(
    ("save_steps", "checkpoint", "saved", "resume"),
    [
        (0, False, "no checkpoint saved (save_steps is 0: --save-steps N checkpoints every N steps)", "starts again"),
        (5, False, "no checkpoint saved yet (the first comes at step 5)", "starts again"),
        (5, True, "newest checkpoint: ", "--resume"),
    ],
)
def test_what_an_interrupted_training_run_says(tmp_path, save_steps, checkpoint, saved, resume):
    if checkpoint:
        from rewardsmith.adapters.mini.checkpoints import INFO_FILE, STATE_FILE

        (tmp_path / "checkpoint-000005").mkdir()
        for name in (INFO_FILE, STATE_FILE):
            (tmp_path / "checkpoint-000005" / name).write_text("{}")
    config = SimpleNamespace(output_dir=str(tmp_path), save_steps=save_steps, resume=False, max_steps=9)
    assert checkpoint_saved(config).startswith(saved)
    assert resume in resume_line(config)


@pytest.mark.slow
@pytest.mark.llama
def test_ctrl_c_on_rlaif_pairs_says_what_was_judged_and_the_rerun_resumes_from_it(tmp_path):
    reason = unmet_need("llama")
    if reason:
        pytest.skip(reason)
    argv = ["rlaif", "pairs", "--demo", "--out", "pairs", "--no-progress"]
    store = tmp_path / "pairs" / "state" / "pairs.jsonl"
    proc = start(argv, tmp_path)
    err, took = interrupt_when(proc, lambda: count_records(store) >= 2)
    assert proc.returncode == 130, err
    assert took < PROMPT_S, f"{took:.1f}s to exit after Ctrl-C"
    saved = re.search(r"interrupted: (\d+) judged pairs in (\S+) \(saved\)", err)
    assert saved and Path(tmp_path / saved[2]).resolve() == store.resolve(), err
    assert resume_argv(err) == argv

    resumed = subprocess.run(
        [sys.executable, "-m", "rewardsmith", *argv], cwd=tmp_path, env=ENV, capture_output=True, text=True, timeout=300
    )
    assert resumed.returncode == 0, resumed.stderr
    assert f"resuming from {saved[1]} judged pairs in {saved[2]}" in resumed.stderr
    assert "pairs: 20 compared" in resumed.stdout
