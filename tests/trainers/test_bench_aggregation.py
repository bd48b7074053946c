"""bench/aggregation.py trains the two-term spec both ways on the same budget and tables both rows."""

from __future__ import annotations

import argparse
import importlib.util
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]


def bench_module():
    spec = importlib.util.spec_from_file_location("bench_aggregation", ROOT / "bench" / "aggregation.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_both_aggregations_train_on_the_same_budget(tiny_model_dir):
    bench = bench_module()
    args = argparse.Namespace(
        model=str(tiny_model_dir),
        device="cpu",
        budget=16,
        prompts=2,
        generations=4,
        max_completion_length=6,
        eval_prompts=2,
        lr=1e-2,
        threads=1,
    )
    runs = [bench.run(aggregation, 0, args) for aggregation in bench.AGGREGATIONS]
    assert [r["aggregation"] for r in runs] == ["sum_then_normalize", "normalize_then_sum"]
    assert all(r["updates"] == 2 for r in runs)  # 16 completions = 2 rounds of 2 prompts x 4
    assert runs[0]["before"] == runs[1]["before"]  # the same initial model and held-out prompts
    assert all(set(r["after"]) == {"format", "accuracy"} for r in runs)
    assert all(0.0 <= v <= 1.0 for r in runs for v in r["after"].values())
    printed = bench.table(bench.summary(runs))
    assert "\nsum_then_normalize " in printed and "\nnormalize_then_sum " in printed
