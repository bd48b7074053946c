"""``ray_pool`` on a real two-node Ray cluster: placement on both nodes, a node killed mid-batch, overruns, the CLI.

Runs inside a private network namespace (see ``tests/support/ray_cluster.py``); the session outside runs this module
there through ``tests/scale/test_ray_netns.py``. Every batch is compared with the same batch scored locally. The node
kill comes last: a later test that needs two nodes starts a new worker node first (about 12 s here).
"""

from __future__ import annotations

import json
import logging
import pickle
import subprocess
import sys
import threading
import time

import pytest

from tests.support.ray_cluster import IN_RAY_NETNS, SKIP_OUTSIDE, ray_missing, shared_cluster

pytestmark = [
    pytest.mark.skipif(not IN_RAY_NETNS, reason=SKIP_OUTSIDE),
    pytest.mark.skipif(ray_missing() is not None, reason=str(ray_missing())),
]


@pytest.fixture
def cluster():
    """The shared two-node cluster; a worker node killed by an earlier test is replaced first."""
    cluster = shared_cluster()
    while len(cluster.worker_node_ids()) < 1:
        cluster.add_worker()
    return cluster


def _dumps(results):
    return [r.model_dump() for r in results]


def _pool(inner, **config):
    from rewardsmith.ray import RayPool

    defaults = {"num_actors": 2, "actor_num_cpus": 0.5, "address": shared_cluster().address}
    return RayPool({"reward": inner, **defaults, **config})


def test_actors_spread_over_both_nodes_and_match_local_math(cluster) -> None:
    from rewardsmith import get_reward

    spec = {"name": "math_equivalence", "config": {"workers": 1, "timeout_s": 5}}
    completions = [
        r"The answer is $\boxed{8}$.",
        r"Answer \boxed{7}. Check: \boxed{1}",
        "The final answer is 0.5.",
        r"\boxed{0 < x \le 3}",
        r"\boxed{(x-1)(x+1)}",
        "no answer here",
        "",
        r"\boxed{\frac{1}{2}}",
    ] * 3
    solution = ["2^{3}", "7", r"\frac12", "(0, 3]", "x^2-1", "5", "3", "0.5"] * 3
    pool = _pool(spec, chunk_size=3)
    try:
        nodes = pool.warm_up()
        assert set(nodes) == {cluster.head_node_id(), *cluster.worker_node_ids()}, nodes
        remote = pool.details(completions, solution=solution)
        local = get_reward("math_equivalence", spec["config"]).details(completions, solution=solution)
        assert _dumps(remote) == _dumps(local)
        assert [r.score for r in remote][:8] == [1.0, 0.0, 1.0, 1.0, 1.0, 0.0, 0.0, 1.0]
        assert pool.__name__ == "math_equivalence"
    finally:
        pool.close()


def test_chunk_past_its_timeout_is_none_with_reason_and_the_rest_scores(cluster) -> None:
    from tests.support.ray_rewards import SleepyLength

    inner = SleepyLength({"delay_s": 0.0, "hang_s": 60.0})
    texts = ["fine", "also fine", "HANG forever", "ok", "good", "last"]
    pool = _pool(inner, num_actors=2, chunk_size=1, chunk_timeout_s=1.5, max_retries=1)
    try:
        started = time.monotonic()
        results = pool.details(texts)
        elapsed = time.monotonic() - started
    finally:
        pool.close()
    assert elapsed < 60, f"an overrunning chunk held the batch for {elapsed:.0f}s"
    assert results[2].score is None and "chunk_timeout_s=1.5" in results[2].reason, results[2]
    assert "failed 2 times" in results[2].reason
    assert [r.score for i, r in enumerate(results) if i != 2] == [4.0, 9.0, 2.0, 4.0, 4.0]


def test_reward_that_cannot_be_built_on_the_actors_is_none_with_the_reason(cluster) -> None:
    from tests.support.ray_rewards import SleepyLength

    pool = _pool(SleepyLength({"fail_in_actor": True}), num_actors=1, max_retries=1, actor_start_timeout_s=60)
    started = time.monotonic()
    results = pool.details(["a", "bb"])
    assert time.monotonic() - started < 60
    assert [r.score for r in results] == [None, None]
    reasons = [r.reason for r in results]
    assert all("actor failed to start" in r and "cannot build sleepy_length" in r for r in reasons), reasons


