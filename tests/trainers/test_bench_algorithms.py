"""bench/algorithms.py runs all seven methods in one run and prints the cost table with ratios to PPO."""

from __future__ import annotations

import importlib.util
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
    assert all(r["device"] == "cpu" and r["peak_device_mb"] is None for r in results.values())
    table = done.stdout
    assert all(f"\n{name:<6}" in table for name in results) and "ratios are to PPO" in table
    assert "peak RSS x" in table and "time per update is CPU time per update" in table


def test_on_cuda_the_table_reads_device_memory_and_wall_time():
    """Host RSS and CPU time measure the launcher on a GPU: the table switches to the device's own figures."""
    spec = importlib.util.spec_from_file_location("bench_algorithms", ROOT / "bench" / "algorithms.py")
    assert spec is not None and spec.loader is not None
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    row = {"models_held": 1, "parameters_held": 10, "sequences_per_update": 8, "reward_before": 0.1}
    rows = [
        {
            **row,
            "method": "ppo",
            "peak_device_mb": 4000.0,
            "s_per_update": 2.0,
            "peak_rss_mb": 1.0,
            "cpu_s_per_update": 9.0,
            "reward_after": 0.5,
        },
        {
            **row,
            "method": "grpo",
            "peak_device_mb": 1000.0,
            "s_per_update": 1.0,
            "peak_rss_mb": 3.0,
            "cpu_s_per_update": 9.0,
            "reward_after": 0.6,
        },
    ]
    table = bench.table(rows)
    grpo = next(line for line in table.splitlines() if line.startswith("grpo"))
    assert "peak CUDA x" in table and "synchronised" in table
    assert grpo.split()[3] == "0.25" and grpo.split()[5] == "0.50"  # memory and time ratios to PPO
    assert bench.measures([{**rows[0], "peak_device_mb": None}])[0] == "peak_rss_mb"
