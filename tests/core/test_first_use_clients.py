"""Judge clients are lazy starts: 16 threads arriving together on first use build exactly one (a second embedded
judge client would be a second llama.cpp server that nobody closes).

Each build is slowed a little (the real build, wrapped) so that every thread arrives while the first one is still
building; the unguarded ``if self._client is None`` built one client per thread here.
"""

from __future__ import annotations

import pickle
import threading
import time
from collections.abc import Callable
from typing import Any

import pytest

from rewardsmith import get_reward
from rewardsmith.first_use import build_once
from rewardsmith.judges.clients.factory import JudgeClientConfig
from rewardsmith.rewards.math.judge_fallback import JudgeFallback
from tests.support.fault_server import FaultServer

THREADS = 16


@pytest.fixture
def server():
    with FaultServer(default_answer="Score: 4") as running:
        yield running


@pytest.fixture
def builds(monkeypatch) -> list[Any]:
    """Every client built through :meth:`JudgeClientConfig.build`, each build taking 50 ms."""
    built: list[Any] = []
    real_build = JudgeClientConfig.build

    def slow_build(self):
        time.sleep(0.05)
        client = real_build(self)
        built.append(client)
        return client

    monkeypatch.setattr(JudgeClientConfig, "build", slow_build)
    return built


def _together(work: Callable[[], Any]) -> list[Any]:
    barrier = threading.Barrier(THREADS)
    results: list[Any] = [None] * THREADS
    errors: list[BaseException] = []

    def run(i: int) -> None:
        barrier.wait()
        try:
            results[i] = work()
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(THREADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert not errors, errors
    return results


def _client_config(server: FaultServer) -> dict[str, Any]:
    return {"backend": "openai", "model": "fault-judge", "base_url": server.base_url, "max_retries": 3}


@pytest.mark.parametrize("mode", ["rubric", "pairwise"])
def test_llm_judge_builds_one_client_and_one_strategy(server, builds, mode):
    reward = get_reward("llm_judge", {"mode": mode, "rubric": "Correct?", "client": _client_config(server)})
    strategies = _together(lambda: reward.strategy)
    assert len(builds) == 1
    assert all(s is strategies[0] for s in strategies)
    assert strategies[0].client is builds[0] is reward.client


def test_llm_judge_scores_from_sixteen_threads_with_one_client(server, builds):
    reward = get_reward("llm_judge", {"mode": "rubric", "rubric": "Correct?", "client": _client_config(server)})
    scores = _together(lambda: reward(["4"], prompts=["What is 2+2?"]))
    assert len(builds) == 1
    assert scores == [[pytest.approx((3.7 - 1) / 4)]] * THREADS  # " 4" at 0.7, " 3" at 0.3 on 1..5


def test_judge_reward_still_pickles_after_first_use(server, builds):
    reward = get_reward("llm_judge", {"mode": "rubric", "rubric": "Correct?", "client": _client_config(server)})
    assert reward.client is builds[0]
    clone = pickle.loads(pickle.dumps(reward))
    assert clone._client is None  # rebuilt in the new process, not copied
    assert _together(lambda: clone.client)[0] is builds[1] and len(builds) == 2


def test_math_fallback_builds_one_judge_and_one_client(server, builds):
    reward = get_reward("math_equivalence", {"llm_fallback": _client_config(server)})
    try:
        fallbacks = _together(reward._fallback)
        assert all(f is fallbacks[0] for f in fallbacks)
        clients = _together(fallbacks[0].client)
        assert len(builds) == 1 and all(c is builds[0] for c in clients)
    finally:
        reward.close()


def test_judge_fallback_client_once(server, builds):
    fallback = JudgeFallback(_client_config(server))
    clients = _together(fallback.client)
    assert len(builds) == 1 and all(c is builds[0] for c in clients)


def test_build_once_is_reentrant_and_retries_after_a_failed_build():
    class Owner:
        inner = None
        outer = None

    owner = Owner()
    assert build_once(owner, "outer", lambda: ("outer", build_once(owner, "inner", lambda: "inner"))) == (
        "outer",
        "inner",
    )

    calls: list[int] = []

    def failing() -> str:
        calls.append(1)
        raise OSError("port in use")

    other = Owner()
    with pytest.raises(OSError):
        build_once(other, "inner", failing)
    assert build_once(other, "inner", lambda: "second try") == "second try"
