"""``AuditRunner.run`` crosses through the one bridge: the same run from plain code, from a coroutine inside a running
loop (a notebook: ``asyncio.run`` refuses there) and from a plain thread, judged by a real OpenAI-compatible server
on 127.0.0.1, and a rerun there reuses every verdict."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from typing import Any

import pytest

from rewardkit.audit.generators import generate_set
from rewardkit.audit.runner import AuditRunner, load_verdicts
from rewardkit.judges.clients.factory import make_client
from rewardkit.judges.pairwise import PairwiseJudge
from tests.support.fault_server import FaultServer

ITEMS = generate_set("math", 3, seed=0)


def plain(face: Callable[[], Any]) -> Any:
    return face()


def inside_a_running_loop(face: Callable[[], Any]) -> Any:
    async def caller() -> Any:
        return face()  # the sync face called by a coroutine

    return asyncio.run(caller())


def in_a_plain_thread(face: Callable[[], Any]) -> Any:
    results: list[Any] = []
    thread = threading.Thread(target=lambda: results.append(face()))
    thread.start()
    thread.join(60)
    return results[0]


@pytest.mark.parametrize("where", [plain, inside_a_running_loop, in_a_plain_thread], ids=lambda f: f.__name__)
def test_audit_run_gives_the_same_run_wherever_it_is_called(where, tmp_path):
    out = tmp_path / "run"
    with FaultServer(default_answer="A") as server:
        client = make_client("openai", model="fault-judge", base_url=server.base_url, api_key="x", max_retries=0)

        def audit() -> tuple[int, int, int, int]:
            summary = AuditRunner(PairwiseJudge(client), ITEMS, out, perturbations=["authority"], progress=False).run()
            return summary.total, summary.reused, summary.judged, summary.failed

        assert where(audit) == (6, 0, 6, 0)  # 3 baselines + 3 with the cue
        assert len(server.requests) == 12  # both presentation orders of each
        assert where(audit) == (6, 6, 0, 0)
    verdicts = load_verdicts(out)
    assert len(verdicts) == 6
    # "A" at P = 0.7 in both orders: a pure position preference, averaged to a tie
    assert [v.prob_a for v in verdicts.values()] == [pytest.approx(0.5)] * 6
