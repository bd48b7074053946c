"""The one rule of the judge strategies: a strategy writes ``ajudge`` (or ``judge_blocking``), the base derives the
other face, and both faces give the same verdict whatever strategy, from plain code and from inside a running loop."""

from __future__ import annotations

import asyncio
import threading

import pytest

from rewardsmith.judges.base import JudgeError, OrderVerdict, PairwiseVerdict
from rewardsmith.judges.calibration import CalibratedPairwiseJudge
from rewardsmith.judges.clients.function import FunctionClient
from rewardsmith.judges.criteria import CriteriaJudge, Criterion, Rubric
from rewardsmith.judges.ensemble import EnsembleJudge
from rewardsmith.judges.group import GroupJudge
from rewardsmith.judges.pairwise import PairwiseJudge
from rewardsmith.judges.rank import RankJudge
from rewardsmith.judges.reward_model import RewardModelPairwiseJudge
from rewardsmith.judges.scale import ScaleJudge
from rewardsmith.judges.strategy import JudgeStrategy


def answer(messages, params) -> str:
    """A judge that prefers whichever response says "4", rates 4/5, and ranks or scores as asked."""
    text = messages[-1]["content"]
    if "Rating" in text:
        return "Rating: 4"
    if '"criteria"' in (params.json_schema or ""):
        return '{"criteria": {"correct": {"met": true}}}'
    if params.json_schema:
        return '{"scores": {"1": 7, "2": 3}}'
    if "Rank" in text or "rank" in text:
        return "[2, 1]"
    first = text.find("4")
    return "A" if 0 <= first < max(text.find("5"), 0) or text.find("5") < 0 else "B"


class LengthModel:
    """A reward model scoring a response by its length, noting the threads it ran on."""

    model = "length"

    def __init__(self) -> None:
        self.threads: list[str] = []

    def score(self, prompts, responses, labels=None):
        self.threads.append(threading.current_thread().name)
        return [float(len(r)) for r in responses]


def strategies(client):
    rubric = Rubric(criteria=(Criterion(id="correct", description="The answer is right."),))
    return [
        (PairwiseJudge(client, use_logprobs=False), ("2+2?", "4", "5")),
        (ScaleJudge(client, use_logprobs=False), ("2+2?", "4")),
        (CriteriaJudge(client, rubric), ("2+2?", "4")),
        (RankJudge(client, method="listwise"), ("2+2?", ["5", "4"])),
        (GroupJudge(client, permutations=1), ("2+2?", ["4", "5"])),
        (EnsembleJudge([PairwiseJudge(client, use_logprobs=False)]), ("2+2?", "4", "5")),
        (CalibratedPairwiseJudge(PairwiseJudge(client, use_logprobs=False)), ("2+2?", "4", "5")),
        (RewardModelPairwiseJudge(LengthModel()), ("2+2?", "four", "4")),
    ]


@pytest.mark.parametrize("index", range(8))
def test_both_faces_give_the_same_verdict_from_plain_code_and_inside_a_loop(index):
    judge, args = strategies(FunctionClient(answer))[index]
    assert isinstance(judge, JudgeStrategy)
    sync = judge.judge(*args)
    assert not getattr(sync, "abstained", False) and getattr(sync, "score", 1.0) is not None, sync
    assert sync == asyncio.run(judge.ajudge(*args))

    async def inside_a_loop():
        return judge.judge(*args)  # a sync call from a running loop: the bridge runs it on a worker thread

    assert asyncio.run(inside_a_loop()) == sync


def test_a_blocking_strategy_runs_on_the_calling_thread_or_a_worker_thread():
    model = LengthModel()
    judge = RewardModelPairwiseJudge(model)
    assert judge.blocking() and not PairwiseJudge.blocking()
    judge.judge("p", "aa", "a")
    asyncio.run(judge.ajudge("p", "aa", "a"))
    assert model.threads[0] == threading.current_thread().name != model.threads[1]


def test_a_strategy_writes_ajudge_never_judge():
    with pytest.raises(TypeError, match="writes ajudge"):

        class Both(JudgeStrategy):
            def judge(self, prompt):  # type: ignore[override]
                return prompt

    class Neither(JudgeStrategy):
        pass

    with pytest.raises(NotImplementedError, match="neither ajudge nor judge_blocking"):
        Neither().judge("p")


def test_an_ensemble_member_that_raises_abstains_in_both_faces():
    class Broken(JudgeStrategy):
        model = "broken"

        async def ajudge(self, prompt, response_a, response_b, *, question=None) -> PairwiseVerdict:
            raise JudgeError("endpoint down")

    class Sure(JudgeStrategy):
        model = "sure"

        async def ajudge(self, prompt, response_a, response_b, *, question=None) -> PairwiseVerdict:
            order = OrderVerdict(prob_first=0.9, choice="first", source="parsed")
            return PairwiseVerdict(prob_a=0.9, ab=order, ba=order.model_copy(update={"prob_first": 0.1}))

    ensemble = EnsembleJudge([Broken(), Sure()])
    for verdict in (ensemble.judge("p", "a", "b"), asyncio.run(ensemble.ajudge("p", "a", "b"))):
        assert verdict.prob_a == pytest.approx(0.9) and verdict.members[0].abstained
        assert "endpoint down" in verdict.members[0].ab.reason