def test_pool_pickles_without_live_handles_and_the_copy_scores(cluster) -> None:
    pool = _pool({"name": "think_format"}, num_actors=1)
    try:
        assert pool(["<think>a</think> b", "b"]) == [1.0, 0.0]
        clone = pickle.loads(pickle.dumps(pool))
        assert clone._actors is None
        try:
            assert clone(["<think>x</think> y", "<think>x"]) == [1.0, 0.0]
        finally:
            clone.close()
    finally:
        pool.close()


def test_misaligned_column_is_answered_before_the_cluster(cluster) -> None:
    pool = _pool({"name": "math_equivalence", "config": {"workers": 1}}, num_actors=1)
    results = pool.details([r"\boxed{1}", r"\boxed{2}"], solution=["1"])
    assert all(r.score is None and "column 'solution' has 1 value for 2 completions" in r.reason for r in results)
    assert pool._actors is None, "nothing should have been sent to the cluster"


def test_cli_score_with_ray_equals_local_and_resumes(cluster, tmp_path) -> None:
    from rewardsmith.cli.main import main

    rows = [{"completion": rf"\boxed{{{i % 5}}}", "solution": str(i % 3)} for i in range(30)]
    data = tmp_path / "rows.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    config = json.dumps({"workers": 1})
    base = [sys.executable, "-m", "rewardsmith", "score", "--reward", "math_equivalence", "--config", config,
            "--data", str(data), "--batch-size", "8"]  # fmt: skip
    assert main([*base[3:], "--out", str(tmp_path / "local.jsonl")]) == 0
    on_ray = [*base, "--out", str(tmp_path / "ray.jsonl"), "--ray", cluster.address, "--ray-actors", "2"]
    first = subprocess.run(on_ray, capture_output=True, text=True, timeout=180)
    assert first.returncode == 0, first.stderr[-3000:]

    def rows_of(name):
        return [json.loads(line) for line in (tmp_path / name).read_text().splitlines()]

    assert rows_of("ray.jsonl") == rows_of("local.jsonl")
    again = subprocess.run(on_ray, capture_output=True, text=True, timeout=180)
    assert again.returncode == 0 and "resuming: 30 of 30 rows already scored" in again.stdout, again.stdout
    assert rows_of("ray.jsonl") == rows_of("local.jsonl")


def test_node_killed_mid_batch_reruns_its_chunks_and_equals_local(cluster, caplog) -> None:
    from tests.support.ray_rewards import SleepyLength

    inner = SleepyLength({"delay_s": 0.04})
    texts = [("x" * (i % 11)) + f" sample {i}" if i % 13 else "" for i in range(120)]
    tags = list(range(120))
    local = SleepyLength({"delay_s": 0}).details(texts, tag=tags)
    pool = _pool(inner, chunk_size=5)
    try:
        nodes = pool.warm_up()
        worker = cluster.worker_node_ids()[0]
        assert worker in nodes and cluster.head_node_id() in nodes
        box: dict = {}
        batch = threading.Thread(target=lambda: box.setdefault("results", pool.details(texts, tag=tags)))
        started = time.monotonic()
        with caplog.at_level(logging.WARNING, logger="rewardsmith.adapters.runtime.ray.dispatch"):
            batch.start()
            time.sleep(1.0)  # both actors are mid-chunk: the batch needs about 2.4 s on two actors
            assert cluster.kill_node(worker) > 0
            batch.join(timeout=120)
        assert not batch.is_alive(), "the batch hung after a node died"
        elapsed = time.monotonic() - started
        assert _dumps(box["results"]) == _dumps(local)
        assert any("rerunning its chunks" in r.getMessage() for r in caplog.records)
        assert worker not in pool.node_ids(), "a dead node's actor is still in the pool"
        print(f"node killed mid-batch: 120 samples in {elapsed:.1f}s, all equal to local scoring")
    finally:
        pool.close()
