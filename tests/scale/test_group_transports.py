"""A group reward scored through every transport that splits batches equals the same batch scored locally.

The reward is ``llm_judge_group`` (inside a ``weighted_sum``, so the declaration must come through a composite)
against a real HTTP judge on 127.0.0.1 that ranks each group's candidates by length: a score depends on which
other completions share the call, so a chunk that split a group would change it. Groups are formed by prompt
and the prompts are interleaved, so cutting the batch into runs of adjacent rows would split every group.
Serve and ``remote`` run here; the Ray pool runs inside the private network namespace with the two-node test
cluster (``tests/support/ray_cluster.py``), which :func:`test_ray_pool_keeps_groups_whole_in_a_private_network`
starts.
"""

from __future__ import annotations

import json
import re
from typing import Any

import httpx
import pytest

from rewardsmith.groups import chunk_plan
from rewardsmith.registry import get_reward
from tests.support.extras import require_extras
from tests.support.fault_server import FaultServer
from tests.support.judge_prompts import quoted_candidates
from tests.support.ray_cluster import IN_RAY_NETNS, SKIP_OUTSIDE, can_unshare_net, ray_missing, run_in_private_network

require_extras("serve")

from rewardsmith.adapters.runtime.serve.process import ServerProcess

PROMPTS = ["What is 2 + 2?", "Name a prime.", "Say hi."]
#: three prompts, interleaved; within each group the completions have distinct lengths
COMPLETIONS = ["4", "2", "hi", "four!", "seven", "hello", "it is 4", "thirteen", "hello there"]
ROWS_PROMPTS = [PROMPTS[i % 3] for i in range(len(COMPLETIONS))]


class RankJudgeServer(FaultServer):
    """A listwise judge that scores each shown candidate by its length rank in the group: 0 (shortest) to 10."""

    def _next(self, body: dict[str, Any]) -> str:
        action = super()._next(body)
        if action != f"answer:{self.default_answer}":
            return action
        shown = quoted_candidates(body["messages"][-1]["content"])
        order = sorted(range(len(shown)), key=lambda i: len(shown[i]))
        top = max(1, len(shown) - 1)
        scores = {str(i + 1): round(10 * order.index(i) / top) for i in range(len(shown))}
        return "answer:" + json.dumps({"scores": scores})


@pytest.fixture
def judge():
    with RankJudgeServer() as server:
        yield server


def spec(judge: RankJudgeServer) -> dict[str, Any]:
    client = {"backend": "openai", "model": "rank-judge", "base_url": judge.base_url, "max_retries": 0}
    group = {"name": "llm_judge_group", "config": {"client": client, "group_by": "prompt", "permutations": 2}}
    return {"name": "weighted_sum", "config": {"rewards": [group], "name": "ranked"}}


def local_scores(judge: RankJudgeServer) -> list[float | None]:
    return get_reward(spec(judge)["name"], spec(judge)["config"])(COMPLETIONS, prompts=ROWS_PROMPTS)


def test_the_reward_declares_its_groups_and_a_naive_cut_would_change_scores(judge) -> None:
    reward = get_reward(spec(judge)["name"], spec(judge)["config"])
    rows = [{"prompt": p} for p in ROWS_PROMPTS]
    assert reward.batch_dependency == "group"
    assert reward.groups(rows) == [[0, 3, 6], [1, 4, 7], [2, 5, 8]]
    assert chunk_plan(reward, rows, 2) == [[0, 3, 6], [1, 4, 7], [2, 5, 8]]
    assert chunk_plan(reward, rows, 6) == [[0, 1, 3, 4, 6, 7], [2, 5, 8]]
    local = reward(COMPLETIONS, prompts=ROWS_PROMPTS)
    assert local == [0.0, 0.0, 0.0, 0.5, 0.5, 0.5, 1.0, 1.0, 1.0]
    naive = [s for i in range(0, 9, 2) for s in reward(COMPLETIONS[i : i + 2], prompts=ROWS_PROMPTS[i : i + 2])]
    assert naive != local  # the judge really is relative: a split group scores differently


@pytest.mark.slow
def test_serve_and_remote_with_small_chunks_equal_local(judge) -> None:
    local = local_scores(judge)
    with ServerProcess({"rewards": [spec(judge)]}, "--chunk-size", "2", "--batch-wait-ms", "20") as server:
        described = {r["name"]: r for r in httpx.get(server.url + "/v1/rewards", timeout=10).json()["rewards"]}
        assert described["ranked"]["batch_dependency"] == "group"
        body = {"reward": "ranked", "completions": COMPLETIONS, "columns": {"prompt": ROWS_PROMPTS}}
        served = httpx.post(server.url + "/v1/score", json=body, timeout=60).json()
        assert served["scores"] == local, served["reasons"]
        remote = get_reward("remote", {"urls": [server.url], "reward": "ranked", "chunk_size": 2})
        assert remote(COMPLETIONS, prompts=ROWS_PROMPTS) == local
        assert remote.batch_dependency == "batch"  # the server's groups are its own: the batch goes whole
        # group_size stays an override: groups of three adjacent rows, here each a group of its own prompt
        adjacent = [PROMPTS[i // 3] for i in range(9)]
        override = get_reward("remote", {"urls": [server.url], "reward": "ranked", "chunk_size": 4, "group_size": 3})
        assert override(COMPLETIONS, prompts=adjacent) == local_reward(judge)(COMPLETIONS, prompts=adjacent)


def local_reward(judge: RankJudgeServer):
    return get_reward(spec(judge)["name"], spec(judge)["config"])


@pytest.mark.skipif(not IN_RAY_NETNS, reason=SKIP_OUTSIDE)
@pytest.mark.skipif(ray_missing() is not None, reason=str(ray_missing()))
def test_ray_pool_with_small_chunks_equals_local(judge) -> None:
    from rewardsmith.ray import RayPool
    from tests.support.ray_cluster import shared_cluster

    pool = RayPool(
        {"reward": spec(judge), "num_actors": 2, "actor_num_cpus": 0.5, "address": shared_cluster().address,
         "chunk_size": 2}
    )  # fmt: skip
    try:
        assert pool.batch_dependency == "group"
        assert pool(COMPLETIONS, prompts=ROWS_PROMPTS) == local_scores(judge)
    finally:
        pool.close()


@pytest.mark.slow
@pytest.mark.skipif(IN_RAY_NETNS, reason="already inside the private network namespace")
def test_ray_pool_keeps_groups_whole_in_a_private_network() -> None:
    if ray_missing():
        pytest.skip(str(ray_missing()))
    if not can_unshare_net():
        pytest.skip("unshare --net --pid is not permitted here (needs root); the Ray cluster tests cannot run")
    result = run_in_private_network(
        ["tests/scale/test_group_transports.py::test_ray_pool_with_small_chunks_equals_local"]
    )
    output = result.stdout + result.stderr
    assert result.returncode == 0, output[-6000:]
    assert re.search(r"\b1 passed", output), output[-3000:]
