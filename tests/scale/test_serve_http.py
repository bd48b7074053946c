"""``rewardsmith serve`` for real: the CLI in a child process on 127.0.0.1, driven over HTTP.

Slow work is real work: ``code_tests`` on a completion that sleeps before defining ``f``, so a sample takes
a known time and, once done, scores 1.0. Every refusal is checked together with the server still serving.
"""

from __future__ import annotations

import json
import os
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from tests.support.extras import require_extras

require_extras("serve")

import httpx
import pytest

from rewardsmith import get_reward
from rewardsmith.adapters.runtime.serve.process import ServerProcess

pytestmark = pytest.mark.slow

GOOD = "<think>2+2=4</think> 4"
TESTS = {"asserts": ["assert f() == 1"]}
SPEC = [
    "think_format",
    {"name": "math_equivalence", "config": {"timeout_s": 5, "workers": 1}},
    {"name": "code_tests", "config": {"timeout_s": 20}},
]
LIMIT_BYTES = 64 * 1024
MAX_SAMPLES = 50


def code(sleep_s: float = 0.0, value: int = 1) -> str:
    return f"```python\nimport time\ntime.sleep({sleep_s})\ndef f():\n    return {value}\n```"


def post(url: str, path: str, body: Any, **kwargs: Any) -> httpx.Response:
    return httpx.post(url + path, json=body, timeout=60, **kwargs)


def wait_for(condition, timeout_s: float = 20.0) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.05)
    raise AssertionError("condition not reached in time")


def health(url: str) -> dict[str, Any]:
    return httpx.get(url + "/healthz", timeout=10).json()


def still_serving(url: str) -> None:
    response = post(url, "/v1/score", {"reward": "think_format", "completions": [GOOD]})
    assert response.status_code == 200 and response.json()["scores"] == [1.0]


@pytest.fixture(scope="module")
def server():
    args = ("--workers", "1", "--max-queue", "1", "--max-body-mb", str(LIMIT_BYTES / 2**20))
    args += ("--settings", json.dumps({"max_samples": MAX_SAMPLES}))
    with ServerProcess(SPEC, *args) as running:
        yield running.url


@pytest.fixture(scope="module")
def secured(tmp_path_factory):
    with ServerProcess(["think_format"], "--token-env", "RK_TEST_TOKEN", env={"RK_TEST_TOKEN": "t0ken"}) as running:
        yield running.url


# -- endpoints -------------------------------------------------------------------------------------------
def test_health_lists_rewards_and_capacity(server: str) -> None:
    body = health(server)
    assert body == {
        "status": "ok",
        "rewards": ["think_format", "math_equivalence", "code_tests"],
        "workers": 1,
        "busy": 0,
        "queued": 0,
        "max_queue": 1,
    }


def test_rewards_endpoint_gives_names_config_and_label_columns(server: str) -> None:
    rewards = {r["name"]: r for r in httpx.get(server + "/v1/rewards", timeout=10).json()["rewards"]}
    assert rewards["math_equivalence"]["config"]["runtime"]["timeout_s"] == 5
    assert rewards["math_equivalence"]["label_column"] == "solution"
    assert rewards["code_tests"]["label_column"] == "tests"


def test_scores_equal_in_process_scoring(server: str) -> None:
    completions = [GOOD, "4", [{"role": "assistant", "content": GOOD}], 5, None]
    response = post(server, "/v1/score", {"reward": "think_format", "completions": completions, "request_id": "r1"})
    assert response.status_code == 200
    body = response.json()
    local = get_reward("think_format").details(completions)
    assert body["scores"] == [r.score for r in local] == [1.0, 0.0, 1.0, None, None]
    assert body["reasons"] == [r.reason for r in local]
    assert body["unscorable"] == 2 and body["request_id"] == "r1"
    assert len(body["timings_s"]) == 5 and all(t >= 0 for t in body["timings_s"])

    completions = [r"\boxed{(x-1)(x+1)}", r"\boxed{7}", "no answer"]
    columns = {"solution": ["x^2-1", "8", "3"], "prompts": ["p1", "p2", "p3"]}
    body = post(server, "/v1/score", {"reward": "math_equivalence", "completions": completions, "columns": columns})
    local = get_reward("math_equivalence", {"timeout_s": 5, "workers": 1}).details(
        completions, solution=columns["solution"]
    )
    assert body.json()["scores"] == [r.score for r in local] == [1.0, 0.0, 0.0]
    assert body.json()["reasons"] == [r.reason for r in local]


