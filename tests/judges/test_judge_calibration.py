"""Contextual calibration: the math (log-odds minus the content-free prior's) and the wrapper around a real
PairwiseJudge, driven by a scripted client whose option prior and content signal are known."""

from __future__ import annotations

import asyncio
import math

import pytest

from rewardsmith.judges.base import ChatResult, JudgeError, OrderVerdict, TokenLogprob
from rewardsmith.judges.calibration import CalibratedPairwiseJudge, calibrate, calibrate_order, log_odds
from rewardsmith.judges.clients.function import FunctionClient
from rewardsmith.judges.pairwise import PairwiseJudge


def sigmoid(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-x))


@pytest.mark.parametrize("p", [0.01, 0.3, 0.5, 0.77, 0.99])
@pytest.mark.parametrize("prior", [0.05, 0.5, 0.9, 0.97])
def test_calibration_subtracts_the_prior_log_odds(p, prior):
    assert log_odds(calibrate(p, prior)) == pytest.approx(log_odds(p) - log_odds(prior))


def test_calibration_fixed_points():
    assert calibrate(0.9, 0.9) == pytest.approx(0.5)  # the content-free answer itself means "no preference"
    assert calibrate(0.3, 0.5) == pytest.approx(0.3)  # an unbiased judge is left alone
    assert calibrate(0.0, 0.9) == 0.0 and calibrate(1.0, 0.9) == 1.0
    assert calibrate(0.9, 0.93) < 0.5 < calibrate(0.95, 0.93)
    for bad in (0.0, 1.0, -0.1, 1.5):
        with pytest.raises(ValueError, match="content-free prior"):
            calibrate(0.5, bad)


def test_calibrate_order_only_touches_logprob_orders():
    soft = OrderVerdict(prob_first=0.9, choice="first", source="logprobs")
    assert calibrate_order(soft, 0.95).choice == "second"
    assert calibrate_order(soft, 0.95).prob_first == pytest.approx(calibrate(0.9, 0.95))
    parsed = OrderVerdict(prob_first=1.0, choice="first", source="parsed")
    assert calibrate_order(parsed, 0.95) == parsed
    abstain = OrderVerdict(source="abstain")
    assert calibrate_order(abstain, 0.95) == abstain and calibrate_order(soft, None) == soft


def scripted_judge_client(bias: float = 2.0, signal: float = 0.5, fail_content_free: bool = False) -> FunctionClient:
    """Answers the pairwise template with P(A) = sigmoid(bias +/- signal): + when GOOD is shown first, - when BAD
    is, and sigmoid(bias) when neither is (the content-free input). Its ``requests`` are the requests it got."""

    def answer(messages, params) -> ChatResult:
        text = "\n".join(m["content"] for m in messages)
        good, bad = text.find("GOOD"), text.find("BAD")
        if good < 0 and bad < 0:
            if fail_content_free:
                raise JudgeError("scripted outage")
            z = bias
        else:
            z = bias + (signal if 0 <= good < bad or bad < 0 else -signal)
        p = sigmoid(z)
        top = {"A": math.log(p), "B": math.log(1 - p)}
        token = "A" if p >= 0.5 else "B"
        return ChatResult(text=token, logprobs=[TokenLogprob(token=token, logprob=top[token], top=top)])

    return FunctionClient(answer, model="scripted")


def content_free_requests(client: FunctionClient) -> list[str]:
    return [r.text for r in client.requests if "GOOD" not in r.text and "BAD" not in r.text]


def test_calibration_removes_the_flip_without_changing_the_winner():
    client = scripted_judge_client(bias=2.0, signal=0.5)
    raw = PairwiseJudge(client).judge("Q?", "GOOD", "BAD")
    assert raw.flipped and raw.winner == "a"  # both orders pick the first slot; the average still favours a
    judge = CalibratedPairwiseJudge(PairwiseJudge(client))
    calibrated = judge.judge("Q?", "GOOD", "BAD")
    assert not calibrated.flipped and calibrated.winner == "a"
    assert calibrated.ab.prob_first == pytest.approx(sigmoid(0.5))
    assert calibrated.ba.prob_first == pytest.approx(sigmoid(-0.5))
    assert calibrated.prob_a == pytest.approx(sigmoid(0.5))
    swapped = judge.judge("Q?", "BAD", "GOOD")
    assert swapped.winner == "b" and swapped.prob_a == pytest.approx(1 - calibrated.prob_a)


def test_the_prior_is_measured_once_per_prompt_and_question():
    client = scripted_judge_client()
    judge = CalibratedPairwiseJudge(PairwiseJudge(client))
    judge.judge("Q1?", "GOOD", "BAD")
    judge.judge("Q1?", "BAD", "GOOD")
    asyncio.run(judge.ajudge("Q1?", "GOOD", "BAD"))
    content_free = content_free_requests(client)
    assert len(content_free) == 1 and "N/A" in content_free[0]
    judge.judge("Q2?", "GOOD", "BAD")
    judge.judge("Q2?", "GOOD", "BAD", question="Which is kinder?")
    assert len(content_free_requests(client)) == 3
    assert judge.prior("Q1?") == pytest.approx(sigmoid(2.0))

    global_prior = CalibratedPairwiseJudge(PairwiseJudge(client), per_prompt=False)
    global_prior.judge("Q3?", "GOOD", "BAD")
    global_prior.judge("Q4?", "GOOD", "BAD")
    assert len(global_prior._priors) == 1


def test_an_unreadable_prior_leaves_the_verdict_uncalibrated_and_is_asked_again():
    client = scripted_judge_client(fail_content_free=True)
    judge = CalibratedPairwiseJudge(PairwiseJudge(client))
    verdict = judge.judge("Q?", "GOOD", "BAD")
    assert verdict.flipped  # no prior, no calibration: the raw verdict
    judge.judge("Q?", "GOOD", "BAD")
    assert len(content_free_requests(client)) == 2
