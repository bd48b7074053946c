"""Probability-weighted scale scores (G-Eval) read at the token that states the score, through the real
OpenAI-compatible client against the fault server's tokenised answers with log-probs."""

from __future__ import annotations

import pytest

from rewardsmith.judges.clients.factory import make_client
from rewardsmith.judges.scale import ScaleJudge
from rewardsmith.registry import get_reward


def client_for(server):
    return make_client("openai", model="fault-judge", base_url=server.base_url, timeout=10, max_retries=0)


# The server puts P = 0.7 (or ``answer@P``) on each score digit it writes and the rest on the digit below it
# (2 for a 1): (answer, expected score on 1..5 or None for abstain, source, reason fragment).
SCORED = [
    ("answer:4", 0.7 * 4 + 0.3 * 3, "logprobs", ""),
    ("answer:Score: 4", 3.7, "logprobs", ""),
    ("answer:[[5]]", 0.7 * 5 + 0.3 * 4, "logprobs", ""),
    ('answer:{"score": 1, "reason": "wrong"}', 0.7 * 1 + 0.3 * 2, "logprobs", ""),
    ("answer:I'd give it 4/5.", 3.7, "logprobs", ""),
    ("answer@0.9:Score: 3", 0.9 * 3 + 0.1 * 2, "logprobs", ""),
    ("answer@1.0:Score: 3", 3.0, "logprobs", ""),
    ("answer@0.5:Score: 3", 2.5, "logprobs", ""),  # indifferent log-probs do not contradict the text
    # the score token, not the first digit of the answer: the 2 below is not the score
    ("answer:I'd say 2 at first, but Score: 4", 3.7, "logprobs", ""),
    ('answer:Rated 2 by others; {"score": 5}', 4.7, "logprobs", ""),
    ("answer:Rating: [[2]], not 5", 0.7 * 2 + 0.3 * 1, "logprobs", ""),
    # the text says one score while that token's probabilities favour another: one answer, two readings
    ("answer@0.3:Score: 4", None, "abstain", "log-probs and text disagree: the text says 4, the log-probs favour 3"),
    ("answer@0.4:I'd say 2 at first, but Score: 4", None, "abstain", "log-probs and text disagree"),
    # the text decides whether there is a score at all, whatever the digits' probabilities
    ("answer:between 3 and 4", None, "abstain", "no score"),
    ("answer:Score: 3-4", None, "abstain", "a range of scores"),
    ("answer:Score: 3 or 4", None, "abstain", "a range of scores"),
    ("answer:Score: 2. Actually, Score: 4", None, "abstain", "conflicting"),
    ("answer:Score: 6", None, "abstain", "outside 1..5"),
    ("answer:My rating would be...", None, "abstain", "cut off"),
    # a decimal spans several tokens: kept as parsed
    ("answer:Rating: 4.5", 4.5, "parsed", "parsed score used"),
]


@pytest.mark.parametrize(("answer", "score", "source", "reason"), SCORED)
def test_scale_expectation_is_read_at_the_score_token(fault_server, answer, score, source, reason):
    fault_server.push(answer)
    verdict = ScaleJudge(client_for(fault_server), scale=5).judge("2+2?", "4")
    assert [(r["logprobs"], r["top_logprobs"]) for r in fault_server.requests] == [(True, 20)]
    assert (verdict.source, verdict.score) == (source, None if score is None else pytest.approx(score))
    assert reason in verdict.reason
    if score is None:
        assert verdict.normalized is None and verdict.abstained
    else:
        assert verdict.normalized == pytest.approx((score - 1) / 4)
    if source == "logprobs":
        assert sum(verdict.distribution.values()) == pytest.approx(1.0)
        assert set(verdict.distribution) == {1, 2, 3, 4, 5}


def test_scale_above_nine_asks_for_no_logprobs(fault_server):
    fault_server.push("answer:Rating: [[7]]")
    verdict = ScaleJudge(client_for(fault_server), scale=10).judge("p", "r")
    assert (verdict.source, verdict.score) == ("parsed", 7.0)
    assert "logprobs" not in fault_server.requests[0]


@pytest.mark.parametrize(
    ("answer", "score", "reason"),
    [
        ("answer:I'd say 2 at first, but Score: 4", 0.675, "rubric 3.70/5 (logprobs)"),
        ("answer@0.3:Score: 4", None, "judge abstained: log-probs and text disagree"),
        ("answer:between 3 and 4", None, "judge abstained: no score"),
    ],
)
def test_llm_judge_scale_reward_with_logprobs(fault_server, answer, score, reason):
    fault_server.push(answer)
    client = {"backend": "openai", "model": "m", "base_url": fault_server.base_url, "timeout": 10}
    reward = get_reward("llm_judge", {"mode": "scale", "client": client})
    [result] = reward.details(["4"], prompts=["2+2?"])
    assert result.score == (None if score is None else pytest.approx(score))
    assert reason in result.reason
    assert fault_server.requests[0]["logprobs"] is True
