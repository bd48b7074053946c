"""``code_turns`` on the real local sandbox: each assistant turn's Python runs after the earlier turns' code, and a
turn's verdict is its own (an earlier failure is not blamed on a later turn, a hostile turn costs only itself)."""

from __future__ import annotations

import json

import pytest

from rewardsmith import get_reward
from rewardsmith.reward import score_rows
from rewardsmith.sandboxes.local.backend import LocalSandbox
from rewardsmith.steps import step_details, step_rewards

TOOLS = [{"type": "function", "function": {"name": "run_python", "parameters": {
    "type": "object", "properties": {"code": {"type": "string"}}, "required": ["code"]}}}]  # fmt: skip


def call(code: str | None, id_: str, raw: str | None = None) -> dict:
    arguments = raw if raw is not None else json.dumps({"code": code})
    return {"id": id_, "type": "function", "function": {"name": "run_python", "arguments": arguments}}


def transcript(*turns: str | None, results: list[str] | None = None) -> list[dict]:
    """OpenAI form: a turn's code as one run_python call (``None``: a turn that answers in words)."""
    messages: list[dict] = [{"role": "user", "content": "Work it out in Python."}]
    for k, code in enumerate(turns):
        if code is None:
            messages.append({"role": "assistant", "content": "Done."})
            continue
        messages.append({"role": "assistant", "content": "", "tool_calls": [call(code, f"c{k}")]})
        messages.append({"role": "tool", "tool_call_id": f"c{k}", "content": results[k] if results else ""})
    return messages


@pytest.fixture(scope="module")
def reward():
    if LocalSandbox().tier != "bwrap":
        pytest.skip("bwrap tier unavailable here")
    instance = get_reward("code_turns", timeout_s=2.0)
    yield instance
    instance.close()


THREAD = "import threading, time\nthreading.Thread(target=time.sleep, args=(60,)).start()"
WRITES = "open('notes.txt', 'w').write('a')"
WIPES = "import os\nfor f in os.listdir():\n    os.remove(f)"
SLEEPS = "import time\nwhile True:\n    time.sleep(0.05)"  # endless, and never starved: it sleeps
# (why, the turns' code, per-turn values, a word of the failing turn's reason)
TABLE = [
    ("state carried: x from turn 1 read in turn 2", ["x = 41", "print(x + 1)", None], [1.0, 1.0, 1.0], ""),
    ("a name no turn defined", ["print(undefined_name)"], [0.0], "NameError"),
    ("an error in turn 2 only", ["x = 1", "1 / 0", "print(x)"], [1.0, 0.0, 1.0], "ZeroDivisionError"),
    ("state built before an error is kept", ["y = 2\nraise ValueError('half')", "print(y)"], [0.0, 1.0], "half"),
    ("a syntax error", ["x = 1", "def f(:", "print(x)"], [1.0, 0.0, 1.0], "SyntaxError"),
    ("an endless loop", ["x = 1", SLEEPS, "print(x)"], [1.0, 0.0, 1.0], "time limit"),
    ("endless output", ["x = 1", "while True:\n    print('y' * 10000)", "print(x)"], [1.0, 0.0, 1.0], "output"),
    ("a fork bomb", ["x = 1", "import os\nwhile True:\n    os.fork()", "print(x)"], [1.0, 0.0, 1.0], "BlockingIO"),
    ("memory", ["x = 1", "hog = bytearray(10 ** 10)", "print(x)"], [1.0, 0.0, 1.0], "memory"),
    ("ends the interpreter", ["x = 1", "import os\nos._exit(0)", "print(x)"], [1.0, 0.0, 1.0], "ended"),
    ("a failing exit status", ["import sys\nsys.exit(3)", "print(1)"], [0.0, 1.0], "SystemExit: 3"),
    ("exit(0) is not an error", ["import sys\nsys.exit(0)", "print(1)"], [1.0, 1.0], ""),
    ("a thread left running", [THREAD, "print(1)"], [1.0, 1.0], ""),
    ("files persist through replay", [WRITES, "print(open('notes.txt').read())"], [1.0, 1.0], ""),
    ("the harness's own files cannot be taken away", [WIPES, "z = 1", "print(z)"], [1.0, 1.0, 1.0], ""),
]


def test_verdict_table_on_the_real_sandbox(reward):
    """One batch: every transcript is scored together, round by round, and each turn gets its own verdict."""
    details = step_details(reward, [transcript(*turns) for _, turns, _, _ in TABLE])
    for (why, _, expected, word), results in zip(TABLE, details, strict=True):
        assert [r.score for r in results] == expected, (why, [r.reason for r in results])
        failing = [r.reason for r in results if r.score == 0.0]
        assert all(word in reason for reason in failing), (why, failing)


def test_an_unreadable_code_call_is_its_turns_zero_and_costs_nothing_else(reward):
    broken = [
        {"role": "assistant", "content": "", "tool_calls": [call(None, "c0", raw='{"code": "x = 1"')]},
        {"role": "assistant", "content": "", "tool_calls": [call(None, "c1", raw='{"source": "x = 1"}')]},
        {"role": "assistant", "content": "", "tool_calls": [call("print(2)", "c2")]},
    ]
    (results,) = step_details(reward, [broken])
    assert [r.score for r in results] == [0.0, 0.0, 1.0], [r.reason for r in results]
    assert "not JSON" in results[0].reason and "no string 'code' argument" in results[1].reason


