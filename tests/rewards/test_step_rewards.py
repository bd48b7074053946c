"""Per-step rewards over multi-turn tool-use transcripts (OpenAI's and TRL's message forms): per-turn tool-call
validity and format, outcome credit by rule, and composition turn by turn."""

from __future__ import annotations

import json

import pytest

from rewardsmith import get_reward
from rewardsmith.steps import step_details, step_rewards
from rewardsmith.transcripts import assistant_turns

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Current weather in a city",
            "parameters": {
                "type": "object",
                "properties": {"city": {"type": "string"}, "unit": {"enum": ["c", "f"]}},
                "required": ["city"],
                "additionalProperties": False,
            },
        },
    },
    {"type": "function", "function": {"name": "add", "parameters": {"type": "object", "properties": {
        "a": {"type": "number"}, "b": {"type": "number"}}, "required": ["a", "b"]}}},
]  # fmt: skip


def call(name: str, arguments, id_: str = "c1") -> dict:
    return {"id": id_, "type": "function", "function": {"name": name, "arguments": arguments}}


def openai_transcript(*turns) -> list[dict]:
    """user, then per turn: an assistant message (text, calls) and a tool answer per call."""
    messages: list[dict] = [{"role": "user", "content": "Weather in Paris, then 2+2?"}]
    for text, calls in turns:
        messages.append({"role": "assistant", "content": text, "tool_calls": calls} if calls else
                        {"role": "assistant", "content": text})  # fmt: skip
        messages += [{"role": "tool", "tool_call_id": c["id"], "content": "ok"} for c in calls]
    return messages


# (arguments as the model wrote them, expected per-turn validity, why) — OpenAI form: arguments are JSON text
CALLS = [
    (call("get_weather", '{"city": "Paris"}'), 1.0, "valid"),
    (call("get_weather", '{"city": "Paris", "unit": "c"}'), 1.0, "valid with an optional enum"),
    (call("get_weather", '{"city": 3}'), 0.0, "wrong type"),
    (call("get_weather", "{}"), 0.0, "a required argument missing"),
    (call("get_weather", '{"city": "Paris", "country": "FR"}'), 0.0, "an undeclared argument"),
    (call("get_weather", '{"city": "Paris"'), 0.0, "not JSON"),
    (call("get_weather", '["Paris"]'), 0.0, "JSON, not an object"),
    (call("get_time", '{"city": "Paris"}'), 0.0, "an undeclared tool"),
    (call("add", '{"a": 2, "b": 2}'), 1.0, "valid"),
    (call("add", '{"a": "2", "b": 2}'), 0.0, "a string for a number"),
]


@pytest.mark.parametrize(("tool_call", "expected", "why"), CALLS, ids=[w for _, _, w in CALLS])
def test_each_turns_calls_are_checked_against_the_declared_schema(tool_call, expected, why):
    transcript = openai_transcript(("", [tool_call]), ("It is sunny. 2+2 = 4.", []))
    values = step_rewards(get_reward("tool_call_validity"), [transcript], tools=[TOOLS])
    assert values == [[expected, 1.0]], why


def test_trl_form_with_dict_arguments_and_named_tool_messages():
    transcript = [
        {"role": "assistant", "content": "", "tool_calls": [{"type": "function", "function": {
            "name": "add", "arguments": {"a": 1, "b": 2}}}]},
        {"role": "tool", "name": "add", "content": "3"},
        {"role": "assistant", "content": "", "tool_calls": [{"type": "function", "function": {
            "name": "add", "arguments": {"a": 1}}}]},
        {"role": "tool", "name": "add", "content": "error"},
        {"role": "assistant", "content": "The sum is 3."},
    ]  # fmt: skip
    turns = assistant_turns(transcript)
    assert [t.tool_results for t in turns] == [("3",), ("error",), ()]
    details = step_details(get_reward("tool_call_validity"), [transcript], tools=[json.dumps(TOOLS)])
    assert [r.score for r in details[0]] == [1.0, 0.0, 1.0]
    assert "'b' is a required property" in details[0][1].reason
    # as an ordinary reward (TRL's call): the mean of the turns
    reward = get_reward("tool_call_validity")
    assert reward([transcript], tools=[TOOLS]) == [pytest.approx(2 / 3)]


def test_missing_tools_or_an_invalid_declared_schema_is_unscorable_never_valid():
    transcript = openai_transcript(("", [call("add", '{"a": 1, "b": 2}')]))
    reward = get_reward("tool_call_validity")
    assert step_rewards(reward, [transcript], tools=["not tools"]) == [[None]]
    broken = [{"type": "function", "function": {"name": "add", "parameters": {"type": "no-such-type"}}}]
    details = step_details(reward, [transcript], tools=[broken])
    assert details[0][0].score is None and "invalid schema" in details[0][0].reason
    # through a composite that hands its parts text, the calls are gone: said, not scored as "no call, valid"
    combined = get_reward("weighted_sum", {"rewards": ["tool_call_validity"]})
    result = combined.details([transcript], tools=[TOOLS])[0]
    assert result.score is None and "needs the transcript's messages" in result.reason


