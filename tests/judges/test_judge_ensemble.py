"""Judge ensembles: the combination rules by verdict table, then real member judges on 127.0.0.1 (a judge that
reads the content, a judge that always answers "A", a dead endpoint) and an audit that reports each member.
"""

from __future__ import annotations

import pytest

from rewardsmith.judges.base import OrderVerdict, PairwiseJudgeProtocol, PairwiseVerdict
from rewardsmith.judges.clients.factory import make_client
from rewardsmith.judges.ensemble import EnsembleJudge, combine_members, member_verdicts
from rewardsmith.judges.pairwise import PairwiseJudge, combine_orders
from tests.support.fault_server import FaultServer
from tests.support.judge_prompts import quoted


def member(p_ab: float | None, p_ba: float | None) -> PairwiseVerdict:
    """A member's verdict from its two orders' P(first)."""

    def order(p):
        if p is None:
            return OrderVerdict(source="abstain", reason="no verdict")
        return OrderVerdict(prob_first=p, choice="first" if p > 0.5 else "second" if p < 0.5 else None, source="parsed")

    return combine_orders(order(p_ab), order(p_ba))


COMBINATIONS = [
    # (members as (P_ab(first), P_ba(first)), method, min_answered, expected prob_a, expected flipped)
    ([(1.0, 0.0), (1.0, 0.0)], "mean", 1, 1.0, False),
    ([(1.0, 0.0), (0.0, 1.0)], "mean", 1, 0.5, False),
    ([(0.8, 0.4), (0.6, 0.2)], "mean", 1, 0.7, False),
    ([(1.0, 1.0), (1.0, 0.0)], "mean", 1, 0.75, False),  # one member flipped; the ensemble's orders agree on a
    ([(1.0, 1.0), (1.0, 1.0)], "mean", 1, 0.5, True),  # both members purely positional: so is the ensemble
    ([(1.0, 0.0), (None, None), (0.0, 1.0)], "mean", 2, 0.5, False),
    ([(1.0, 0.0), (None, None), (None, 0.0)], "mean", 2, None, False),  # a member missing one order abstains
    ([(1.0, 0.0), (1.0, 0.0), (0.0, 1.0)], "majority", 1, 2 / 3, False),
    ([(1.0, 0.0), (1.0, 1.0)], "majority", 1, 1.0, False),  # a tie (0.5) is no vote
    ([(1.0, 1.0), (0.0, 0.0)], "majority", 1, 0.5, False),  # nobody decisive
    ([(None, None), (None, None)], "majority", 1, None, False),
]


@pytest.mark.parametrize(("orders", "method", "min_answered", "expected", "flipped"), COMBINATIONS)
def test_combination_verdicts(orders, method, min_answered, expected, flipped):
    members = [member(*o) for o in orders]
    verdict = combine_members(members, method=method, min_answered=min_answered)
    assert verdict.prob_a == (None if expected is None else pytest.approx(expected))
    assert verdict.abstained == (expected is None)
    assert verdict.flipped is flipped
    assert len(verdict.members) == len(orders)
    if expected is None:
        assert "members answered" in verdict.reason


class ContentJudgeServer(FaultServer):
    """Answers the letter of the response that contains ``needle`` (a judge that reads), else "A"."""

    def __init__(self, needle: str):
        super().__init__()
        self.needle = needle

    def _next(self, body):
        action = super()._next(body)
        if action != f"answer:{self.default_answer}":
            return action
        content = body["messages"][-1]["content"]
        first = quoted(content, "response-A")
        return "answer:A" if self.needle in first else "answer:B"


def judge_at(server, **options):
    return PairwiseJudge(
        make_client("openai", model=options.pop("name", "m"), base_url=server.base_url, max_retries=0),
        use_logprobs=False,
        **options,
    )


def test_ensemble_of_real_judges_with_a_dead_member():
    dead = PairwiseJudge(make_client("openai", model="dead", base_url="http://127.0.0.1:9/v1", max_retries=0))
    with ContentJudgeServer("4") as reader, FaultServer(default_answer="A") as positional:
        members = [judge_at(reader, name="reader"), judge_at(positional, name="positional"), dead]
        mean = EnsembleJudge(members, method="mean", min_answered=2)
        assert isinstance(mean, PairwiseJudgeProtocol)
        verdict = mean.judge("What is 2 + 2?", "5", "4")
        assert [m.prob_a for m in verdict.members] == [0.0, 0.5, None]
        assert verdict.prob_a == pytest.approx(0.25) and verdict.winner == "b"
        assert "mean of 2/3 members (0.00, 0.50, abstain)" in verdict.reason
        strict = EnsembleJudge(members, method="majority", min_answered=3).judge("What is 2 + 2?", "5", "4")
        assert strict.prob_a is None and strict.abstained
        assert mean.model == "ensemble[mean](reader, positional, dead)"


def test_audit_reports_each_member_and_the_ensemble(tmp_path):
    from rewardsmith.audit.generators import generate_set
    from rewardsmith.audit.metrics import compute_metrics
    from rewardsmith.audit.runner import AuditRunner, load_verdicts

    items = generate_set("mixed", 10, seed=2)
    with FaultServer(default_answer="A") as first_lover, FaultServer(default_answer="B") as second_lover:
        ensemble = EnsembleJudge([judge_at(first_lover, name="likes-A"), judge_at(second_lover, name="likes-B")])
        summary = AuditRunner(ensemble, items, tmp_path / "audit", progress=False).run()
    assert summary.failed == 0
    raw = load_verdicts(tmp_path / "audit")
    import json

    records = [json.loads(line) for line in (tmp_path / "audit" / "verdicts.jsonl").read_text().splitlines()]
    assert all(len(r["verdict"]["members"]) == 2 for r in records)
    by_key = {(r["item_id"], r["perturbation"]): r["verdict"] for r in records}
    bias = [
        compute_metrics(items, member_verdicts(by_key, i), n_boot=200)["position"]["position_bias"]["value"]
        for i in range(2)
    ]
    assert bias == [1.0, -1.0]  # each member's own position bias, recovered from the ensemble's run
    ensemble_metrics = compute_metrics(items, raw, n_boot=200)
    assert ensemble_metrics["abstain_rate"]["value"] == 0.0  # the two biases cancel into ties, not abstains
