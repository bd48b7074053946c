"""``rewardsmith grade``: one completion scored by a spec, written as Harbor's verifier files.

The verdict table runs the command in this process (reward, exit status, what lies in the verifier folder). The
Harbor tests build real task folders (``task.toml``, ``instruction.md``, ``tests/test.sh`` calling the command)
and run them with Harbor's own ``Verifier`` (harbor 0.26, Python >= 3.12: its own virtual environment,
``$REWARDSMITH_HARBOR_VENV``, default ``/opt/rewardsmith-harbor``) in a bubblewrap container whose only
rewardsmith is this checkout's ``rewardsmith`` command; what Harbor records is the result.
"""

from __future__ import annotations

import io
import json
import math
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from rewardsmith.adapters.protocols.verdict import TermVerdict, Verdict
from rewardsmith.cli.main import main
from rewardsmith.types import RewardResult

ROOT = Path(__file__).resolve().parents[2]
HARBOR_VENV = Path(os.environ.get("REWARDSMITH_HARBOR_VENV", "/opt/rewardsmith-harbor"))
SPEC = "rewards:\n  - {name: math_equivalence, weight: 1.0}\n  - {name: think_format, weight: 0.25}\n"

#: (completion bytes, gold row, expected reward (None: unscorable, no reward file), exit status, why)
TABLE = [
    (b"<think>2 and 2</think> \\boxed{4}", {"solution": "4"}, 1.25, 0, "right answer, well formatted: 1 + 0.25"),
    (b"<think>hm</think> \\boxed{5}", {"solution": "4"}, 0.25, 0, "wrong answer, well formatted"),
    (b"\\boxed{\\frac{1}{2}}", {"solution": "0.5"}, 1.0, 0, "right answer, no reasoning block"),
    (b"<think>\xff\xfe</think> \\boxed{4}", {"solution": "4"}, 1.25, 0, "bytes that are not UTF-8 are read as U+FFFD"),
    (b"", {"solution": "4"}, 0.0, 0, "an empty completion is wrong, not unscorable"),
    (b"<think>x</think> \\boxed{4}", {}, None, 1, "no gold: unscorable, never a 0"),
    (b"<think>x</think> \\boxed{4}", {"solution": ""}, None, 1, "an empty gold is no gold"),
]


@pytest.fixture
def spec(tmp_path: Path) -> Path:
    path = tmp_path / "spec.yaml"
    path.write_text(SPEC)
    return path


def grade(spec: Path, out: Path, completion: bytes, *extra: str) -> int:
    answer = out.parent / "answer.txt"
    answer.write_bytes(completion)
    return main(["grade", "--spec", str(spec), "--completion", str(answer), "--out", str(out), *extra])


@pytest.mark.parametrize(("completion", "row", "expected", "status", "why"), TABLE, ids=[t[4] for t in TABLE])
def test_verdict_table(spec, tmp_path, completion, row, expected, status, why):
    out = tmp_path / "verifier"
    assert grade(spec, out, completion, "--row", json.dumps(row)) == status
    reason = json.loads((out / "reason.json").read_text())
    assert reason["reward"] == expected
    if expected is None:
        assert not (out / "reward.json").exists()
        assert reason["unscorable"] and "math_equivalence" in reason["reason"]
        assert reason["components"]["math_equivalence"] is None
    else:
        assert json.loads((out / "reward.json").read_text()) == {"reward": expected}
        assert set(reason["components"]) == {"math_equivalence", "think_format"}


def test_unscorable_removes_a_reward_the_script_wrote_earlier(spec, tmp_path):
    out = tmp_path / "verifier"
    out.mkdir()
    (out / "reward.txt").write_text("0\n")  # a task's fallback line before the grader runs
    (out / "reward.json").write_text('{"reward": 0}')
    assert grade(spec, out, b"\\boxed{4}", "--row", "{}") == 1
    assert sorted(p.name for p in out.iterdir()) == ["reason.json"]


def test_completion_too_big_scores_zero_unread(spec, tmp_path):
    out = tmp_path / "verifier"
    big = b"\\boxed{4} " * 20_000  # 200,000 bytes over a 0.1 MiB limit
    assert grade(spec, out, big, "--row", '{"solution": "4"}', "--max-completion-mb", "0.1") == 0
    reason = json.loads((out / "reason.json").read_text())
    assert reason["reward"] == 0.0 and "over 104857 bytes" in reason["reason"]


def test_completion_from_stdin_and_row_from_file(spec, tmp_path, monkeypatch, capsys):
    row = tmp_path / "row.json"
    row.write_text('{"solution": "4"}')
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"<think>a</think> \\boxed{4}")))
    out = tmp_path / "verifier"
    assert main(["grade", "--spec", str(spec), "--row-file", str(row), "--out", str(out)]) == 0
    assert json.loads((out / "reward.json").read_text()) == {"reward": 1.25}
    assert f"reward 1.25 -> {out / 'reward.json'}" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--row", "[1, 2]"], "--row: a JSON list, not an object of gold columns"),
        (["--row", "{'solution': 4}"], "--row: not valid JSON"),
        (["--row", '{"completions": "x"}'], "'completions' cannot be a column"),
        (["--max-completion-mb", "0"], "--max-completion-mb must be positive"),
    ],
)
def test_usage_errors_exit_2_and_leave_no_reward(spec, tmp_path, capsys, args, message):
    out = tmp_path / "verifier"
    out.mkdir()
    (out / "reward.txt").write_text("0\n")
    assert grade(spec, out, b"\\boxed{4}", *args) == 2
    assert message in capsys.readouterr().err
    assert not (out / "reward.txt").exists() and not (out / "reward.json").exists()


