"""verl routes with ``steps``: a decoded multi-turn rollout read back into turns, scored turn by turn, one number for
verl and the per-turn values as JSON text in every result (verl's own reward loop: test_verl_reward_loop.py)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from rewardsmith.adapters.trainers.verl import VerlScorer
from rewardsmith.adapters.trainers.verl_steps import transcript_of
from rewardsmith.reward import ConfigError


def tool_call(code: str) -> str:
    return "<tool_call>\n" + json.dumps({"name": "run_python", "arguments": {"code": code}}) + "\n</tool_call>"


def answered(result: str) -> str:
    """A tool answer as the decoded response holds it: the chat markers dropped, their role words left."""
    return f"\nuser\n<tool_response>\n{result}\n</tool_response>\nassistant\n"


ROLLOUT = (
    "Let me compute.\n" + tool_call("x = 41") + answered("") + tool_call("print(x + 1)") + answered("42")
    + tool_call("print(y)") + answered("NameError") + "The answer is \\boxed{42}."
)  # fmt: skip


def test_the_decoded_rollout_reads_back_into_messages():
    assert transcript_of(ROLLOUT) == [
        {"role": "assistant", "content": "Let me compute.", "tool_calls": [
            {"type": "function", "function": {"name": "run_python", "arguments": {"code": "x = 41"}}}]},
        {"role": "tool", "content": ""},
        {"role": "assistant", "content": "", "tool_calls": [
            {"type": "function", "function": {"name": "run_python", "arguments": {"code": "print(x + 1)"}}}]},
        {"role": "tool", "content": "42"},
        {"role": "assistant", "content": "", "tool_calls": [
            {"type": "function", "function": {"name": "run_python", "arguments": {"code": "print(y)"}}}]},
        {"role": "tool", "content": "NameError"},
        {"role": "assistant", "content": "The answer is \\boxed{42}."},
    ]  # fmt: skip
    # one text without tool responses is one turn; two answers of one turn are two tool messages
    assert transcript_of("just words") == [{"role": "assistant", "content": "just words"}]
    two = transcript_of(tool_call("a = 1") + tool_call("b = 2") + "\nuser\n<tool_response>\n1\n</tool_response>\n"
                        "<tool_response>\n2\n</tool_response>\nassistant\nDone.")  # fmt: skip
    assert [m["role"] for m in two] == ["assistant", "tool", "tool", "assistant"]
    assert len(two[0]["tool_calls"]) == 2 and two[3]["content"] == "Done."


def test_a_broken_call_is_kept_so_the_turn_is_judged_on_it():
    (turn,) = transcript_of('<tool_call>{"name": "run_python", "arguments": {"code": "x = 1"</tool_call>')
    assert turn["tool_calls"][0]["function"]["name"] == "run_python"
    assert turn["tool_calls"][0]["function"]["arguments"].startswith('{"name"')


@pytest.fixture(scope="module")
def scorer():
    from rewardsmith.sandboxes.local.backend import LocalSandbox

    if LocalSandbox().tier != "bwrap":
        pytest.skip("code_turns needs the local sandbox's bwrap tier")
    scorer = VerlScorer({"include_reason": True, "routes": [
        {"match": ["*agent*"], "reward": "code_turns", "config": {"timeout_s": 2.0}, "steps": {"aggregate": "mean"}},
        {"match": ["*tools*"], "reward": "weighted_sum", "config": {"rewards": [
            {"name": "code_turns", "weight": 0.5, "config": {"timeout_s": 2.0}},
            {"name": "math_equivalence", "weight": 1.0}]}, "steps": {"credit": "final", "aggregate": "sum"}},
        {"match": ["*gsm8k*"], "reward": "math_equivalence"},
    ]})  # fmt: skip
    yield scorer
    for reward in scorer.built_rewards():
        close = getattr(reward, "close", None)
        if callable(close):
            close()


def test_every_result_carries_the_per_turn_values_as_text_that_verl_stacks(scorer):
    results = scorer.score_many(
        ["python_agent", "python_tools", "openai/gsm8k", "unknown"],
        [ROLLOUT, ROLLOUT, "\\boxed{72}", "x"],
        [None, "42", "72", None],
        [{}, {}, {}, {}],
    )
    steps = [json.loads(r["step_rewards"]) for r in results]
    assert steps == [[1.0, 1.0, 0.0, 1.0], [0.5, 0.5, 0.0, 1.5], [], []]
    assert [r["score"] for r in results] == [0.75, 2.5, 1.0, 0.0]
    assert [r["unscorable"] for r in results] == [False, False, False, True]
    assert "NameError" in results[0]["reason"]
    assert np.array([r["step_rewards"] for r in results]).shape == (4,)  # ragged lists would not stack


def test_an_unscorable_turn_makes_the_sample_unscorable_and_keeps_the_turns():
    scorer = VerlScorer({"routes": [{"match": ["*"], "reward": "code_turns", "steps": {},
                                     "config": {"backend": "remote", "base_url": "http://127.0.0.1:9"}}]})  # fmt: skip
    (result,) = scorer.score_many(["agent"], [tool_call("x = 1") + answered("") + "Done."], [None], [{}])
    assert result["unscorable"] is True and json.loads(result["step_rewards"]) == [None, 1.0]


def test_steps_is_checked_and_may_not_be_a_component_name():
    with pytest.raises(ValueError, match="aggregate"):
        VerlScorer({"routes": [{"match": ["*"], "reward": "code_turns", "steps": {"aggregate": "max"}}]})
    with pytest.raises(ConfigError, match="step_rewards"):
        VerlScorer({"routes": [{"match": ["*"], "reward": "weighted_sum", "config": {"rewards": [
            {"name": "think_format", "label": "step_rewards"}]}}]})  # fmt: skip
