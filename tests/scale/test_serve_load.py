"""A bounded load test of ``rewardsmith serve`` on 127.0.0.1: fixed clients for a fixed time (bench/serve_load.py).

Below capacity nothing is refused; above it, refusals are 429s that came while the queue was full. In both,
no request is lost or answered twice, every answer is the sender's, and the server counted what was sent.
"""

from __future__ import annotations

import asyncio

import pytest

from tests.support.extras import require_extras

require_extras("serve")

from bench.serve_load import SPEC, run_load, workload
from rewardsmith.adapters.runtime.serve.process import ServerProcess

pytestmark = pytest.mark.slow

WORKERS, MAX_QUEUE = 1, 2


@pytest.fixture(scope="module")
def server():
    with ServerProcess(SPEC, "--workers", str(WORKERS), "--max-queue", str(MAX_QUEUE)) as running:
        yield running.url


def test_below_capacity_every_request_is_answered(server: str) -> None:
    clients = WORKERS + MAX_QUEUE  # one request each at most: the queue can fill but never overflow
    report = asyncio.run(run_load(server, workload("format", 16, 0), clients=clients, seconds=3))
    summary = report.summary()
    print(summary)
    assert report.problems() == []
    assert report.refused == 0 and report.ok == report.sent > 10
    assert summary["p50_s"] <= summary["p99_s"] < 5


def test_over_capacity_refusals_are_429_only_when_full(server: str) -> None:
    report = asyncio.run(run_load(server, workload("slow", 1, 0.2), clients=8, seconds=4))
    summary = report.summary()
    print(summary)
    assert report.problems() == []  # includes: no 429 while the queue had room
    assert report.refused > 0 and report.ok > 0
    assert report.ok + report.refused == report.sent