def test_a_missing_completion_file_is_an_error_unless_said_to_be_empty(spec, tmp_path, capsys):
    out, missing = tmp_path / "verifier", str(tmp_path / "nothing.txt")
    argv = ["grade", "--spec", str(spec), "--completion", missing, "--row", '{"solution": "4"}', "--out", str(out)]
    assert main(argv) == 2
    assert f"cannot read {missing}: No such file or directory" in capsys.readouterr().err
    assert main([*argv, "--missing-as-empty"]) == 0
    assert json.loads((out / "reward.json").read_text()) == {"reward": 0.0}
    assert main([*argv[:3], "--completion", str(tmp_path), *argv[5:]]) == 2  # a folder: unreadable, exit 2
    assert "cannot read" in capsys.readouterr().err


def test_an_out_folder_that_cannot_be_written_exits_2(spec, tmp_path, capsys):
    blocker = tmp_path / "verifier"
    blocker.write_text("a file where the folder should be")
    assert grade(spec, blocker, b"\\boxed{4}", "--row", '{"solution": "4"}') == 2
    assert f"cannot write the verdict to {blocker}" in capsys.readouterr().err


def test_a_spec_that_does_not_load_exits_2(tmp_path, capsys):
    bad = tmp_path / "spec.yaml"
    bad.write_text("rewards:\n  - name: math_equivalance\n")
    assert grade(bad, tmp_path / "verifier", b"x", "--row", "{}") == 2
    assert "math_equivalance" in capsys.readouterr().err


def test_a_non_finite_term_score_is_unscorable():
    term = TermVerdict.of("odd", 1.0, RewardResult(score=math.nan, reason="a broken reward"))
    verdict = Verdict((term, TermVerdict("think_format", 0.25, 1.0, "well formatted")))
    assert verdict.reward is None
    assert verdict.reason.startswith("unscorable: odd: the reward returned nan")


# -- Harbor's own verifier ----------------------------------------------------------------------------------
TEST_SH = """#!/bin/bash
set -euo pipefail
echo 0 > /logs/verifier/reward.txt  # a fallback: must not stand for an unscorable sample
rewardsmith grade --spec /tests/spec.yaml --completion /app/answer.txt --row-file /tests/row.json
"""


def task_folder(root: Path, row: dict) -> Path:
    """A Harbor task as ``harbor tasks init`` lays it out, graded by ``rewardsmith grade``."""
    (root / "tests").mkdir(parents=True)
    (root / "environment").mkdir()
    (root / "instruction.md").write_text("What is 2 + 2? Write your answer to /app/answer.txt.\n")
    (root / "task.toml").write_text('version = "1.0"\n\n[verifier]\ntimeout_sec = 120.0\n')
    (root / "environment" / "Dockerfile").write_text("FROM python:3.11-slim\nRUN pip install rewardsmith\n")
    (root / "tests" / "test.sh").write_text(TEST_SH)
    (root / "tests" / "spec.yaml").write_text(SPEC)
    (root / "tests" / "row.json").write_text(json.dumps(row))
    return root


@pytest.mark.slow
def test_harbor_reads_the_reward_and_records_no_reward_for_an_unscorable_sample(tmp_path):
    python = HARBOR_VENV / "bin" / "python"
    if not python.exists():
        pytest.skip(f"no harbor environment at {HARBOR_VENV} (python3.12 -m venv; pip install harbor==0.26.0)")
    if shutil.which("bwrap") is None:
        pytest.skip("bubblewrap (bwrap) is not installed")
    cases = [({"solution": "4"}, b"<think>2 and 2</think> \\boxed{4}"), ({}, b"<think>x</think> \\boxed{4}")]
    argv = [str(python), str(ROOT / "tests" / "protocols" / "harbor_verifier.py"), str(Path(sys.executable).parent)]
    argv.append(str(ROOT))
    for i, (row, answer) in enumerate(cases):
        task, work = task_folder(tmp_path / f"task{i}", row), tmp_path / f"work{i}"
        (work / "app").mkdir(parents=True)
        (work / "app" / "answer.txt").write_bytes(answer)
        argv += [str(task), str(work)]
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=240, env={**os.environ, "PYTHONPATH": ""})
    assert proc.returncode == 0, proc.stderr[-3000:]
    scored, unscorable = (json.loads(line) for line in proc.stdout.splitlines())
    assert scored["exception"] is None, scored
    assert scored["rewards"] == {"reward": 1.25}
    assert not (tmp_path / "work0" / "trial" / "verifier" / "reward.txt").exists()  # the script's fallback is gone
    # no reward file: Harbor's RewardFileNotFoundError, a trial graded without a valid reward (left out of metrics)
    assert unscorable["rewards"] is None
    assert unscorable["exception"] == "RewardFileNotFoundError"
    assert unscorable["has_valid_reward"] is False
    assert "no gold" in unscorable["test_stdout"]
    reason = json.loads((tmp_path / "work1" / "trial" / "verifier" / "reason.json").read_text())
    assert reason["unscorable"] is True
