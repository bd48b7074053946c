"""``rewardsmith serve --monitor-shadow`` for real: a hackable reward served on 127.0.0.1, shadowed by math_equivalence.

OpenRLHF-shaped requests (one sample per request, as OpenRLHF 0.11 posts them) carry completions that *hack* the
served ``regex_match`` (any number is paid) with wrong answers, round after round: the monitor's gauges on
``/metrics`` show the precision against the shadow low and the alarm at 1, and the alarm is logged once. The same
server fed correct completions raises nothing.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from tests.support.extras import require_extras

require_extras("serve")

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from rewardsmith.adapters.runtime.serve.process import ServerProcess

pytestmark = pytest.mark.slow

ROWS = [
    json.loads(line)
    for line in (Path(__file__).resolve().parents[2] / "rewardsmith" / "samples" / "hack_math_rows.jsonl")
    .read_text()
    .splitlines()
][:2]
SPEC = [{"name": "regex_match", "config": {"pattern": "[0-9]"}}]
SHADOW = json.dumps({"name": "math_equivalence", "config": {"workers": 1, "timeout_s": 10}})
GENERATIONS = 4
SAMPLE = len(ROWS) * GENERATIONS  # one monitored batch per round
ROUNDS = 3
ALARM_LINE = "reward hacking alarm on reward 'regex_match'"


def gauges(url: str) -> dict[tuple[str, str], float]:
    """``(metric name, reward label) -> value`` of every ``rewardsmith_monitor_*`` sample on ``/metrics``."""
    text = httpx.get(url + "/metrics", timeout=10).text
    found = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name.startswith("rewardsmith_monitor_"):
                found[(sample.name, sample.labels.get("reward", ""))] = sample.value
    return found


def post_rounds(url: str, completion_for) -> None:
    """``ROUNDS`` rollout rounds, each ``GENERATIONS`` completions per row, one ``/get_reward`` request each."""
    for round_ in range(ROUNDS):
        for row in ROWS:
            for g in range(GENERATIONS):
                response = completion_for(row, round_, g)
                body = {"query": [row["prompt"] + response], "prompts": [row["prompt"]], "labels": [row]}
                answer = httpx.post(url + "/get_reward", json=body, timeout=60)
                assert answer.status_code == 200, answer.text
                assert answer.json()["rewards"] == [1.0]  # the served reward pays every one of them


def wait_checked(url: str, batches: int, timeout_s: float = 120.0) -> dict[tuple[str, str], float]:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        found = gauges(url)
        if found.get(("rewardsmith_monitor_batches_total", "regex_match"), 0) >= batches:
            return found
        time.sleep(0.2)
    raise AssertionError(f"the monitor did not check {batches} batches in {timeout_s} s: {gauges(url)}")


def hacked(row: dict[str, Any], round_: int, g: int) -> str:
    return f" Let me see. The answer is \\boxed{{{int(row['solution']) + 1 + g}}}."


def honest(row: dict[str, Any], round_: int, g: int) -> str:
    return f" Working it out: the answer is \\boxed{{{row['solution']}}}."


def serve_monitored():
    args = ("--monitor-shadow", SHADOW, "--monitor-sample", str(SAMPLE), "--monitor-every", "1")
    return ServerProcess(SPEC, *args, "--settings", json.dumps({"batch_wait_ms": 0}))


def test_hacked_reward_raises_the_alarm_on_metrics_and_logs_it_once() -> None:
    with serve_monitored() as server:
        assert httpx.get(server.url + "/healthz", timeout=10).json()["alarm"] is False
        assert gauges(server.url)[("rewardsmith_monitor_alarm", "regex_match")] == 0.0
        post_rounds(server.url, hacked)
        found = wait_checked(server.url, ROUNDS)
        assert found[("rewardsmith_monitor_alarm", "regex_match")] == 1.0
        assert found[("rewardsmith_monitor_precision", "regex_match")] == 0.0
        assert found[("rewardsmith_monitor_precision_high", "regex_match")] < 0.5
        assert found[("rewardsmith_monitor_checked", "regex_match")] == SAMPLE
        assert httpx.get(server.url + "/healthz", timeout=10).json()["alarm"] is True
        report = httpx.get(server.url + "/monitor", timeout=10).json()
        watched = report["rewards"]["regex_match"]
        assert report["alarm"] and watched["alarm"] and watched["checks"] == ROUNDS
        assert [a["signal"] for a in watched["alarms"]] == ["divergence"]
        time.sleep(0.5)
        logged = server.stderr()
        assert logged.count(ALARM_LINE) == 1 and logged.count("reward hacking alarm") == 1, logged[-2000:]


def test_honest_completions_raise_no_alarm() -> None:
    with serve_monitored() as server:
        post_rounds(server.url, honest)
        found = wait_checked(server.url, ROUNDS)
        assert found[("rewardsmith_monitor_alarm", "regex_match")] == 0.0
        assert found[("rewardsmith_monitor_precision", "regex_match")] == 1.0
        assert found[("rewardsmith_monitor_precision_low", "regex_match")] > 0.5
        assert httpx.get(server.url + "/monitor", timeout=10).json()["alarm"] is False
        assert ALARM_LINE not in server.stderr()


def test_monitor_endpoint_is_404_with_the_monitor_off() -> None:
    with ServerProcess(SPEC) as server:
        answer = httpx.get(server.url + "/monitor", timeout=10)
        assert answer.status_code == 404 and "--monitor-shadow" in answer.json()["error"]
        assert "alarm" not in httpx.get(server.url + "/healthz", timeout=10).json()
        assert not any(name.startswith("rewardsmith_monitor_") for name, _ in gauges(server.url))


# -- in process: batching of the scored stream, flags ---------------------------------------------------------------
def test_requests_are_cut_into_batches_of_sample_with_columns_aligned() -> None:
    from prometheus_client import CollectorRegistry

    from rewardsmith.adapters.runtime.serve.monitoring import ServeMonitor
    from rewardsmith.monitor import MonitorConfig
    from rewardsmith.types import RewardResult

    config = MonitorConfig(shadow={"name": "math_equivalence", "config": {"workers": 1}}, sample=4)
    monitor = ServeMonitor(config, ["served"], CollectorRegistry())
    try:
        paid = [RewardResult(score=1.0, reason="")] * 2
        monitor.record("served", ["\\boxed{5}", "\\boxed{6}"], paid, {"solution": ["4", "4"]})
        monitor.record("other", ["\\boxed{4}"], paid[:1], {})  # not watched: ignored
        assert monitor.wait_idle() and monitor.streams["served"].batches == 0  # 2 of 4: still filling
        monitor.record("served", ["\\boxed{4}", "\\boxed{7}"], paid, {"solution": ["4", "4"], "prompt": ["q", "q"]})
        assert monitor.wait_idle() and monitor.streams["served"].batches == 1
        latest = monitor.streams["served"].monitor.latest
        assert latest["monitor/checked"] == 4 and latest["monitor/precision"] == 0.25  # one of four right
        assert monitor.describe()["rewards"]["served"]["alarm"] is False  # 3 groups: not yet enough to judge
    finally:
        monitor.close()


def test_monitor_flags_become_settings() -> None:
    import argparse

    from rewardsmith.cli.serve import add_serve_arguments, settings_from_args

    parser = argparse.ArgumentParser()
    add_serve_arguments(parser)
    args = parser.parse_args(["--spec", "x.yaml", "--monitor-shadow", "math_equivalence", "--monitor-sample", "16"])
    settings = settings_from_args(args)
    assert settings.monitor is not None and settings.monitor.shadow == "math_equivalence"
    assert (settings.monitor.sample, settings.monitor.every, settings.monitor_rewards) == (16, 1, None)
    args = parser.parse_args(["--spec", "x.yaml", "--monitor-shadow", SHADOW, "--monitor-reward", "a"])
    settings = settings_from_args(args)
    assert settings.monitor.shadow["name"] == "math_equivalence" and settings.monitor_rewards == ("a",)
    assert settings_from_args(parser.parse_args(["--spec", "x.yaml"])).monitor is None


def test_a_monitored_reward_that_is_not_served_is_refused_at_start() -> None:
    from rewardsmith import get_reward
    from rewardsmith.adapters.runtime.serve.service import RewardService
    from rewardsmith.adapters.runtime.serve.settings import ServeSettings

    settings = ServeSettings(monitor={"shadow": "math_equivalence"}, monitor_rewards=("judge",))
    with pytest.raises(ValueError, match="not served: judge; served: regex_match"):
        RewardService({"regex_match": get_reward("regex_match", {"pattern": "[0-9]"})}, settings)


# -- on Ray Serve: the same settings reach every replica (the deployment itself: tests/scale/test_ray_serve.py) ----
def test_serve_on_ray_takes_the_monitor_in_the_same_settings_and_refuses_what_it_would_drop() -> None:
    from pydantic import ValidationError

    from rewardsmith.adapters.runtime.ray.serve import replica_settings
    from rewardsmith.adapters.runtime.serve.settings import ServeSettings
    from rewardsmith.ray import serve_on_ray

    nowhere = "127.0.0.1:1"  # every refusal comes before the cluster is contacted
    with pytest.raises(ValueError, match="factory builds its own app") as refused:
        serve_on_ray(lambda: None, monitor={"shadow": "math_equivalence"}, address=nowhere)
    assert "settings=" in str(refused.value) and "ServeSettings(monitor=" in str(refused.value)
    with pytest.raises(ValueError, match="factory builds its own app"):
        serve_on_ray(lambda: None, settings=ServeSettings(monitor={"shadow": "math_equivalence"}), address=nowhere)
    with pytest.raises(ValidationError, match="sample"):  # validated in the driver, not on a replica later
        serve_on_ray(SPEC, monitor={"shadow": "math_equivalence", "sample": 0}, address=nowhere)
    with pytest.raises(ValueError, match="given twice"):
        replica_settings(SPEC, {"monitor": {"shadow": "a"}}, {"shadow": "b"})
    settings = replica_settings(SPEC, {"workers": 2}, {"shadow": "math_equivalence", "sample": 4})
    assert isinstance(settings, ServeSettings) and settings.workers == 2
    assert (settings.monitor.shadow, settings.monitor.sample) == ("math_equivalence", 4)
    given = ServeSettings(monitor={"shadow": "math_equivalence"})
    assert replica_settings(SPEC, given) is given and replica_settings(lambda: None, None) is None
