"""``AuditRunner.run`` crosses through the one bridge: the same run from plain code, from a coroutine inside a running
loop (a notebook: ``asyncio.run`` refuses there) and from a plain thread, judged by a real OpenAI-compatible server
on 127.0.0.1, and a rerun there reuses every verdict."""

from __future__ import annotations

import pytest

from rewardsmith.audit.generators import generate_set
from rewardsmith.audit.runner import AuditRunner, load_verdicts
from rewardsmith.judges.clients.factory import make_client
from rewardsmith.judges.pairwise import PairwiseJudge
from tests.support.call_sites import CALL_SITES
from tests.support.fault_server import FaultServer

ITEMS = generate_set("math", 3, seed=0)


@pytest.mark.parametrize("where", CALL_SITES, ids=lambda f: f.__name__)
def test_audit_run_gives_the_same_run_wherever_it_is_called(where, tmp_path):
    out = tmp_path / "run"
    with FaultServer(default_answer="A") as server:
        client = make_client("openai", model="fault-judge", base_url=server.base_url, api_key="x", max_retries=0)

        def audit() -> tuple[int, int, int, int]:
            summary = AuditRunner(PairwiseJudge(client), ITEMS, out, perturbations=["authority"], progress=False).run()
            return summary.total, summary.reused, summary.judged, summary.failed

        assert where(audit) == (6, 0, 6, 0)  # 3 baselines + 3 with the cue
        assert len(server.requests) == 1 + 12  # the check request, then both presentation orders of each
        assert where(audit) == (6, 6, 0, 0)
    verdicts = load_verdicts(out)
    assert len(verdicts) == 6
    # "A" at P = 0.7 in both orders: a pure position preference, averaged to a tie
    assert [v.prob_a for v in verdicts.values()] == [pytest.approx(0.5)] * 6
