"""``ray_pool`` without a cluster: config, chunking, pickling, lazy imports, and every way of having no cluster.

No Ray process starts here: each "no cluster" case must end as ``None`` with its reason, quickly, before
``ray.init`` is ever called (the cluster tests are in ``tests/scale/test_ray_pool.py``).
"""

from __future__ import annotations

import json
import pickle
import socket
import subprocess
import sys
import time

import pytest

from rewardsmith import ConfigError, get_reward
from rewardsmith.adapters.runtime.ray.config import chunk_bounds
from tests.support.ray_cluster import ray_missing

# The "no cluster" cases use Ray Client addresses (ray://HOST:PORT): Ray dials those as given, while a plain
# 127.0.0.1:PORT is swapped for the machine's own IP, and these tests send nothing beyond loopback.


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_chunks_cover_the_batch_in_order() -> None:
    assert chunk_bounds(0, None, 4) == []
    assert chunk_bounds(10, 3, 4) == [(0, 3), (3, 6), (6, 9), (9, 10)]
    bounds = chunk_bounds(2048, None, 8)  # about four chunks per actor
    assert len(bounds) == 32 and bounds[0] == (0, 64) and bounds[-1][1] == 2048
    assert chunk_bounds(3, None, 8) == [(0, 1), (1, 2), (2, 3)]


def test_config_is_checked_at_construction() -> None:
    from rewardsmith.ray import RayPool

    with pytest.raises(ConfigError, match="unknown reward 'no_such_reward'"):
        RayPool({"reward": "no_such_reward"})
    with pytest.raises(ConfigError, match="num_actors"):
        RayPool({"reward": "think_format", "num_actors": 0})
    with pytest.raises(ConfigError, match="placement"):
        RayPool({"reward": "think_format", "placement": "everywhere"})


def test_pool_is_a_drop_in_under_the_inner_name_and_pickles() -> None:
    from rewardsmith.ray import RayPool

    pool = RayPool({"reward": {"name": "math_equivalence", "config": {"workers": 1}}})
    assert pool.__name__ == "math_equivalence" and pool.gold_columns == ("solution",)
    assert RayPool({"reward": "think_format", "name": "fmt_on_ray"}).__name__ == "fmt_on_ray"
    clone = pickle.loads(pickle.dumps(pool))
    assert clone._actors is None and clone.config == pool.config
    assert get_reward("ray_pool", {"reward": "think_format"}).__name__ == "think_format"


def test_importing_rewardsmith_and_its_ray_module_does_not_import_ray() -> None:
    probe = "import sys, rewardsmith, rewardsmith.ray, rewardsmith.adapters.runtime.ray; print('ray' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "False"


def test_without_ray_installed_every_sample_is_none_with_the_reason() -> None:
    probe = (
        "import sys, json; sys.modules['ray'] = None\n"
        "from rewardsmith.ray import RayPool\n"
        "pool = RayPool({'reward': 'think_format'})\n"
        "print(json.dumps([r.model_dump() for r in pool.details(['<think>a</think> b', 'b'])]))\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    results = json.loads(done.stdout.strip().splitlines()[-1])
    assert [r["score"] for r in results] == [None, None]
    assert all("ray is not installed" in r["reason"] and "rewardsmith[ray]" in r["reason"] for r in results)


@pytest.mark.skipif(ray_missing() is not None, reason=str(ray_missing()))
def test_unreachable_cluster_is_none_with_the_reason_within_the_connect_timeout() -> None:
    from rewardsmith.ray import RayPool

    port = _closed_port()
    pool = RayPool({"reward": "think_format", "address": f"ray://127.0.0.1:{port}", "connect_timeout_s": 2})
    started = time.monotonic()
    results = pool.details(["<think>a</think> b", "b", 3])
    assert time.monotonic() - started < 10
    assert [r.score for r in results] == [None, None, None]
    assert all(f"Ray cluster unreachable at 127.0.0.1:{port}" in r.reason for r in results[:2])
    assert results[2].reason == "completion is int, not text"
    assert pool(["x"]) == [None]  # the next batch tries again and answers the same way


@pytest.mark.skipif(ray_missing() is not None, reason=str(ray_missing()))
def test_addresses_resolve_as_ray_resolves_them_without_any_traffic() -> None:
    from rewardsmith.adapters.runtime.ray.connect import resolve_address

    assert resolve_address("ray://10.1.2.3:10001") == ("10.1.2.3", 10001)
    host, port = resolve_address("127.0.0.1:6390")  # Ray may swap loopback for the node's IP; the port stays
    assert port == 6390 and host


@pytest.mark.skipif(ray_missing() is not None, reason=str(ray_missing()))
def test_a_malformed_address_is_none_with_the_reason() -> None:
    from rewardsmith.ray import RayPool

    (result,) = RayPool({"reward": "think_format", "address": "ray://no-port-here"}).details(["x"])
    assert result.score is None and "bad Ray address 'ray://no-port-here'" in result.reason


@pytest.mark.skipif(ray_missing() is not None, reason=str(ray_missing()))
def test_cli_score_with_an_unreachable_cluster_is_one_line_exit_2(tmp_path) -> None:
    data = tmp_path / "rows.jsonl"
    data.write_text(json.dumps({"completion": "x"}) + "\n")
    port = _closed_port()
    argv = [sys.executable, "-m", "rewardsmith", "score", "--reward", "think_format", "--data", str(data),
            "--out", str(tmp_path / "out.jsonl"), "--ray", f"ray://127.0.0.1:{port}"]  # fmt: skip
    done = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2, done.stderr
    assert f"Ray cluster unreachable at 127.0.0.1:{port}" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert not (tmp_path / "out.jsonl").exists()
