"""Several remote endpoints: one host failing costs retries, not scores (open-r1's Piston client is the anchor).

Real servers on 127.0.0.1: a live ``rewardsmith sandbox serve``, a port where nothing listens, and a server that
answers every request with HTTP 500.
"""

from __future__ import annotations

import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from rewardsmith import get_reward
from rewardsmith.sandboxes.base import RunRequest, RunStatus
from rewardsmith.sandboxes.fusion.client import RemoteSandbox
from rewardsmith.sandboxes.local.backend import LocalSandbox
from tests.support.sandbox_server import sandbox_server


@pytest.fixture(scope="module")
def live_url():
    if LocalSandbox().tier not in ("bwrap", "bwrap-exec"):
        pytest.skip("no bubblewrap tier here for the server (apt-get install bubblewrap)")
    with sandbox_server(max_run_timeout=10) as url:
        yield url


@pytest.fixture(scope="module")
def dead_url():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"http://127.0.0.1:{port}"  # closed again: connections are refused


class _Failing(BaseHTTPRequestHandler):
    def do_POST(self):
        self.send_response(500)
        self.end_headers()
        self.wfile.write(b'{"detail": "host on fire"}')

    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def failing_url():
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Failing)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


def echo(i: int) -> RunRequest:
    return RunRequest(argv=["python3", "main.py"], files={"main.py": f"print({i})"})


@pytest.mark.parametrize("order", ["bad-first", "bad-last"])
def test_a_down_endpoint_fails_over_to_a_live_one(live_url, dead_url, failing_url, order):
    urls = [dead_url, failing_url, live_url] if order == "bad-first" else [live_url, dead_url, failing_url]
    box = RemoteSandbox(",".join(urls), retries=0, backoff_s=0.01, cooldown_s=30)
    results = box.run_batch([echo(i) for i in range(12)], concurrency=4)
    assert [r.stdout for r in results] == [f"{i}\n".encode() for i in range(12)]


def test_every_endpoint_down_is_a_sandbox_error_naming_them(dead_url, failing_url):
    box = RemoteSandbox(f"{dead_url},{failing_url}", retries=1, backoff_s=0.01, cooldown_s=0.01)
    result = box.run(echo(1))
    assert result.status is RunStatus.SANDBOX_ERROR
    assert dead_url in result.message and failing_url in result.message


def test_the_reward_scores_through_a_pool_with_a_dead_host(live_url, dead_url):
    reward = get_reward("code_tests", backend="remote", base_url=f"{dead_url},{live_url}")
    try:
        tests = {"tests": {"stdio": [{"input": "1 2\n", "output": "3\n"}]}}
        right = "```python\na, b = map(int, input().split())\nprint(a + b)\n```"
        wrong = "```python\nprint(0)\n```"
        assert [r.score for r in reward.score_batch([right, wrong] * 3, [tests] * 6)] == [1.0, 0.0] * 3
    finally:
        reward.close()


def test_bad_endpoint_lists_are_refused():
    with pytest.raises(ValueError):
        RemoteSandbox("http://127.0.0.1:1,ftp://example")
    with pytest.raises(ValueError):
        RemoteSandbox(" , ")