def test_metrics_count_requests_latency_and_unscorable_reasons(server: str) -> None:
    post(server, "/v1/score", {"reward": "math_equivalence", "completions": ["x"], "columns": {"solution": [None]}})
    text = httpx.get(server + "/metrics", timeout=10).text
    for name in (
        "rewardsmith_requests_total",
        "rewardsmith_requests_in_flight",
        "rewardsmith_queue_depth",
        "rewardsmith_request_latency_seconds_bucket",
        "rewardsmith_sample_latency_seconds_bucket",
    ):
        assert name in text, name
    assert 'rewardsmith_requests_total{endpoint="/v1/score",status="200"}' in text
    assert 'rewardsmith_unscorable_total{reason="gold unreadable",reward="math_equivalence"}' in text


def _hard_timeout_workers(pid: int) -> list[int]:
    """Pids of the hard-timeout worker processes (math's symbolic stage) that process ``pid`` started."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        parent = int(stat.rsplit(")", 1)[1].split()[1])
        if parent == pid and b"rewardsmith.hard_timeout" in cmdline:
            found.append(int(entry))
    return found


def test_the_first_request_after_ready_meets_warm_workers() -> None:
    # timeout_s=1 is shorter than a worker's start on a loaded machine: a server that said "ready" with its
    # pool cold used to answer this first request None ("no symbolic worker ready").
    spec = [{"name": "math_equivalence", "config": {"timeout_s": 1, "workers": 1}}]
    # a host worker budget of its own: the pools alive in this test session would otherwise take their shares of it
    private = {"REWARDSMITH_RUNTIME_DIR": tempfile.mkdtemp(prefix="rewardsmith-serve-budget-")}
    with ServerProcess(spec, env={**os.environ, **private}) as running:
        assert len(_hard_timeout_workers(running.pid)) == 2  # the worker and its spare, started before "ready"
        completions = [r"\boxed{(x-1)(x+1)}", r"\boxed{(x-1)(x+2)}"]
        body = {"reward": "math_equivalence", "completions": completions, "columns": {"solution": ["x^2-1"] * 2}}
        first = post(running.url, "/v1/score", body).json()
        assert first["scores"] == [1.0, 0.0], first["reasons"]
        assert all("sympy" in reason for reason in first["reasons"]), first["reasons"]


# -- bad input -------------------------------------------------------------------------------------------
BAD_REQUESTS = [
    (b"not json", 400, "body is not valid JSON"),
    (b"[1, 2]", 400, "body must be a JSON object"),
    (b'{"reward": "nope", "completions": []}', 404, "unknown reward 'nope'; served: think_format"),
    (b'{"reward": "think_format", "completions": "abc"}', 422, "completions: Input should be a valid list"),
    (b'{"reward": "think_format", "completions": ["a"], "columns": {"x": 1}}', 422, "columns.x"),
    (b'{"reward": "think_format", "completions": ["a"], "colour": 1}', 422, "colour: Extra inputs"),
    (b'{"reward": 3, "completions": ["a"]}', 422, "reward: Input should be a valid string"),
    (b'{"reward": "think_format", "completions": ["a"], "deadline_s": -1}', 422, "deadline_s"),
    (
        b'{"reward": "think_format", "completions": ["a", "b"], "columns": {"solution": [1]}}',
        422,
        "column 'solution' has 1 value for 2 completions",
    ),
    (b'{"query": "not a list"}', 422, "query: Input should be a valid list"),
]


@pytest.mark.parametrize("body, status, message", BAD_REQUESTS)
def test_bad_input_gets_a_one_line_4xx_and_the_server_keeps_serving(
    server: str, body: bytes, status: int, message: str
) -> None:
    path = "/get_reward" if b"query" in body else "/v1/score"
    response = httpx.post(server + path, content=body, headers={"content-type": "application/json"}, timeout=30)
    assert response.status_code == status, response.text
    error = response.json()["error"]
    assert message in error and "\n" not in error
    still_serving(server)


def test_unknown_route_and_too_many_samples(server: str) -> None:
    assert httpx.get(server + "/nope", timeout=10).status_code == 404
    many = post(server, "/v1/score", {"reward": "think_format", "completions": [GOOD] * (MAX_SAMPLES + 1)})
    assert many.status_code == 413
    assert many.json()["error"] == f"{MAX_SAMPLES + 1} completions in one request; the limit is {MAX_SAMPLES}"
    still_serving(server)


def test_body_over_the_limit_is_413_declared_or_streamed(server: str) -> None:
    big = {"reward": "think_format", "completions": ["x" * LIMIT_BYTES]}
    response = post(server, "/v1/score", big)
    assert response.status_code == 413 and "exceeds" in response.json()["error"]

    def chunks():
        payload = json.dumps(big).encode()
        for start in range(0, len(payload), 8192):
            yield payload[start : start + 8192]

    streamed = httpx.post(server + "/v1/score", content=chunks(), timeout=30)  # no Content-Length: chunked
    assert streamed.status_code == 413
    still_serving(server)


# -- OpenRLHF ---------------------------------------------------------------------------------------------
PROMPT = "<|im_start|>user\nWhat is 2+2?<|im_end|>\n<|im_start|>assistant\n"


def openrlhf_client_post(url: str, queries: list[str], prompts: list[str], labels: list[Any]) -> dict[str, Any]:
    """What OpenRLHF's SingleTurnAgentExecutor does: aiohttp POST of {query, prompts, labels}, raise_for_status,
    then read ``scores`` (falling back to ``rewards``) and turn every ``extra_logs`` value into a tensor."""
    import asyncio

    aiohttp = pytest.importorskip("aiohttp")

    async def call() -> dict[str, Any]:
        payload = {"query": queries, "prompts": prompts, "labels": labels}
        timeout = aiohttp.ClientTimeout(total=180)
        async with aiohttp.ClientSession(timeout=timeout) as session, session.post(url, json=payload) as response:
            response.raise_for_status()
            return await response.json()

    info = asyncio.run(call())
    scores = info.get("scores")
    if scores is None:
        scores = info.get("rewards")
    torch = pytest.importorskip("torch")
    for value in (info.get("extra_logs") or {}).values():
        torch.tensor([value])  # OpenRLHF's conversion: must be numeric
    torch.tensor([info["rewards"]])
    return info


def test_openrlhf_client_shape(server: str) -> None:
    queries = [PROMPT + GOOD + "<|im_end|>", PROMPT + "4<|im_end|>"]
    info = openrlhf_client_post(server + "/get_reward", queries, [PROMPT, PROMPT], ["4", "4"])
    assert info["rewards"] == info["scores"] == [1.0, 0.0]  # /get_reward serves the first reward: think_format
    assert info["extra_logs"] == {"unscorable": [0.0, 0.0]}
    assert info["reasons"][0] == "well formatted"

    # A named reward, labels as its gold column, and an unscorable sample flagged (OpenRLHF needs a number).
    queries = [PROMPT + r"\boxed{4}</s>", PROMPT + r"\boxed{5}", PROMPT + r"\boxed{4}"]
    info = openrlhf_client_post(server + "/get_reward/math_equivalence", queries, [PROMPT] * 3, ["4", "4", None])
    assert info["rewards"] == [1.0, 0.0, 0.0]
    assert info["extra_logs"] == {"unscorable": [0.0, 0.0, 1.0]}
    assert "gold unreadable" in info["reasons"][2]


def test_openrlhf_sharding_sends_empty_lists_to_extra_servers(server: str) -> None:
    # With one query and two servers, OpenRLHF's client posts the second server empty lists.
    info = openrlhf_client_post(server + "/get_reward", [], [], [])
    assert info == {"rewards": [], "scores": [], "extra_logs": {"unscorable": []}, "reasons": []}


def test_openrlhf_code_labels_are_tests(server: str) -> None:
    queries = [PROMPT + code(), PROMPT + code(value=2)]
    labels = [json.dumps(TESTS), TESTS]  # verl/OpenRLHF code datasets carry tests as JSON text
    info = openrlhf_client_post(server + "/get_reward/code_tests", queries, [PROMPT, PROMPT], labels)
    assert info["rewards"] == [1.0, 0.0], info["reasons"]


# -- capacity, deadline ---------------------------------------------------------------------------------------
def test_full_queue_answers_429_with_retry_after_and_admitted_requests_finish(server: str) -> None:
    slow = {"reward": "code_tests", "completions": [code(1.5)], "columns": {"tests": [TESTS]}}
    answers: dict[str, httpx.Response] = {}

    def send(key: str) -> None:
        answers[key] = post(server, "/v1/score", slow)

    first = threading.Thread(target=send, args=("first",))
    first.start()
    wait_for(lambda: health(server)["busy"] == 1)
    second = threading.Thread(target=send, args=("second",))
    second.start()
    wait_for(lambda: health(server)["queued"] == 1)
    refused = post(server, "/v1/score", slow)
    assert refused.status_code == 429
    assert int(refused.headers["retry-after"]) >= 1
    assert refused.json()["queued"] == refused.json()["max_queue"] == 1
    first.join(60)
    second.join(60)
    assert answers["first"].json()["scores"] == answers["second"].json()["scores"] == [1.0]
    wait_for(lambda: health(server)["busy"] == 0)
    still_serving(server)


def test_deadline_overrun_is_unscorable_with_reason_and_keeps_its_worker(server: str) -> None:
    body = {
        "reward": "code_tests",
        "completions": [code(0), code(8)],
        "columns": {"tests": [TESTS, TESTS]},
        "deadline_s": 3,
    }
    started = time.monotonic()
    response = post(server, "/v1/score", body)
    elapsed = time.monotonic() - started
    assert response.status_code == 200
    assert response.json()["scores"] == [1.0, None]
    assert response.json()["reasons"][1] == "deadline: not scored within 3 s"
    assert elapsed < 6, elapsed
    assert health(server)["busy"] == 1  # the overrunning sample still runs and holds the worker
    wait_for(lambda: health(server)["busy"] == 0)
    text = httpx.get(server + "/metrics", timeout=10).text
    assert 'rewardsmith_unscorable_total{reason="deadline",reward="code_tests"}' in text


# -- auth ------------------------------------------------------------------------------------------------
def test_bearer_token_is_required_except_for_health(secured: str) -> None:
    body = {"reward": "think_format", "completions": [GOOD]}
    assert httpx.get(secured + "/healthz", timeout=10).status_code == 200
    missing = post(secured, "/v1/score", body)
    assert missing.status_code == 401 and missing.json()["error"] == "missing bearer token"
    assert missing.headers["www-authenticate"] == "Bearer"
    wrong = post(secured, "/v1/score", body, headers={"authorization": "Bearer t0kem"})
    assert wrong.status_code == 401 and wrong.json()["error"] == "wrong bearer token"
    basic = post(secured, "/v1/score", body, headers={"authorization": "Basic dDBrZW4="})
    assert basic.status_code == 401
    for path in ("/metrics", "/v1/rewards"):
        assert httpx.get(secured + path, timeout=10).status_code == 401
    right = post(secured, "/v1/score", body, headers={"authorization": "Bearer t0ken"})
    assert right.status_code == 200 and right.json()["scores"] == [1.0]
    assert httpx.get(secured + "/metrics", headers={"authorization": "Bearer t0ken"}, timeout=10).status_code == 200


def test_server_refuses_to_start_without_the_named_token(tmp_path) -> None:
    with pytest.raises(RuntimeError, match="RK_UNSET_TOKEN"):
        ServerProcess(["think_format"], "--token-env", "RK_UNSET_TOKEN", startup_timeout_s=60).start()


# -- drain -----------------------------------------------------------------------------------------------
def test_sigterm_drains_in_flight_requests_and_refuses_new_ones() -> None:
    with ServerProcess(SPEC[2:], "--workers", "2") as running:
        url = running.url
        answers: dict[int, Any] = {}
        slow = {"reward": "code_tests", "completions": [code(3.0)], "columns": {"tests": [TESTS]}}

        def send(number: int) -> None:
            try:
                answers[number] = post(url, "/v1/score", slow)
            except Exception as exc:  # kept for the assertion below, with the server's log
                answers[number] = exc

        threads = [threading.Thread(target=send, args=(number,)) for number in range(3)]
        # One at a time, so each is its own batch: two hold the two workers, the third waits in the queue.
        for thread, (busy, queued) in zip(threads, [(1, 0), (2, 0), (2, 1)], strict=True):
            thread.start()
            wait_for(lambda busy=busy, queued=queued: (health(url)["busy"], health(url)["queued"]) == (busy, queued))
        running.terminate()
        wait_for(lambda: httpx.get(url + "/healthz", timeout=10).status_code == 503, timeout_s=5)
        assert health(url)["status"] == "draining"
        refused = post(url, "/v1/score", {"reward": "code_tests", "completions": []})
        assert refused.status_code == 503 and "draining" in refused.json()["error"]
        for thread in threads:
            thread.join(60)
        statuses = [getattr(answers.get(n), "status_code", answers.get(n)) for n in range(3)]
        assert statuses == [200, 200, 200], (statuses, running.stderr()[-3000:])  # the queued one finishes too
        assert all(answers[n].json()["scores"] == [1.0] for n in range(3)), [answers[n].json() for n in range(3)]
        assert running.wait(30) == 0, running.stderr()[-3000:]
