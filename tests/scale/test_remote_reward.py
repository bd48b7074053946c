"""The ``remote`` reward against real ``rewardsmith serve`` processes on 127.0.0.1.

Results must equal in-process scoring sample for sample (scores and reasons), also when a server is killed
in the middle of a batch; an infrastructure failure must come back ``None`` with a reason, never 0.0.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import pickle
import socket
import threading
import time
from typing import Any

from tests.support.extras import require_extras

require_extras("serve")

import httpx
import pytest

import rewardsmith.adapters.runtime.remote  # noqa: F401  (registers `remote`)
from rewardsmith import ConfigError, get_reward
from rewardsmith.adapters.runtime.remote import RemoteReward
from rewardsmith.adapters.runtime.serve.process import ServerProcess

pytestmark = pytest.mark.slow

GOOD = "<think>2+2=4</think> 4"
TESTS = {"asserts": ["assert f() == 1"]}
SPEC = [
    "think_format",
    {"name": "math_equivalence", "config": {"timeout_s": 5, "workers": 1}},
    {"name": "code_tests", "config": {"timeout_s": 20}},
]
MATH = [r"\boxed{4}", r"\boxed{(x-1)(x+1)}", "no answer", r"\boxed{7}", 5, r"\frac12", r"\boxed{0.5}"]
GOLD = ["4", "x^2-1", "3", "8", "1", "0.5", r"\frac{1}{2}"]


def code(sleep_s: float = 0.0, value: int = 1) -> str:
    return f"```python\nimport time\ntime.sleep({sleep_s})\ndef f():\n    return {value}\n```"


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def requests_seen(url: str) -> float:
    text = httpx.get(url + "/metrics", timeout=10).text
    lines = [line for line in text.splitlines() if line.startswith('rewardsmith_requests_total{endpoint="/v1/score"')]
    return sum(float(line.rsplit(" ", 1)[1]) for line in lines)


def same_results(remote: list[Any], local: list[Any]) -> None:
    assert [r.score for r in remote] == [r.score for r in local]
    assert [r.reason for r in remote] == [r.reason for r in local]


@pytest.fixture(scope="module")
def servers():
    with ServerProcess(SPEC, "--workers", "2") as a, ServerProcess(SPEC, "--workers", "2") as b:
        yield [a.url, b.url]


# -- equal to local --------------------------------------------------------------------------------------
def test_remote_equals_local_across_two_servers(servers: list[str]) -> None:
    before = [requests_seen(url) for url in servers]
    remote = get_reward("remote", {"urls": servers, "reward": "math_equivalence", "chunk_size": 2})
    local = get_reward("math_equivalence", {"timeout_s": 5, "workers": 1})
    assert remote.__name__ == "math_equivalence"
    same_results(remote.details(MATH, solution=GOLD), local.details(MATH, solution=GOLD))
    after = [requests_seen(url) for url in servers]
    assert all(b > a for a, b in zip(before, after, strict=True)), (before, after)  # both servers took chunks

    # The in-process contract holds through the wire: misaligned columns and chat completions.
    chat = [[{"role": "assistant", "content": c}] for c in ("<think>a</think> b", "no tags")]
    fmt = get_reward("remote", {"urls": servers, "reward": "think_format", "name": "fmt"})
    assert fmt.__name__ == "fmt"
    same_results(fmt.details(chat), get_reward("think_format").details(chat))
    # A misaligned column is not sent: the server's reason for the missing column carries the misalignment
    # first (the client cannot know which columns a served reward requires before asking it).
    misaligned = remote.details(["a", "b"], solution=["1"])
    assert [r.score for r in misaligned] == [None, None]
    assert all(r.reason.startswith("column 'solution' has 1 value for 2 completions") for r in misaligned)


def test_chunks_waiting_for_a_slot_go_to_the_least_busy_server(servers: list[str]) -> None:
    before = [requests_seen(url) for url in servers]
    remote = get_reward("remote", {"urls": servers, "reward": "think_format", "chunk_size": 1, "max_in_flight": 2})
    assert remote([GOOD] * 40) == [1.0] * 40
    sent = [requests_seen(url) - b for url, b in zip(servers, before, strict=True)]
    assert sum(sent) == 40 and min(sent) >= 10, sent


def test_remote_pickles_and_scores_on_the_async_path(servers: list[str]) -> None:
    remote = get_reward("remote", {"urls": servers, "reward": "math_equivalence", "chunk_size": 3})
    remote.details(["x"], solution=["1"])  # health state observed in this process...
    clone = pickle.loads(pickle.dumps(remote))
    assert clone._down_until == {} and clone._known_good == set()  # ...is not shipped
    assert clone.config == remote.config and clone.__name__ == remote.__name__
    scores = asyncio.run(clone.as_async()(MATH, solution=GOLD))
    assert scores == get_reward("math_equivalence", {"timeout_s": 5, "workers": 1})(MATH, solution=GOLD)


def test_group_size_keeps_groups_in_one_chunk() -> None:
    remote = RemoteReward({"urls": ["http://127.0.0.1:1"], "reward": "x", "chunk_size": 10, "group_size": 4})
    assert [len(c) for c in remote._chunks([{}] * 20)] == [8, 8, 4]
    assert [len(c) for c in remote._chunks([{}] * 3)] == [3]


# -- faults ---------------------------------------------------------------------------------------------
def test_fail_over_when_a_server_is_killed_mid_batch() -> None:
    completions = [code(0.4, value=1 if i % 3 else 2) for i in range(12)]
    tests = [TESTS] * len(completions)
    with ServerProcess(SPEC[2:], "--workers", "2") as a, ServerProcess(SPEC[2:], "--workers", "2") as b:
        remote = get_reward(
            "remote", {"urls": [a.url, b.url], "reward": "code_tests", "chunk_size": 2, "max_in_flight": 4}
        )
        found: dict[str, Any] = {}
        worker = threading.Thread(target=lambda: found.update(results=remote.details(completions, tests=tests)))
        worker.start()
        deadline = time.monotonic() + 30
        while httpx.get(a.url + "/healthz", timeout=10).json()["busy"] == 0:
            assert time.monotonic() < deadline, "server a never got work"
            time.sleep(0.02)
        a.kill()  # SIGKILL: its chunks in flight are lost with it
        killed_at = time.monotonic()
        worker.join(120)
        assert not worker.is_alive()
        assert time.monotonic() - killed_at > 0.1  # the batch was still running when a died
        assert remote._failures.get(a.url, 0) >= 1
    local = get_reward("code_tests", {"timeout_s": 20}).details(completions, tests=tests)
    same_results(found["results"], local)
    assert [r.score for r in local] == [0.0 if i % 3 == 0 else 1.0 for i in range(12)]


def test_no_server_reachable_is_unscorable_with_reason_never_zero() -> None:
    dead = [f"http://127.0.0.1:{closed_port()}", f"http://127.0.0.1:{closed_port()}"]
    remote = get_reward("remote", {"urls": dead, "reward": "think_format", "max_attempts": 3, "backoff_s": 0.05})
    started = time.monotonic()
    results = remote.details([GOOD, "4"])
    assert time.monotonic() - started < 10
    assert [r.score for r in results] == [None, None]
    assert results[0].reason.startswith("remote: infrastructure failure: no server scored this chunk in 3 attempts")
    assert "ConnectError" in results[0].reason


def test_refusals_are_not_retried_and_name_the_cause(servers: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    unknown = get_reward("remote", {"urls": servers[:1], "reward": "no_such_reward", "max_attempts": 2})
    (result,) = unknown.details([GOOD])
    assert result.score is None and result.reason.startswith("remote: HTTP 404: unknown reward 'no_such_reward'")

    monkeypatch.setenv("RK_REMOTE_TOKEN", "t0ken")
    with ServerProcess(["think_format"], "--token-env", "RK_REMOTE_TOKEN") as secured:
        right = get_reward("remote", {"urls": [secured.url], "reward": "think_format", "token_env": "RK_REMOTE_TOKEN"})
        assert right([GOOD]) == [1.0]
        monkeypatch.setenv("RK_REMOTE_TOKEN", "wrong")
        (refused,) = right.details([GOOD])
        assert refused.score is None and refused.reason == "remote: HTTP 401: wrong bearer token"


def test_a_draining_server_is_left_for_the_others() -> None:
    with ServerProcess(SPEC[2:], "--workers", "1") as a, ServerProcess(SPEC[2:], "--workers", "2") as b:
        slow = {"reward": "code_tests", "completions": [code(3.0)], "columns": {"tests": [TESTS]}}
        holder = threading.Thread(target=lambda: httpx.post(a.url + "/v1/score", json=slow, timeout=60))
        holder.start()
        deadline = time.monotonic() + 30
        while httpx.get(a.url + "/healthz", timeout=10).json()["busy"] == 0:
            assert time.monotonic() < deadline
            time.sleep(0.02)
        a.terminate()  # a drains its one request for about 3 s, answering 503 to anything new
        while httpx.get(a.url + "/healthz", timeout=10).status_code != 503:
            assert time.monotonic() < deadline
            time.sleep(0.02)
        remote = get_reward("remote", {"urls": [a.url, b.url], "reward": "code_tests", "chunk_size": 1})
        results = remote.details([code(), code(value=3)], tests=[TESTS, TESTS])
        assert [r.score for r in results] == [1.0, 0.0]
        assert a.url in remote._down_until
        holder.join(60)
        assert a.wait(30) == 0


@pytest.mark.parametrize(
    "config, message",
    [
        ({"urls": [], "reward": "x"}, "urls"),
        ({"urls": ["ftp://host"], "reward": "x"}, "not an http"),
        ({"urls": ["http://h:1"], "reward": "x", "token_env": "RK_SURELY_UNSET"}, "RK_SURELY_UNSET"),
        ({"urls": ["http://h:1"]}, "reward"),
    ],
)
def test_bad_config_fails_at_construction(config: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        get_reward("remote", config)


def test_urls_are_normalised() -> None:
    remote = RemoteReward({"urls": ["http://h:1/", "http://h:2/v1/score"], "reward": "x"})
    assert remote.config.urls == ["http://h:1", "http://h:2"]


# -- verl -----------------------------------------------------------------------------------------------
def verl_style(raw_fn, **reward_kwargs):
    """How verl 0.9 wraps a custom reward function (verl/trainer/ppo/reward.py, get_custom_reward_fn)."""

    async def call_with_kwargs_async(raw, extra, *args, **kwargs):
        return await raw(*args, **{**kwargs, **extra})

    return functools.partial(call_with_kwargs_async, raw_fn, reward_kwargs)


def test_verl_async_compute_score_calls_the_service(servers: list[str]) -> None:
    from rewardsmith.adapters.trainers.verl import compute_score, compute_score_remote

    fn = verl_style(compute_score_remote, remote={"urls": servers})
    assert inspect.iscoroutinefunction(fn)  # verl's reward loop awaits it instead of using a thread
    samples = [
        ("openai/gsm8k", f"The answer is #### {i % 8}", str(i % 4), {"index": i, "num_turns": None}) for i in range(40)
    ]
    samples.append(("openai/gsm8k", "no answer", None, {}))  # unreadable gold: unscorable, flagged
    samples.append(("some/chat", "hi", "x", {}))  # no route

    async def run_all() -> list[dict[str, Any]]:
        return list(
            await asyncio.gather(
                *(fn(data_source=d, solution_str=s, ground_truth=g, extra_info=e) for d, s, g, e in samples)
            )
        )

    remote = asyncio.run(run_all())
    local = [compute_score(d, s, g, e) for d, s, g, e in samples]
    assert remote == local
    assert sum(r["score"] for r in remote) == 20.0 and remote[-1]["unscorable"] and remote[-2]["unscorable"]


def test_verl_remote_needs_urls() -> None:
    from rewardsmith.adapters.trainers.verl import compute_score_remote

    with pytest.raises(ConfigError, match="remote"):
        asyncio.run(compute_score_remote("gsm8k", "x", "1"))


# -- TRL ---------------------------------------------------------------------------------------------------
def test_remote_rewards_in_a_real_grpo_trainer(tiny_model_dir, tmp_path) -> None:
    pytest.importorskip("trl")
    from datasets import Dataset
    from trl import GRPOTrainer

    from tests.support.trl_helpers import tiny_grpo_config

    overlong = {"max_length": 20, "buffer": 8, "unit": "tokens"}
    spec = ["think_format", {"name": "soft_overlong", "config": overlong}]
    with ServerProcess(spec) as server:
        funcs = [
            get_reward("remote", {"urls": [server.url], "reward": "think_format"}),
            get_reward("remote", {"urls": [server.url], "reward": "soft_overlong"}).as_async(),
        ]
        dataset = Dataset.from_dict({"prompt": ["What is 2 + 2?", "Say 42."] * 4})
        args = tiny_grpo_config(tmp_path, seed=0, disable_tqdm=True)
        trainer = GRPOTrainer(model=str(tiny_model_dir), reward_funcs=funcs, args=args, train_dataset=dataset)
        trainer.train()
    logs = trainer._logs
    assert trainer.reward_func_names == ["think_format", "soft_overlong"]
    completions = list(logs["completion"])
    think = get_reward("think_format")
    assert list(logs["rewards"]["think_format"]) == think(completions)
    assert list(logs["extra"]["think_format_reason"]) == [r.reason for r in think.details(completions)]
    reasons = list(logs["extra"]["soft_overlong_reason"])
    assert all("tokens" in reason for reason in reasons), reasons  # TRL's completion_ids crossed the wire
    logged = [entry for entry in trainer.state.log_history if "rewards/soft_overlong/mean" in entry]
    assert len(logged) == 2
