"""The core CLI verbs, run as a user runs them: ``python -m rewardkit`` in a subprocess."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from importlib.resources import files
from pathlib import Path

import pytest

from rewardkit import get_reward

SAMPLE = files("rewardkit") / "samples" / "scoring_demo.jsonl"


def run_cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "HF_DATASETS_OFFLINE": "1", "HF_HUB_OFFLINE": "1", "HF_DATASETS_CACHE": str(cwd / "hf-cache")}
    return subprocess.run(
        [sys.executable, "-m", "rewardkit", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=180
    )


def sample_rows() -> list[dict]:
    return [json.loads(line) for line in SAMPLE.read_text().splitlines() if line.strip()]


def test_sample_file_mixes_good_and_bad_formats():
    rows = sample_rows()
    assert len(rows) == 30
    assert all(set(row) == {"prompt", "completion", "solution", "task"} for row in rows)
    scores = get_reward("think_format")([row["completion"] for row in rows])
    assert 8 <= scores.count(1.0) <= 22 and scores.count(0.0) + scores.count(1.0) == 30


def test_rewards_list(tmp_path):
    proc = run_cli("rewards", "list", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    think = next(line for line in lines if line.startswith("think_format "))
    assert "reasoning block followed by a non-empty answer" in think
    assert any(line.strip().startswith("answer_tag:") for line in lines)

    proc = run_cli("rewards", "list", "--json", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    listed = {row["name"]: row for row in json.loads(proc.stdout)}
    for name in (
        "think_format",
        "tag_count",
        "regex_match",
        "json_schema",
        "soft_overlong",
        "cosine_length",
        "repetition_penalty",
        "weighted_sum",
        "gate",
        "route",
    ):
        assert name in listed
    assert set(listed["soft_overlong"]["config"]) == {"max_length", "buffer", "unit"}


def test_score_writes_rows_scores_and_reasons(tmp_path):
    out = tmp_path / "scored.jsonl"
    proc = run_cli("score", "--reward", "think_format", "--data", str(SAMPLE), "--out", str(out), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    rows = sample_rows()
    expected = get_reward("think_format").details([row["completion"] for row in rows])
    scored = [json.loads(line) for line in out.read_text().splitlines()]
    assert [{k: r[k] for k in ("prompt", "completion", "solution", "task")} for r in scored] == rows
    assert [r["score"] for r in scored] == [e.score for e in expected]
    assert [r["reason"] for r in scored] == [e.reason for e in expected]
    good = sum(e.score for e in expected)
    assert f"30 samples: 30 scored (mean {good / 30:.4f}), 0 unscorable -> {out}" in proc.stdout


def test_score_with_config_and_composite(tmp_path):
    out = tmp_path / "scored.jsonl"
    config = json.dumps({"answer_tag": "answer"})
    proc = run_cli(
        "score", "--reward", "think_format", "--config", config, "--data", str(SAMPLE), "--out", str(out), cwd=tmp_path
    )
    assert proc.returncode == 0, proc.stderr
    scored = [json.loads(line) for line in out.read_text().splitlines()]
    assert sum(r["score"] for r in scored) == 2.0  # only the two rows with a non-empty <answer> block
    assert "found 0 <answer> and 0 </answer>, expected 1 each" in {r["reason"] for r in scored}

    spec = tmp_path / "routed.yaml"
    spec.write_text(
        "column: task\n"
        "routes:\n"
        "  math: think_format\n"
        "  json: {name: json_schema, config: {json_schema: {type: object, required: [name, age],"
        " properties: {age: {type: integer}}}}}\n"
    )
    proc = run_cli(
        "score", "--reward", "route", "--config", f"@{spec}", "--data", str(SAMPLE), "--out", str(out), cwd=tmp_path
    )
    assert proc.returncode == 0, proc.stderr
    scored = [json.loads(line) for line in out.read_text().splitlines()]
    by_task = {task: [r["score"] for r in scored if r["task"] == task] for task in ("json", "code", "chat")}
    assert by_task["json"] == [1.0, 0.0]
    assert set(by_task["code"]) == {None} and set(by_task["chat"]) == {None}
    assert "9 unscorable" in proc.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["score", "--reward", "think_fromat"], "unknown reward 'think_fromat'. Did you mean 'think_format'?"),
        (["score", "--reward", "think_format", "--config", "{not json"], "--config is not valid JSON"),
        (["score", "--reward", "think_format", "--config", '{"think_tagg": 1}'], "think_tagg: Extra inputs"),
        (["score", "--reward", "regex_match", "--config", '{"pattern": "("}'], "invalid pattern"),
    ],
)
def test_score_errors_exit_2_with_a_clear_message(tmp_path, args, message):
    out = tmp_path / "out.jsonl"
    proc = run_cli(*args, "--data", str(SAMPLE), "--out", str(out), cwd=tmp_path)
    assert proc.returncode == 2
    assert message in proc.stderr
    assert "Traceback" not in proc.stderr
    assert not out.exists()


def test_score_missing_data_file_exits_2(tmp_path):
    proc = run_cli("score", "--reward", "think_format", "--data", "nope.jsonl", "--out", "o.jsonl", cwd=tmp_path)
    assert proc.returncode == 2
    assert "no such data file" in proc.stderr
