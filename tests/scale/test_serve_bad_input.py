"""Bodies a client should not send (thousands deep, a 5,000-digit number) get a one-line 400 from a real server.

Python's JSON reader raises ``RecursionError`` and a bare ``ValueError`` for these, which a server that catches
only ``JSONDecodeError`` answers with 500 — as if the server were broken and the request worth retrying.
"""

from __future__ import annotations

import httpx
import pytest

from rewardsmith.adapters.runtime.serve.process import ServerProcess

GOOD = "<think>a</think><answer>b</answer>"
DEEP = '{"reward": "think_format", "completions": ' + "[" * 5000 + "]" * 5000 + "}"
DIGITS = '{"reward": "think_format", "completions": ["x"], "deadline_s": ' + "7" * 5000 + "}"


@pytest.fixture(scope="module")
def server():
    with ServerProcess(["think_format"], "--workers", "1") as running:
        yield running.url


@pytest.mark.parametrize("path", ["/v1/score", "/get_reward"])
@pytest.mark.parametrize(
    ("body", "fragment"),
    [(DEEP, "nested too deeply"), (DIGITS, "number too long")],
    ids=["deep", "digits"],
)
def test_hostile_body_is_a_one_line_400_and_the_server_keeps_serving(server, path, body, fragment):
    response = httpx.post(server + path, content=body, headers={"content-type": "application/json"}, timeout=60)
    assert response.status_code == 400, response.text
    error = response.json()["error"]
    assert fragment in error and "\n" not in error
    ok = httpx.post(server + "/v1/score", json={"reward": "think_format", "completions": [GOOD]}, timeout=60)
    assert ok.status_code == 200
