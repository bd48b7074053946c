"""bench/algorithms.py runs all seven methods in one run and prints the cost table with ratios to PPO."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.extras import require_extras

require_extras("trl")

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]


def test_cost_table_covers_the_family_and_counts_the_models_each_holds(tmp_path):
    out = tmp_path / "algorithms.json"
    command = [sys.executable, str(ROOT / "bench" / "algorithms.py"), "--budget", "16", "--prompts", "2"]
    command += ["--generations", "4", "--max-completion-length", "6", "--json", str(out)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=900, check=False, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-2000:]
    results = {r["method"]: r for r in json.loads(out.read_text())}
    assert list(results) == ["ppo", "grpo", "rloo", "dpo", "ipo", "kto", "orpo"]
    held = {name: set(r["models"]) for name, r in results.items()}
    assert held["ppo"] == {"policy", "reference", "critic"}
    assert held["grpo"] == held["rloo"] == held["dpo"] == held["kto"] == {"policy", "reference"}
    assert held["orpo"] == {"policy"}
    assert results["ppo"]["parameters_held"] > results["grpo"]["parameters_held"] > results["orpo"]["parameters_held"]
    assert results["grpo"]["sequences_per_update"] == 8 and results["dpo"]["sequences_per_update"] == 0
    table = done.stdout
    assert all(f"\n{name:<6}" in table for name in results) and "ratios are to PPO" in table
