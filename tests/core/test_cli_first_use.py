"""First use as a newcomer meets it: a missing extra or a broken config file is one line and exit 2, before any work.

Each command runs in a fresh interpreter, as a user runs it. "Not installed" is made real for the process: the
hidden modules are set to ``None`` in ``sys.modules`` before rewardsmith starts, which is what Python reports for a
module it cannot find (``import`` raises ModuleNotFoundError, ``importlib.util.find_spec`` returns None).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

LAUNCH = (
    "import sys\n"
    "for name in sys.argv[1].split(','):\n"
    "    if name: sys.modules[name] = None\n"
    "from rewardsmith.cli.main import main\n"
    "sys.exit(main(sys.argv[2:]))\n"
)


def run_without(hidden: str, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "HF_DATASETS_CACHE": str(cwd / "hf")}
    return subprocess.run(
        [sys.executable, "-c", LAUNCH, hidden, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=120
    )


# (hidden modules, command line, the extra the one line must name, the missing module it must name)
MISSING_EXTRAS = [
    ("matplotlib", ["audit", "run", "--judge", "embedded", "--set", "math", "--n", "2", "--out", "run"], "audit",
     "matplotlib"),
    ("matplotlib", ["audit", "run", "--set", "math", "--n", "2", "--out", "run"], "audit", "matplotlib"),
    ("matplotlib", ["audit", "report", "run"], "audit", "matplotlib"),
    ("fastapi", ["serve", "--spec", "spec.yaml"], "serve", "fastapi"),
    ("ray", ["serve", "--spec", "spec.yaml", "--ray", "auto"], "ray", "ray"),
    ("ray", ["score", "--reward", "exact_match", "--data", "d.jsonl", "--out", "o.jsonl", "--ray", "auto"], "ray",
     "ray"),
    ("torch", ["train", "grpo", "--demo"], "judge-local", "torch"),
    ("torch", ["train", "dpo", "--config", "spec.yaml"], "judge-local", "torch"),
    ("openai,transformers", ["rlaif", "pairs", "--demo", "--out", "pairs"], "judge-local", None),
    ("openai", ["judge", "pair", "--judge", "openai:m", "--prompt", "p", "--a", "a", "--b", "b"], "judge", "openai"),
    ("transformers", ["audit", "run", "--judge", "transformers:/m", "--set", "math", "--out", "run"], "judge-local",
     None),
    ("docker", ["sandbox", "run", "prog.py", "--backend", "docker"], "docker", "docker"),
    ("docker", ["sandbox", "build-image"], "docker", "docker"),
]  # fmt: skip


@pytest.mark.parametrize(("hidden", "argv", "extra", "module"), MISSING_EXTRAS)
def test_missing_extra_is_one_line_naming_it_before_any_work(tmp_path, hidden, argv, extra, module):
    (tmp_path / "spec.yaml").write_text("rewards: [think_format]\n")
    started = time.monotonic()
    result = run_without(hidden, *argv, cwd=tmp_path)
    elapsed = time.monotonic() - started
    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert f"'{extra}' extra" in lines[0] and f"pip install 'rewardsmith[{extra}]'" in lines[0]
    if module:
        assert f"{module} missing" in lines[0]
    assert lines[0].startswith("rewardsmith: error: rewardsmith " + argv[0])
    assert "Traceback" not in result.stderr and not result.stdout
    assert not (tmp_path / "run").exists() and not (tmp_path / "pairs").exists()  # refused before any work
    assert elapsed < 60


def test_present_extras_let_the_command_run(tmp_path):
    (tmp_path / "d.jsonl").write_text('{"completion": "<think>a</think> b"}\n')
    result = run_without("", "score", "--reward", "think_format", "--data", "d.jsonl", "--out", "o.jsonl", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "o.jsonl").exists()


# -- config files: file:line:column and the YAML problem, exit 2 ------------------------------------------------

BAD_YAML = [
    ("a: 1\nb: [1, 2\nc: 3\n", ":3:2: not valid YAML: expected ',' or ']'"),
    ("model: tiny\n  bad: indent\n", ":2:6: not valid YAML: mapping values are not allowed here"),
    ("a: 'open\n", ":2:1: not valid YAML: found unexpected end of stream"),
    ("key: value\n\tother: x\n", ":2:1: not valid YAML: found character '\\t' that cannot start any token"),
]


@pytest.mark.parametrize(("text", "expected"), BAD_YAML)
@pytest.mark.parametrize(
    "argv",
    [
        ["score", "--reward", "exact_match", "--config", "@bad.yaml", "--data", "d.jsonl", "--out", "o.jsonl"],
        ["train", "dpo", "--config", "bad.yaml"],
        ["train", "grpo", "--config", "bad.yaml"],
    ],
)
def test_bad_yaml_config_is_one_line_with_file_line_and_problem(tmp_path, text, expected, argv):
    (tmp_path / "bad.yaml").write_text(text)
    (tmp_path / "d.jsonl").write_text('{"completion": "x"}\n')
    result = run_without("", *argv, cwd=tmp_path)
    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in result.stderr, result.stderr
    assert lines[0].startswith(f"rewardsmith: error: bad.yaml{expected}"), lines[0]


def test_missing_config_file_is_one_line(tmp_path):
    result = run_without("", "train", "dpo", "--config", "absent.yaml", cwd=tmp_path)
    assert result.returncode == 2 and result.stderr.strip() == "rewardsmith: error: no such config file: absent.yaml"


# -- a reward whose checks need a missing dependency fails at construction, naming the extra ------------------------

INSTRUCTIONS_WITHOUT_LANGDETECT = """
import json, sys
sys.modules["langdetect"] = None
from rewardsmith import get_reward
from rewardsmith.reward import ConfigError
try:
    get_reward("instruction_following")
    print(json.dumps({"refused": None}))
except ConfigError as exc:
    print(json.dumps({"refused": str(exc)}))
reward = get_reward("instruction_following", {"language_checks": False})
rows = {"instruction_id_list": [["change_case:english_capital"], ["punctuation:no_comma"]], "kwargs": [[{}], [{}]]}
results = reward.details(["HELLO THERE", "no commas here"], **rows)
print(json.dumps([[r.score, r.reason] for r in results]))
"""


def test_instruction_following_without_langdetect_fails_at_construction(tmp_path):
    import json

    command = [sys.executable, "-c", INSTRUCTIONS_WITHOUT_LANGDETECT]
    result = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=90)
    assert result.returncode == 0, result.stderr
    refused, scored = (json.loads(line) for line in result.stdout.splitlines())
    assert "langdetect" in refused["refused"] and "pip install 'rewardsmith[instructions]'" in refused["refused"]
    assert "language_checks: false" in refused["refused"]
    (case_score, case_reason), (comma_score, _) = scored
    assert case_score is None and "rewardsmith[instructions]" in case_reason  # opted out: unscorable, with the fix
    assert comma_score == 1.0  # checks that need nothing still score