def test_fenced_blocks_and_trl_form_and_the_ordinary_reward_is_the_mean(reward):
    trl = [
        {"role": "user", "content": "Compute."},
        {"role": "assistant", "content": "", "tool_calls": [{"type": "function", "function": {
            "name": "run_python", "arguments": {"code": "total = sum(range(5))"}}}]},
        {"role": "tool", "name": "run_python", "content": ""},
        {"role": "assistant", "content": "", "tool_calls": [{"type": "function", "function": {
            "name": "run_python", "arguments": {"code": "print(total / zero)"}}}]},
        {"role": "tool", "name": "run_python", "content": "NameError"},
        {"role": "assistant", "content": "Check:\n```python\nprint(total)\n```\nand\n```py\nassert total == 10\n```"},
        {"role": "assistant", "content": "The total is 10."},
    ]  # fmt: skip
    assert step_rewards(reward, [trl]) == [[1.0, 0.0, 1.0, 1.0]]
    # TRL's conversational completions: the ordinary reward is the mean of the turns
    assert reward([trl]) == [pytest.approx(0.75)]
    assert get_reward("code_turns", no_code_score=0.0, timeout_s=2.0)([trl]) == [pytest.approx(0.5)]
    fenced_only = get_reward("code_turns", sources="tool_calls", timeout_s=2.0)
    assert step_rewards(fenced_only, [trl]) == [[1.0, 0.0, 1.0, 1.0]]  # the fenced turn counts as no code


def test_plain_text_runs_its_fenced_blocks_and_text_without_code_is_said_unscorable(reward):
    assert score_rows(reward, ["```python\nx = 2\nassert x * 2 == 4\n```", "```python\nassert 1 == 2\n```"],
                             [{}, {}])[0].score == 1.0  # fmt: skip
    (result,) = score_rows(reward, ["I called the tool."], [{}])
    assert result.score is None and "give it the conversational completion" in result.reason


def test_composition_with_tool_call_validity_per_turn(reward):
    spec = get_reward("weighted_sum", {"rewards": [
        {"name": "tool_call_validity", "weight": 0.5},
        {"name": "code_turns", "weight": 1.0, "config": {"timeout_s": 2.0}},
    ]})  # fmt: skip
    messages = transcript("x = 3", "print(x ** 2)", "print(y)", None)
    messages[1]["tool_calls"][0]["function"]["arguments"] = '{"code": "x = 3", "extra": 1}'  # still valid JSON
    assert step_rewards(spec, [messages], tools=[TOOLS]) == [[1.5, 1.5, 0.5, 1.5]]
    from rewardsmith.adapters.trainers.trl_steps import StepRewardFunc

    logged: dict[str, list] = {}
    func = StepRewardFunc(spec, aggregate="mean")
    values = func([messages], tools=[TOOLS], log_extra=lambda name, column: logged.setdefault(name, column))
    assert values == [pytest.approx(5.0 / 4)]
    assert json.loads(logged["weighted_sum_steps_per_turn"][0]) == [1.5, 1.5, 0.5, 1.5]


def test_recorded_tool_results_never_raise_a_score_and_zero_mode_pays_nothing_for_a_contradiction(reward):
    honest = transcript("print(6 * 7)", "print('done')", results=["42\n", "done"])
    invented = transcript("print(6 * 7)", "print('done')", results=["41\n", "done"])
    assert step_rewards(reward, [honest, invented]) == [[1.0, 1.0], [1.0, 1.0]]
    noted = step_details(reward, [invented])[0][0]
    assert "recorded tool result does not hold" in noted.reason
    strict = get_reward("code_turns", recorded_output="zero", timeout_s=2.0)
    assert step_rewards(strict, [honest, invented]) == [[1.0, 1.0], [0.0, 1.0]]
    # a record cannot rescue code that fails: the rerun decides
    assert step_rewards(strict, [transcript("1 / 0", results=["0.5"])]) == [[0.0]]


def test_a_sandbox_that_fails_is_unscorable_never_zero():
    unreachable = get_reward("code_turns", backend="remote", base_url="http://127.0.0.1:9", timeout_s=1.0)
    (results,) = step_details(unreachable, [transcript("x = 1", None)])
    assert results[0].score is None and "sandbox failure" in results[0].reason
    assert results[1].score == 1.0  # a turn without code needs no sandbox
    assert unreachable([transcript("x = 1", None)]) == [None]


def test_a_turn_with_an_error_in_one_cell_still_runs_its_other_cells(reward):
    two_calls = [
        {"role": "assistant", "content": "", "tool_calls": [call("a = 1\n1 / 0", "c0"), call("b = a + 1", "c1")]},
        {"role": "tool", "tool_call_id": "c0", "content": "ZeroDivisionError"},
        {"role": "tool", "tool_call_id": "c1", "content": ""},
        {"role": "assistant", "content": "", "tool_calls": [call("print(b)", "c2")]},
    ]
    (results,) = step_details(reward, [two_calls])
    assert [r.score for r in results] == [0.0, 1.0], [r.reason for r in results]
    assert "cell 0 raised" in results[0].reason


def test_an_exception_that_cannot_be_printed_still_costs_only_its_turn(reward):
    hostile = "class Boom(Exception):\n    def __str__(self):\n        raise RuntimeError('no')\nraise Boom()"
    (results,) = step_details(reward, [transcript("x = 1", hostile, "print(x)")])
    assert [r.score for r in results] == [1.0, 0.0, 1.0], [r.reason for r in results]
    assert "Boom" in results[1].reason
