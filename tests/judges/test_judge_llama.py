"""Integration: the real llama.cpp server with the packaged SmolLM2 on 127.0.0.1 (run alone with ``-m llama``).

These assert the plumbing, not the quality of a 135M judge: soft labels are probabilities, both orders are
requested, flips are recorded, the cache serves a rerun with no request, and ``llm_judge`` runs inside TRL.
"""

from __future__ import annotations

import asyncio
import math

import pytest

from rewardsmith.judges.base import ChatParams
from rewardsmith.judges.clients.factory import make_client
from rewardsmith.judges.clients.function import FunctionClient
from rewardsmith.judges.pairwise import PairwiseJudge
from rewardsmith.judges.rank import RankJudge
from rewardsmith.judges.scale import ScaleJudge
from rewardsmith.registry import get_reward
from tests.support.trl_helpers import tiny_grpo_config

pytestmark = [pytest.mark.llama, pytest.mark.slow]

PAIRS = [
    ("What is 2 + 2?", "4", "5"),
    ("Name the capital of France.", "Paris.", "I do not know."),
    ("Say hello politely.", "Hello, nice to meet you!", "Go away."),
]


def recording(inner) -> FunctionClient:
    """A client that passes each request on to ``inner`` (a real client) and keeps it in ``requests``."""

    async def forward(messages, params):
        return await inner.acomplete(messages, params)

    return FunctionClient(forward, model=inner.model)


def server_client(server, **kwargs):
    return make_client("openai", model=server.model, base_url=server.base_url, **kwargs)


def test_server_returns_text_logprobs_and_usage(embedded_server):
    client = server_client(embedded_server)
    result = client.complete(
        [{"role": "user", "content": "Answer with A or B."}], ChatParams(max_tokens=4, top_logprobs=5)
    )
    assert result.model == embedded_server.model
    assert result.usage.prompt_tokens > 0 and result.usage.completion_tokens > 0
    assert result.logprobs and all(entry.logprob <= 0.0 for entry in result.logprobs)
    assert all(len(entry.top) >= 1 for entry in result.logprobs)


def test_pairwise_both_orders_soft_labels_and_flips(embedded_server):
    client = recording(server_client(embedded_server))
    judge = PairwiseJudge(client)
    verdicts = [judge.judge(prompt, a, b) for prompt, a, b in PAIRS]
    assert len(client.requests) == 2 * len(PAIRS)
    for (prompt, a, b), verdict in zip(PAIRS, verdicts, strict=True):
        # the two orders are asked at the same time: find them by their prompt, not by arrival
        asked = [r.messages[-1]["content"] for r in client.requests if prompt in r.messages[-1]["content"]]
        assert len(asked) == 2
        firsts = sorted(text.index(a) < text.index(b) for text in asked)
        assert firsts == [False, True]  # one order shows a first, the other b: really swapped
        for order in (verdict.ab, verdict.ba):
            if order.source == "logprobs":
                assert 0.0 <= order.prob_first <= 1.0
        if verdict.abstained:
            assert verdict.prob_a is None and verdict.reason.startswith("abstain")
            continue
        assert 0.0 <= verdict.prob_a <= 1.0
        assert verdict.prob_a == pytest.approx((verdict.ab.prob_first + 1.0 - verdict.ba.prob_first) / 2)
        winners = ({"first": "a", "second": "b"}[verdict.ab.choice], {"first": "b", "second": "a"}[verdict.ba.choice])
        assert verdict.flipped is (winners[0] != winners[1])
    soft = [o.prob_first for v in verdicts for o in (v.ab, v.ba) if o.source == "logprobs"]
    assert any(0.0 < p < 1.0 for p in soft)  # soft labels, not hard 0/1 verdicts
    assert any(not v.abstained for v in verdicts), [v.reason for v in verdicts]  # a judge that abstains fails