TRANSCRIPT = openai_transcript(
    ("<think>look it up</think> calling", [call("get_weather", '{"city": "Paris"}')]),
    ("no think block", [call("add", '{"a": 2}')]),
    ("<think>done</think> so \\boxed{4}", []),
)


@pytest.mark.parametrize(
    ("credit", "gamma", "expected"),
    [("final", 1.0, [0.0, 0.0, 1.0]), ("every", 1.0, [1.0, 1.0, 1.0]), ("discounted", 0.5, [0.25, 0.5, 1.0])],
)
def test_an_outcome_reward_is_credited_to_the_turns_by_rule(credit, gamma, expected):
    math = get_reward("math_equivalence")
    assert step_rewards(math, [TRANSCRIPT], credit=credit, gamma=gamma, solution=["4"]) == [expected]
    # a wrong final answer: 0.0 everywhere; an unscorable gold: None everywhere (no signal, never 0.0)
    assert step_rewards(math, [TRANSCRIPT], credit=credit, gamma=gamma, solution=["5"]) == [[0.0, 0.0, 0.0]]
    assert step_rewards(math, [TRANSCRIPT], credit=credit, gamma=gamma, solution=[""]) == [[None, None, None]]


def test_per_turn_format_and_composition_turn_by_turn():
    per_turn_think = {"name": "per_turn", "config": {"reward": "think_format"}}
    assert step_rewards(get_reward("per_turn", {"reward": "think_format"}), [TRANSCRIPT]) == [[1.0, 0.0, 1.0]]
    summed = get_reward("weighted_sum", {"rewards": [
        {"name": "tool_call_validity", "weight": 0.5}, {**per_turn_think, "weight": 0.25},
        {"name": "math_equivalence", "weight": 1.0}]})  # fmt: skip
    values = step_rewards(summed, [TRANSCRIPT], tools=[TOOLS], solution=["4"])
    assert values == [[0.5 + 0.25, 0.0 + 0.0, 0.5 + 0.25 + 1.0]]
    gated = get_reward("gate", {"gate": per_turn_think, "reward": "tool_call_validity", "otherwise": -1.0})
    assert step_rewards(gated, [TRANSCRIPT], tools=[TOOLS]) == [[1.0, -1.0, 1.0]]


def test_a_route_picks_the_target_per_transcript_and_names_a_missing_route():
    routed = get_reward("route", {"column": "task", "routes": {"tools": "tool_call_validity",
                                                             "math": "math_equivalence"}})  # fmt: skip
    values = step_rewards(routed, [TRANSCRIPT, TRANSCRIPT, TRANSCRIPT], task=["tools", "math", "chat"],
                          tools=[TOOLS] * 3, solution=["4"] * 3)  # fmt: skip
    assert values == [[1.0, 0.0, 1.0], [0.0, 0.0, 1.0], [None, None, None]]


def test_credit_and_gamma_are_checked():
    with pytest.raises(ValueError, match="credit='last'"):
        step_rewards(get_reward("think_format"), [TRANSCRIPT], credit="last")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="gamma=0"):
        step_rewards(get_reward("think_format"), [TRANSCRIPT], credit="discounted", gamma=0)


def test_the_trl_step_function_folds_turns_and_logs_them_per_turn():
    from rewardsmith.adapters.trainers.trl_steps import StepRewardFunc

    logged: dict[str, list] = {}
    func = StepRewardFunc(get_reward("tool_call_validity"))
    unscorable = openai_transcript(("", [call("add", '{"a": 1, "b": 2}')]))
    values = func([TRANSCRIPT, unscorable], tools=[TOOLS, "not tools"], prompts=["p", "p"],
                  log_extra=lambda name, column: logged.setdefault(name, column))  # fmt: skip
    assert values == [2.0, None]  # the sum of [1.0, 0.0, 1.0]; an unscorable turn leaves the sample unscored
    assert [json.loads(v) for v in logged["tool_call_validity_steps_per_turn"]] == [[1.0, 0.0, 1.0], [None]]
    assert func.__name__ == "tool_call_validity_steps"
    assert StepRewardFunc(get_reward("tool_call_validity"), aggregate="mean")([TRANSCRIPT], tools=[TOOLS]) == [
        pytest.approx(2 / 3)
    ]
