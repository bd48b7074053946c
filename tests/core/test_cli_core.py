"""The core CLI verbs, run as a user runs them: ``python -m rewardsmith`` in a subprocess."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from importlib.resources import files
from pathlib import Path

import pytest

from rewardsmith import get_reward
from tests.support.names import CORE_REWARD_NAMES

SAMPLE = files("rewardsmith") / "samples" / "scoring_demo.jsonl"


def run_cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "HF_DATASETS_OFFLINE": "1", "HF_HUB_OFFLINE": "1", "HF_DATASETS_CACHE": str(cwd / "hf-cache")}
    return subprocess.run(
        [sys.executable, "-m", "rewardsmith", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=180
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
    for name in CORE_REWARD_NAMES:
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
    assert [r["row_index"] for r in scored] == list(range(30))
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
    args = ("score", "--reward", "route", "--config", f"@{spec}", "--data", str(SAMPLE), "--out", str(out))
    proc = run_cli(*args, cwd=tmp_path)
    assert proc.returncode == 2 and "was scored by 'think_format@" in proc.stderr  # never mixes two scorers
    proc = run_cli(*args, "--overwrite", cwd=tmp_path)
    assert proc.returncode == 1, proc.stderr  # unrouted rows are unscorable: the run says how many, and why
    assert proc.stderr.strip().splitlines()[-1].startswith("rewardsmith: 9 of 30 samples unscorable: ")
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


# -- unreadable data: one line naming the file (and the line), exit 2 ---------------------------------------
BAD_DATA = [
    (
        "bad.jsonl",
        '{"completion": "a"}\n{"completion": "b"\n{"completion": "c"}\n',
        "bad.jsonl: line 2: not valid JSON",
    ),
    ("list.jsonl", '{"completion": "a"}\n\n[1, 2]\n', "list.jsonl: line 3: a JSON list, not an object"),
    ("bytes.jsonl", b'{"completion": "a"}\n{"completion": "\xff"}\n', "bytes.jsonl: line 2: not UTF-8 text"),
    ("doc.json", '[{"completion": "a"},\n {"completion": "b"}\n', "doc.json: line 3, column 1: not valid JSON"),
    ("rows.json", '{"completion": "a"}\n{"completion": }\n', "rows.json: line 2: not valid JSON"),
    ("quote.csv", 'completion,x\n"a,1\n', "quote.csv: cannot read as csv: "),
    ("junk.parquet", "not a parquet file", "junk.parquet: cannot read as parquet: "),
]


@pytest.mark.parametrize(("name", "content", "message"), BAD_DATA, ids=[b[0] for b in BAD_DATA])
def test_unreadable_data_exits_2_with_one_line(tmp_path, name, content, message):
    data = tmp_path / name
    data.write_bytes(content if isinstance(content, bytes) else content.encode())
    out = tmp_path / "out.jsonl"
    proc = run_cli("score", "--reward", "think_format", "--data", str(data), "--out", str(out), cwd=tmp_path)
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [proc.stderr.strip()]  # one line, no traceback, no progress bars
    assert proc.stderr.startswith("rewardsmith: error: ") and message in proc.stderr, proc.stderr
    assert not out.exists()


def test_read_records_raises_value_error_naming_the_file(tmp_path):
    from rewardsmith.data import read_records

    data = tmp_path / "bad.jsonl"
    data.write_text('{"a": 1}\n{"a": NaN\n')
    with pytest.raises(ValueError, match=r"bad.jsonl: line 2: not valid JSON"):
        read_records(data)


# -- score appends per batch and resumes -------------------------------------------------------------------
def scored_lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_score_resumes_after_a_torn_write(tmp_path):
    fresh, out = tmp_path / "fresh.jsonl", tmp_path / "out.jsonl"
    base = ("score", "--reward", "think_format", "--data", str(SAMPLE), "--batch-size", "4")
    assert run_cli(*base, "--out", str(fresh), cwd=tmp_path).returncode == 0
    lines = fresh.read_text().splitlines(keepends=True)
    out.write_text("".join(lines[:8]) + lines[8][:25])  # two batches on disk, the third torn mid-row
    proc = run_cli(*base, "--out", str(out), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "resuming: 8 of 30 rows already scored" in proc.stdout
    assert scored_lines(out) == scored_lines(fresh)
    summary = next(
        line for line in run_cli(*base, "--out", str(fresh), cwd=tmp_path).stdout.splitlines() if "->" in line
    )
    assert summary.replace(str(fresh), "") in proc.stdout.replace(str(out), "")  # the summary counts all 30 rows


def test_score_overwrite_starts_again(tmp_path):
    out = tmp_path / "out.jsonl"
    base = ("score", "--reward", "think_format", "--data", str(SAMPLE), "--out", str(out))
    assert run_cli(*base, cwd=tmp_path).returncode == 0
    proc = run_cli(*base, "--config", '{"answer_tag": "answer"}', "--overwrite", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "resuming" not in proc.stdout
    scored = scored_lines(out)
    assert [r["row_index"] for r in scored] == list(range(30)) and sum(r["score"] for r in scored) == 2.0


@pytest.mark.parametrize(
    ("existing", "message"),
    [
        ('{"completion": "x", "score": 1.0}\n', "line 1 is not a score row of this data"),
        ('{"completion": "x", "score": 1.0, "row_index": 99}\n', "line 1 is not a score row of this data"),
        (
            '{"completion": "x", "score": 1.0, "row_index": 0, "scorer": "SCORER"}\n',
            "row 0 was scored from a different",
        ),
        ('{"completion": "x", "score": 1.0, "row_index": 0, "scorer": "tag_count@1"}\n', "scored by 'tag_count@1'"),
        ('{"completion": "x", "score": "high", "row_index": 0}\n', "line 1 is not a score row"),
        ("not json\n", "line 1 is not a JSON row"),
    ],
)
def test_score_refuses_to_mix_runs(tmp_path, existing, message):
    from rewardsmith.scoring import scorer_id

    out = tmp_path / "out.jsonl"
    existing = existing.replace("SCORER", scorer_id("think_format", {}, "completion"))
    out.write_text(existing)
    proc = run_cli("score", "--reward", "think_format", "--data", str(SAMPLE), "--out", str(out), cwd=tmp_path)
    assert proc.returncode == 2 and message in proc.stderr and "Traceback" not in proc.stderr, proc.stderr
    assert out.read_text() == existing


def test_score_killed_mid_run_keeps_its_batches_and_resumes(tmp_path):
    """A real crash: SIGKILL after the first batch is on disk; the rerun scores only what is missing."""
    data, out = tmp_path / "slow.jsonl", tmp_path / "out.jsonl"
    rows = [{"completion": "a" * 5000 + "b", "i": i} for i in range(6)]
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    config = json.dumps({"pattern": "(a|aa)+$", "timeout_s": 0.4})  # each sample times out after 0.4 s
    args = ("score", "--reward", "regex_match", "--config", config, "--data", str(data), "--out", str(out))
    env = {**os.environ, "HF_DATASETS_OFFLINE": "1", "HF_HUB_OFFLINE": "1", "HF_DATASETS_CACHE": str(tmp_path / "hf")}
    proc = subprocess.Popen(
        [sys.executable, "-m", "rewardsmith", *args, "--batch-size", "2"],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and proc.poll() is None:
            if out.exists() and out.read_text().count("\n") >= 2:
                break
            time.sleep(0.02)
        proc.send_signal(signal.SIGKILL)
    finally:
        proc.wait(timeout=30)
    written = scored_lines(out)
    assert 2 <= len(written) < 6 and [r["row_index"] for r in written] == list(range(len(written)))
    rerun = run_cli(*args, cwd=tmp_path)
    assert rerun.returncode == 0, rerun.stderr
    assert f"resuming: {len(written)} of 6 rows" in rerun.stdout
    assert "6 samples: 6 scored (mean 0.0000), 0 unscorable" in rerun.stdout
    final = scored_lines(out)
    assert sorted(r["row_index"] for r in final) == list(range(6)) and final[: len(written)] == written
    assert all(r["score"] == 0.0 and "timeout_s=0.4" in r["reason"] for r in final)
