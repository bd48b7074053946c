"""``serve_on_ray``: the reward server as a Ray Serve deployment with two replicas on the two-node cluster.

Runs inside the private network namespace with the cluster of ``tests/support/ray_cluster.py`` (via
``tests/scale/test_ray_netns.py``); requests go to Ray Serve's proxy on 127.0.0.1 there.
"""

from __future__ import annotations

import json
import urllib.request

import pytest

from tests.support.ray_cluster import IN_RAY_NETNS, SKIP_OUTSIDE, ray_missing, shared_cluster

pytestmark = [
    pytest.mark.skipif(not IN_RAY_NETNS, reason=SKIP_OUTSIDE),
    pytest.mark.skipif(ray_missing() is not None, reason=str(ray_missing())),
]

PORT = 8311


def _post(url: str, body: dict) -> dict:
    request = urllib.request.Request(url, json.dumps(body).encode(), {"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=60) as response:
        return json.loads(response.read())


def test_two_replicas_serve_the_native_and_openrlhf_endpoints() -> None:
    pytest.importorskip("fastapi")
    pytest.importorskip("rewardsmith.adapters.runtime.serve")
    from ray import serve

    from rewardsmith.adapters.runtime.ray.serve import replica_count, serve_on_ray

    shared_cluster()
    specs = {"rewards": ["think_format", {"name": "math_equivalence", "config": {"workers": 1}}]}
    url = serve_on_ray(
        specs,
        replicas=2,
        port=PORT,
        settings={"workers": 2, "threads": 2},
        ray_actor_options={"num_cpus": 0.25},
        proxy_location="HeadOnly",
        ready_timeout_s=180,
    )
    try:
        assert url == f"http://127.0.0.1:{PORT}/"
        assert replica_count("rewardsmith") == 2
        native = _post(
            url + "v1/score",
            {
                "reward": "math_equivalence",
                "completions": [r"\boxed{4}", r"\boxed{5}"],
                "columns": {"solution": ["4", "4"]},
            },
        )
        assert native["scores"] == [1.0, 0.0], native
        fmt = _post(url + "v1/score", {"reward": "think_format", "completions": ["<think>a</think> b", "b"]})
        assert fmt["scores"] == [1.0, 0.0], fmt
        openrlhf = _post(
            url + "get_reward/math_equivalence",
            {"query": [r"Q: 2+2? The answer is \boxed{4}", r"Q: 2+3? \boxed{6}"], "prompts": ["Q: 2+2? ", "Q: 2+3? "],
             "labels": ["4", "5"]},
        )  # fmt: skip
        assert openrlhf["rewards"] == [1.0, 0.0] and openrlhf["scores"] == [1.0, 0.0], openrlhf
        with urllib.request.urlopen(url + "healthz", timeout=30) as response:
            assert json.loads(response.read())["status"] == "ok"
    finally:
        serve.shutdown()


def test_monitor_settings_reach_the_replica_and_watch_its_scores() -> None:
    """``monitor=`` (``ServeSettings.monitor``) on Ray Serve: hacked answers paid by the served reward are caught."""
    pytest.importorskip("fastapi")
    import time

    from ray import serve

    from rewardsmith.adapters.runtime.ray.serve import serve_on_ray

    shared_cluster()
    url = serve_on_ray(
        [{"name": "regex_match", "config": {"pattern": "[0-9]"}}],
        replicas=1,  # one replica sees the whole stream, so its /monitor is the whole story
        port=PORT,
        name="monitored",
        settings={"batch_wait_ms": 0},
        monitor={"shadow": {"name": "math_equivalence", "config": {"workers": 1}}, "sample": 4},
        ray_actor_options={"num_cpus": 0.25},
        proxy_location="HeadOnly",
        ready_timeout_s=180,
    )
    try:
        for wrong in ("5", "6"):  # two requests of two: one monitored batch of 4, every answer wrong and paid
            body = {
                "reward": "regex_match",
                "completions": [rf"\boxed{{{wrong}}}"] * 2,
                "columns": {"solution": ["4", "4"]},
            }
            assert _post(url + "v1/score", body)["scores"] == [1.0, 1.0]
        deadline = time.monotonic() + 60
        while True:
            with urllib.request.urlopen(url + "monitor", timeout=30) as response:
                report = json.loads(response.read())
            watched = report["rewards"]["regex_match"]
            if watched["checks"] >= 1 or time.monotonic() > deadline:
                break
            time.sleep(0.5)
        assert report["shadow"]["name"] == "math_equivalence" and report["sample"] == 4, report
        assert watched["batches"] == 1 and watched["checks"] == 1, report
        assert watched["signals"]["checked"] == 4 and watched["signals"]["precision"] == 0.0, report
        assert report["alarm"] is True and [a["signal"] for a in watched["alarms"]] == ["divergence"], report
        with urllib.request.urlopen(url + "metrics", timeout=30) as response:
            assert 'rewardsmith_monitor_precision{reward="regex_match"} 0.0' in response.read().decode()
    finally:
        serve.shutdown()


def test_autoscaling_config_is_passed_through() -> None:
    pytest.importorskip("fastapi")
    from ray import serve

    from rewardsmith.adapters.runtime.ray.serve import replica_count, serve_on_ray

    shared_cluster()

    def tiny_app():
        from fastapi import FastAPI

        app = FastAPI()

        @app.get("/ping")
        def ping() -> dict:
            return {"pong": True}

        return app

    url = serve_on_ray(
        tiny_app,
        autoscaling_config={"min_replicas": 2, "max_replicas": 3, "initial_replicas": 2},
        port=PORT,
        name="autoscaled",
        ray_actor_options={"num_cpus": 0.25},
        proxy_location="HeadOnly",
        ready_timeout_s=180,
    )
    try:
        with urllib.request.urlopen(url + "ping", timeout=30) as response:
            assert json.loads(response.read()) == {"pong": True}
        assert replica_count("autoscaled") == 2  # min_replicas reached Ray Serve (a fixed deployment would have 1)
    finally:
        serve.shutdown()


def test_cli_serve_ray_deploys_announces_and_stops_on_sigterm(tmp_path) -> None:
    pytest.importorskip("fastapi")
    import signal
    import subprocess
    import sys

    cluster = shared_cluster()
    spec = tmp_path / "rewards.yaml"
    spec.write_text("rewards: [think_format]\n")
    process = subprocess.Popen(
        [sys.executable, "-m", "rewardsmith", "serve", "--spec", str(spec), "--ray", cluster.address,
         "--port", str(PORT), "--replicas", "1", "--replica-cpus", "0.25", "--proxy-location", "HeadOnly"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=cluster.env,
    )  # fmt: skip
    try:
        line = process.stdout.readline()
        assert f"ready on http://127.0.0.1:{PORT}" in line, line + process.stderr.read()[-3000:]
        answer = _post(
            f"http://127.0.0.1:{PORT}/v1/score", {"reward": "think_format", "completions": ["<think>a</think> b"]}
        )
        assert answer["scores"] == [1.0], answer
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=120) == 0, process.stderr.read()[-3000:]
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
