"""Judge endpoint failures during a pairs run, produced by a real HTTP server on 127.0.0.1 that answers 500:
a failed pair is counted, not recorded as a verdict, and judged by the next run."""

from __future__ import annotations

from rewardsmith.constitutions.loader import load_constitution
from rewardsmith.constitutions.pairs import PairsConfig, PairsPipeline
from rewardsmith.constitutions.prompts import PromptItem
from rewardsmith.judges.clients.factory import make_client
from rewardsmith.judges.pairwise import PairwiseJudge
from rewardsmith.store import KeyedStore
from tests.support.judge_prompts import shown_as

ITEMS = [
    PromptItem(index=i, prompt_id=f"p{i}", prompt=f"question {i}", candidates=(f"x{i}", f"y{i}")) for i in range(2)
]


def run(server, store_path):
    client = make_client(
        "openai", model="fault-model", base_url=server.base_url, api_key="local", max_retries=0, timeout=10
    )
    pipeline = PairsPipeline(PairwiseJudge(client), load_constitution("honest-concise"), PairsConfig(concurrency=1))
    with KeyedStore(store_path) as store:
        summary = pipeline.run(ITEMS, store)
        records = list(store.records())
    return summary, records


def test_http_500_is_a_retried_failure_not_an_abstain(fault_server, tmp_path):
    # both presentation orders of the first pair (the judge's check request before the run is answered normally)
    fault_server.push_when(shown_as("response-A", "x0"), "500")
    fault_server.push_when(shown_as("response-A", "y0"), "500")
    summary, records = run(fault_server, tmp_path / "pairs.jsonl")
    assert summary.failed == 1
    assert [r["prompt_id"] for r in records] == ["p1"]
    # The server always answers "A" with P(A) = 0.7: a pure position preference, averaged to a tie.
    assert records[0]["reason"] == "tie" and records[0]["prob_a"] == 0.5 and records[0]["flip"] is True

    summary, records = run(fault_server, tmp_path / "pairs.jsonl")
    assert summary.failed == 0 and summary.resumed == 1
    assert sorted(r["prompt_id"] for r in records) == ["p0", "p1"]
    assert summary.dropped == {"tie": 2}
