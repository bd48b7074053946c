"""The server's event loop only parses, routes and answers: reward work never runs on it.

A real ``rewardsmith serve`` scores a slow batch of ``code_tests`` samples built to cost host work (each program
sleeps, and each completion trails 600 KB of fences that never close, the input that once made extraction
quadratic and froze the loop for minutes). While that batch is scored, ``/healthz`` must answer promptly.
"""

from __future__ import annotations

import threading
import time

from tests.support.extras import require_extras

require_extras("serve")

import httpx
import pytest

from rewardsmith.adapters.runtime.serve.process import ServerProcess
from rewardsmith.sandboxes.local.backend import LocalSandbox
from tests.support.timing import slack

pytestmark = pytest.mark.slow

TESTS = {"asserts": ["assert f() == 1"]}
PROGRAM = "```python\nimport time\ntime.sleep(3)\ndef f():\n    return 1\n```\n"
TRAILER = "```x\n" * 120_000  # 600 KB of unclosed fences after the program


def test_health_answers_promptly_while_a_slow_batch_is_scored() -> None:
    if LocalSandbox().tier != "bwrap":
        pytest.skip("bwrap tier unavailable here")
    completions = [PROGRAM + TRAILER] * 4
    body = {"reward": "code_tests", "completions": completions, "columns": {"tests": [TESTS] * 4}}
    with ServerProcess([{"name": "code_tests", "config": {"timeout_s": 20}}]) as server:
        answer: dict[str, httpx.Response] = {}
        sender = threading.Thread(
            target=lambda: answer.setdefault("r", httpx.post(server.url + "/v1/score", json=body, timeout=120))
        )
        sender.start()
        deadline = time.monotonic() + 30
        while httpx.get(server.url + "/healthz", timeout=30).json()["busy"] == 0:
            assert time.monotonic() < deadline, "the batch never started"
            time.sleep(0.02)
        latencies = []
        while sender.is_alive() and len(latencies) < 40:
            started = time.monotonic()
            assert httpx.get(server.url + "/healthz", timeout=30).status_code == 200
            latencies.append(time.monotonic() - started)
            time.sleep(0.05)
        sender.join(120)
        assert answer["r"].status_code == 200
        assert answer["r"].json()["scores"] == [1.0] * 4, answer["r"].json()["reasons"]
    assert len(latencies) >= 5, latencies  # the batch was in flight for a while (the programs sleep 3 s)
    assert max(latencies) < 0.2 + slack(0.3), latencies
