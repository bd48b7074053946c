"""Micro-batching in the reward server, without HTTP: coalescing, per-request answers, deadlines, capacity.

The HTTP side (a real server under OpenRLHF's client) is test_openrlhf_client.py; these pin the batcher's rules
on :class:`RewardService` with rewards whose cost is known.
"""

from __future__ import annotations

import asyncio
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from tests.support.extras import require_extras

require_extras("serve")

from rewardsmith import Reward, RewardResult
from rewardsmith.adapters.runtime.serve.admission import QueueFull
from rewardsmith.adapters.runtime.serve.service import RewardService
from rewardsmith.adapters.runtime.serve.settings import ServeSettings
from rewardsmith.adapters.runtime.serve.specs import ServedReward

SAMPLE_S = 0.05


class Echo(Reward):
    """Scores a completion as the number it holds, after sleeping; records every call's size and thread."""

    name = "echo"

    def __init__(self) -> None:
        super().__init__()
        self.calls: list[int] = []
        self.threads: set[int] = set()

    def score_batch(self, completions: list[str | None], rows: list[dict[str, Any]]) -> list[RewardResult]:
        self.calls.append(len(completions))
        self.threads.add(threading.get_ident())
        time.sleep(SAMPLE_S * float(rows[0].get("cost", 1)) if rows else 0)
        return [
            RewardResult(score=float(c), reason=f"row {r.get('id')}") for c, r in zip(completions, rows, strict=True)
        ]


def run(scenario, threads: int = 16):
    async def main():
        asyncio.get_running_loop().set_default_executor(ThreadPoolExecutor(threads))
        return await scenario()

    return asyncio.run(main())


def test_concurrent_one_sample_requests_are_scored_as_batches_with_their_own_answers() -> None:
    reward = Echo()

    async def scenario():
        service = RewardService({"echo": reward}, ServeSettings(workers=1, threads=16))
        loop_thread = threading.get_ident()
        started = time.monotonic()
        answers = await asyncio.gather(*(service.score("echo", [str(i)], {"id": [i]}) for i in range(64)))
        return answers, time.monotonic() - started, service.batchers["echo"], loop_thread

    answers, elapsed, batcher, loop_thread = run(scenario)
    assert [results[0].score for results, _ in answers] == [float(i) for i in range(64)]
    assert [results[0].reason for results, _ in answers] == [f"row {i}" for i in range(64)]
    assert batcher.batches_started == 1 and batcher.samples_started == 64  # one worker slot, one batch
    # one request per slot would take 64 x SAMPLE_S; the batch runs on 16 threads at once
    assert elapsed < 64 * SAMPLE_S / 4, elapsed
    assert loop_thread not in reward.threads  # reward work never ran on the event loop


def test_without_micro_batching_each_request_holds_the_worker_alone() -> None:
    reward = Echo()

    async def scenario():
        service = RewardService({"echo": reward}, ServeSettings(workers=1, max_batch=1, batch_wait_ms=0))
        await asyncio.gather(*(service.score("echo", [str(i)], {}) for i in range(8)))
        return service.batchers["echo"]

    assert run(scenario).batches_started == 8


def test_a_batch_is_capped_and_a_large_request_is_never_split() -> None:
    reward = Echo()

    async def scenario():
        service = RewardService({"echo": reward}, ServeSettings(workers=1, max_batch=4, chunk_size=100))
        sizes = [1, 1, 1, 10, 1, 1]
        await asyncio.gather(*(service.score("echo", ["1"] * n, {}) for n in sizes))

    run(scenario)
    assert sorted(reward.calls) == [2, 3, 10]  # 1+1+1, then the 10 alone, then 1+1


def test_whole_batch_rewards_get_one_request_per_call() -> None:
    reward = Echo()

    async def scenario():
        served = ServedReward(reward, whole_batch=True)
        service = RewardService({"echo": served}, ServeSettings(workers=2))
        await asyncio.gather(*(service.score("echo", ["1"] * 3, {}) for _ in range(4)))

    run(scenario)
    assert reward.calls == [3, 3, 3, 3]


def test_a_request_whose_deadline_passes_in_the_queue_leaves_its_batch() -> None:
    reward = Echo()

    async def scenario():
        service = RewardService({"echo": reward}, ServeSettings(workers=1, max_batch=1))
        slow = asyncio.ensure_future(service.score("echo", ["1"], {"cost": [20]}))  # holds the worker ~1 s
        await asyncio.sleep(0.1)
        late, _ = await service.score("echo", ["2"], {}, deadline_s=0.2)
        queued_after = service.admission.queued
        await slow
        return late, queued_after, service.batchers["echo"]

    late, queued_after, batcher = run(scenario)
    assert late[0].score is None and late[0].reason == "deadline: no worker free within 0.2 s"
    assert queued_after == 0
    assert batcher.samples_started == 1  # the withdrawn sample was never scored


def test_a_full_queue_refuses_at_once_and_admitted_requests_finish() -> None:
    reward = Echo()

    async def scenario():
        service = RewardService({"echo": reward}, ServeSettings(workers=1, max_queue=2, max_batch=1))
        first = asyncio.ensure_future(service.score("echo", ["1"], {"cost": [4]}))
        await asyncio.sleep(0.05)
        waiting = [asyncio.ensure_future(service.score("echo", ["1"], {})) for _ in range(2)]
        await asyncio.sleep(0)
        with pytest.raises(QueueFull) as refused:
            await service.score("echo", ["1"], {})
        done = await asyncio.gather(first, *waiting)
        return refused.value, done

    refused, done = run(scenario)
    assert refused.queued == refused.max_queue == 2
    assert all(results[0].score == 1.0 for results, _ in done)


def test_defaults_admit_a_whole_openrlhf_rollout_burst() -> None:
    settings = ServeSettings()
    assert settings.max_queue >= 1024 * 8  # --rollout.batch_size 1024 x 8 samples per prompt, one request each
    assert 0 < settings.batch_wait_ms <= 10 and settings.max_batch >= 64