def test_cache_serves_rerun_with_zero_requests(embedded_server, tmp_path):
    first_client = server_client(embedded_server, cache_dir=tmp_path)
    first = [PairwiseJudge(first_client).judge(*pair) for pair in PAIRS]
    assert first_client.report().requests == 2 * len(PAIRS)

    rerun_client = server_client(embedded_server, cache_dir=tmp_path)
    rerun = [PairwiseJudge(rerun_client).judge(*pair) for pair in PAIRS]
    report = rerun_client.report()
    assert report.requests == 0 and report.cache_hits == 2 * len(PAIRS)
    assert rerun_client.transport.stats.attempts == 0  # nothing reached the server
    assert [v.prob_a for v in rerun] == [v.prob_a for v in first]
    assert any(v.prob_a is not None for v in first)  # the cache served verdicts, not a list of abstains


def test_async_judging_matches_shape(embedded_server):
    judge = PairwiseJudge(server_client(embedded_server, concurrency=4))

    async def run():
        return await asyncio.gather(*(judge.ajudge(*pair, question="Which response is correct?") for pair in PAIRS))

    verdicts = asyncio.run(run())
    assert [v.principle for v in verdicts] == ["Which response is correct?"] * len(PAIRS)
    assert all(v.prob_a is None or 0.0 <= v.prob_a <= 1.0 for v in verdicts)
    assert any(v.prob_a is not None for v in verdicts), [v.reason for v in verdicts]


def test_rubric_expected_score_is_in_range(embedded_server):
    judge = ScaleJudge(server_client(embedded_server), guideline="Is the answer correct?", scale=5)
    verdict = judge.judge("What is 2 + 2?", "4")
    if verdict.source == "logprobs":
        assert math.isclose(sum(verdict.distribution.values()), 1.0, rel_tol=1e-6)
    assert verdict.score is not None, verdict.reason  # an abstain is a failure here, not a pass
    assert 1.0 <= verdict.score <= 5.0
    assert 0.0 <= verdict.normalized <= 1.0


def test_rank_round_robin(embedded_server):
    verdict = RankJudge(server_client(embedded_server)).judge("What is 2 + 2?", ["5", "4", "four"])
    assert len(verdict.pairs) == 3
    assert verdict.order is not None, verdict.reason
    assert sorted(verdict.order) == [0, 1, 2]
    assert verdict.scores[verdict.order[0]] == max(verdict.scores)


def test_embedded_backend_starts_and_stops_its_own_server():
    from rewardsmith.judges.clients.embedded import EmbeddedServerClient, llama_server_missing

    if llama_server_missing():
        pytest.skip(llama_server_missing())
    client = make_client("embedded")
    assert isinstance(client.transport, EmbeddedServerClient)
    assert not client.transport.server.running  # started lazily, on the first request
    result = client.complete([{"role": "user", "content": "Say A."}], ChatParams(max_tokens=2))
    assert result.text
    process = client.transport.server.process
    client.transport.close()
    assert process.poll() is not None


def test_llm_judge_inside_grpo_trainer(embedded_server, tiny_model_dir, tmp_path):
    from datasets import Dataset
    from trl import GRPOTrainer

    reward = get_reward(
        "llm_judge",
        {
            "mode": "rubric",
            "rubric": "Is the answer correct?",
            "client": {"backend": "embedded", "base_url": embedded_server.base_url, "concurrency": 4},
        },
    )
    dataset = Dataset.from_dict({"prompt": ["What is 2 + 2?", "Say hello.", "What is 3 + 5?", "Name a color."]})
    args = tiny_grpo_config(tmp_path, max_completion_length=8)
    trainer = GRPOTrainer(model=str(tiny_model_dir), reward_funcs=[reward.as_async()], args=args, train_dataset=dataset)
    trainer.train()
    assert trainer.state.global_step == 2
    report = reward.client.report()
    assert report.requests + report.cache_hits == 2 * 4  # 2 steps x 4 completions (1 prompt x 4 generations)
    logged = [entry for entry in trainer.state.log_history if "rewards/llm_judge/mean" in entry]
    assert len(logged) == 2
    scores = list(trainer._logs["rewards"]["llm_judge"])
    assert not all(math.isnan(x) for x in scores)  # NaN = None: a judge that abstains on everything fails here
