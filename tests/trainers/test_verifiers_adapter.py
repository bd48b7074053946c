"""verifiers adapter: rewardsmith rewards called the way a verifiers ``Rubric`` calls its reward functions.

No verifiers release installs beside this environment's pins (its Rubric releases, 0.1.3 to 0.3.x, need openai<3,
datasets<4.7 or, through openai-agents, websockets<17; 0.4 has no Rubric). :func:`rubric_score_rollout` reproduces
what verifiers 0.3.1's ``Rubric.score_rollout`` does with each function (``verifiers/legacy/rubrics/rubric.py``:
``score_objects`` builds the keyword arguments, ``_call_individual_reward_func`` passes all of them to a function
that takes ``**kwargs`` or else only those its signature names, awaits an awaitable result, ``float()``s it and
scores 0.0 when the call raises; the rollout reward is the weighted sum). The tests at the end run a real
``verifiers.Rubric`` (and a real ``SingleTurnEnv`` rollout) when verifiers is importable, and skip saying so otherwise;
``test_verifiers_legacy.py`` runs them in a side environment with verifiers 0.3.1.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import pickle
import subprocess
import sys
import types
from typing import Any, get_origin

import pytest
from pydantic import BaseModel

import rewardsmith
from rewardsmith.adapters.trainers.verifiers import (
    VerifiersReward,
    gold_column,
    plain_messages,
    reward_func,
    rubric,
    rubric_funcs,
)
from rewardsmith.compose import build_reward
from rewardsmith.reward import ConfigError

needs_math = pytest.mark.skipif("math_equivalence" not in rewardsmith.list_rewards(), reason="math family absent")
needs_code = pytest.mark.skipif("code_tests" not in rewardsmith.list_rewards(), reason="code family absent")

#: Parameter names that make verifiers treat a function as a group reward function (``Rubric._is_group_func``).
GROUP_INDICATORS = {"states", "prompts", "completions", "answers", "tasks", "infos"}


class Parser:
    """Stands in for ``vf.Parser``: an object the Rubric passes beside the data."""


async def rubric_call(func, objects: dict[str, Any]) -> float:
    """verifiers 0.3.1 ``Rubric._call_individual_reward_func``."""
    sig = inspect.signature(func)
    if not any(p.kind == p.VAR_KEYWORD for p in sig.parameters.values()):
        objects = {k: v for k, v in objects.items() if k in sig.parameters}
    try:
        result = func(**objects)
        if inspect.isawaitable(result):
            result = await result
        return float(result)
    except Exception:
        return 0.0


async def rubric_score_rollout(funcs, weights, *, prompt, completion, answer="", info=None, **columns):
    """verifiers 0.3.1 ``Rubric.score_rollout``: the dataset's extra columns, then the rollout objects."""
    objects = {
        **columns,
        "prompt": prompt,
        "completion": completion,
        "answer": answer,
        "state": {},
        "info": info or {},
        "parser": Parser(),
        "task": None,
    }
    scores = [await rubric_call(f, dict(objects)) for f in funcs]
    total = sum(s * w for s, w in zip(scores, weights, strict=True))
    return total, {f.__name__: s for f, s in zip(funcs, scores, strict=True)}


def call(fn, **objects: Any) -> float:
    total, _ = asyncio.run(rubric_score_rollout([fn], [1.0], **{"prompt": "Q?", **objects}))
    return total


# -- math: (completion, answer, info, expected) ---------------------------------------------------------------
MATH_TABLE = [
    ("so the answer is \\boxed{72}", "72", None, 1.0),
    ("so the answer is \\boxed{71}", "72", None, 0.0),
    ([{"role": "assistant", "content": "\\boxed{\\frac12}"}], "0.5", None, 1.0),  # chat format
    ([{"role": "assistant", "content": [{"type": "text", "text": "#### 9"}]}], "9", None, 1.0),  # content parts
    ("\\boxed{3}", "", {"solution": "3"}, 1.0),  # empty answer: the gold comes from info
    ("\\boxed{3}", "4", {"solution": "3"}, 0.0),  # answer wins over info
]


@needs_math
@pytest.mark.parametrize(("completion", "answer", "info", "expected"), MATH_TABLE)
def test_math_verdicts_through_the_rubric_call(completion, answer, info, expected):
    fn = reward_func("math_equivalence")
    assert call(fn, completion=completion, answer=answer, info=info) == expected


@needs_math
@pytest.mark.parametrize(
    ("completion", "answer", "reason"),
    [
        ("\\boxed{4}", "", "column 'solution' missing"),  # verifiers' default answer is ""
        (None, "4", "completion is None"),  # a rollout that errored before the model answered
        ([{"role": "user", "content": "4"}], "4", "no assistant message"),
    ],
)
def test_unscorable_becomes_the_configured_number_with_its_reason(completion, answer, reason, caplog):
    assert call(reward_func("math_equivalence"), completion=completion, answer=answer) == 0.0
    fn = reward_func("math_equivalence", unscorable_score=-1.0)
    state: dict[str, Any] = {}
    assert asyncio.run(fn(prompt="Q?", completion=completion, answer=answer, state=state)) == -1.0
    assert state["rewardsmith"]["math_equivalence"]["score"] is None
    assert reason in state["rewardsmith"]["math_equivalence"]["reason"]
    assert any(reason in record.getMessage() for record in caplog.records)


class Message(BaseModel):
    """verifiers 0.3 turns every message into a pydantic model (``AssistantMessage``, ``TextMessage``...)."""

    role: str
    content: Any = None


@needs_math
def test_verifiers_message_models_and_completion_format_text_role():
    fn = reward_func("math_equivalence")
    assert call(fn, completion=[Message(role="assistant", content="\\boxed{6}")], answer="6") == 1.0
    assert call(fn, completion=[Message(role="text", content="The answer is 6")], answer="6") == 1.0
    assert plain_messages([Message(role="text", content="hi")], text_role="user") == [{"role": "user", "content": "hi"}]
    assert plain_messages("plain") == "plain" and plain_messages(None) is None


# -- code_tests: a python function checked by calls --------------------------------------------------------------
ADD_TESTS = {"fn_name": "add", "calls": [{"args": [1, 2], "expected": 3}, {"args": [5, 5], "expected": 10}]}
RIGHT = "```python\ndef add(a, b):\n    return a + b\n```"
WRONG = "```python\ndef add(a, b):\n    return a - b\n```"


@needs_code
def test_code_tests_right_and_wrong_from_answer_json_info_or_a_column():
    fn = reward_func("code_tests")
    assert fn.answer_column == "tests"
    assert call(fn, completion=RIGHT, answer=json.dumps(ADD_TESTS)) == 1.0  # verifiers datasets keep answers as text
    assert call(fn, completion=WRONG, answer=json.dumps(ADD_TESTS)) == 0.0
    assert call(fn, completion=[{"role": "assistant", "content": RIGHT}], info={"tests": ADD_TESTS}) == 1.0
    assert call(fn, completion=RIGHT, tests=ADD_TESTS) == 1.0  # a dataset column the Rubric passes by name
    assert call(fn, completion="I cannot solve this.", answer=json.dumps(ADD_TESTS)) == 0.0


# -- llm_judge: the answer is the judge's reference ---------------------------------------------------------------
def judge_spec(server, mode: str) -> dict[str, Any]:
    client = {"backend": "openai", "model": "m", "base_url": server.base_url, "max_retries": 0}
    return {"name": "llm_judge", "config": {"mode": mode, "use_logprobs": False, "client": client}}


def test_llm_judge_pairwise_reads_the_answer_as_its_reference(fault_server):
    fn = reward_func(judge_spec(fault_server, "pairwise"))
    assert fn.answer_column == "reference"
    assert (
        call(fn, prompt=[{"role": "user", "content": "Capital of France?"}], completion="Lyon.", answer="Paris.") == 0.5
    )
    assert len(fault_server.requests) == 2  # both presentation orders
    content = fault_server.requests[0]["messages"][-1]["content"]
    assert "Paris." in content and "Lyon." in content and "Capital of France?" in content


def test_llm_judge_rubric_mode_and_an_abstention(fault_server):
    fault_server.push("answer:Score: 5", "answer:no idea")
    fn = reward_func(judge_spec(fault_server, "rubric"), unscorable_score=0.25)
    assert call(fn, completion="Paris.") == 1.0
    assert call(fn, completion="Paris.") == 0.25  # the judge abstained: unscorable, never a verdict


# -- the function verifiers receives --------------------------------------------------------------------------
def test_an_async_individual_reward_function_to_verifiers():
    fn = reward_func("think_format")
    assert inspect.iscoroutinefunction(type(fn).__call__)
    params = inspect.signature(fn).parameters
    assert not set(params) & GROUP_INDICATORS  # verifiers' _is_group_func: not a group function
    annotation = inspect.signature(fn).return_annotation
    assert annotation is not list and get_origin(annotation) is not list
    assert any(p.kind == p.VAR_KEYWORD for p in params.values())  # the dataset's columns arrive by name
    assert fn.__name__ == "think_format"


def test_concurrent_calls_on_one_loop():
    fn = reward_func("think_format")

    async def many():
        completions = ["<think>a</think> b", "no tags"] * 8
        return await asyncio.gather(*(fn(prompt="Q?", completion=c, answer="") for c in completions))

    assert asyncio.run(many()) == [1.0, 0.0] * 8


def test_row_mapping_keeps_data_and_drops_rubric_objects():
    fn = reward_func("think_format")  # no gold column: `answer` keeps verifiers' name
    row = fn.row(
        answer="4", info={"level": 3, "answer": "info"}, task="arithmetic", parser=Parser(), example_id=7, x=[1]
    )
    assert row == {"example_id": 7, "x": [1], "task": "arithmetic", "level": 3, "answer": "4"}
    assert fn.row(answer="", info={"answer": "kept"}) == {"answer": "kept"}  # verifiers' default "" is no answer
    assert fn.row(info='{"level": 2}') == {"level": 2} and fn.row(info="not json") == {}


@needs_math
def test_pickle_round_trip_scores_the_same():
    fn = reward_func({"name": "math_equivalence", "config": {"timeout_s": 5}}, unscorable_score=-2.0)
    clone = pickle.loads(pickle.dumps(fn))
    assert isinstance(clone, VerifiersReward) and clone.__name__ == fn.__name__
    assert clone.answer_column == "solution" and clone.options.unscorable_score == -2.0
    for completion, answer in [("\\boxed{2}", "2"), ("\\boxed{2}", "3"), ("\\boxed{2}", "")]:
        assert call(clone, completion=completion, answer=answer) == call(fn, completion=completion, answer=answer)
    funcs, _ = rubric_funcs(["think_format", "math_equivalence"])
    assert [f.__name__ for f in pickle.loads(pickle.dumps(funcs))] == ["think_format", "math_equivalence"]


# -- rubric: weights and the spec grammar ---------------------------------------------------------------------
@needs_math
def test_weights_and_the_weighted_sum_the_rubric_computes():
    funcs, weights = rubric_funcs(
        [{"name": "math_equivalence", "weight": 1.0}, {"name": "think_format", "weight": 0.5}]
    )
    assert weights == [1.0, 0.5] and [f.__name__ for f in funcs] == ["math_equivalence", "think_format"]
    total, metrics = asyncio.run(
        rubric_score_rollout(funcs, weights, prompt="Q?", completion="<think>hm</think> \\boxed{8}", answer="8")
    )
    assert total == 1.5 and metrics == {"math_equivalence": 1.0, "think_format": 1.0}
    total, _ = asyncio.run(rubric_score_rollout(funcs, weights, prompt="Q?", completion="\\boxed{8}", answer="8"))
    assert total == 1.0  # right answer, no think block


@needs_math
def test_spec_grammar_files_labels_gates_and_per_term_options(tmp_path):
    path = tmp_path / "rewards.yaml"
    path.write_text(
        "rewards:\n"
        "  - {name: math_equivalence, gate: think_format, weight: 2}\n"
        "  - {name: math_equivalence, label: math_from_info, answer_column: other, unscorable_score: -1}\n"
        "async: true\n"
    )
    funcs, weights = rubric_funcs(path)
    assert weights == [2.0, 1.0]
    assert [f.__name__ for f in funcs] == ["math_equivalence_if_think_format", "math_from_info"]
    assert funcs[0].answer_column == "solution"  # a gate's gold column is its inner reward's
    assert funcs[1].answer_column == "other" and funcs[1].options.unscorable_score == -1.0
    assert rubric_funcs(build_reward("think_format"))[1] == [1.0]  # a Reward instance
    with pytest.raises(ConfigError, match="distinct 'label'"):
        rubric_funcs(["think_format", "think_format"])
    with pytest.raises(ConfigError, match=r"rewards\.1"):
        rubric_funcs(["think_format", {"name": "no_such_reward"}])
    with pytest.raises(ConfigError, match="unscorable_score"):
        reward_func("think_format", unscorable_score=float("nan"))


def test_gold_column_rules():
    if "math_equivalence" in rewardsmith.list_rewards():
        assert gold_column(build_reward("math_equivalence")) == "solution"
        assert gold_column(build_reward({"name": "math_equivalence", "config": {"gold_column": "gt"}})) == "gt"
    assert gold_column(build_reward("think_format")) == "answer"  # no gold: verifiers' own name


@needs_math
@needs_code
@pytest.mark.parametrize(
    ("spec", "columns", "column"),
    [
        ("think_format", (), "answer"),
        ({"name": "llm_judge", "config": {"mode": "pairwise", "client": {"backend": "openai", "model": "m"}}},
         ("reference",), "reference"),
        ({"name": "weighted_sum", "config": {"rewards": ["math_equivalence", "think_format"]}},
         ("solution",), "solution"),
        ({"name": "gate", "config": {"reward": "code_tests", "gate": "think_format"}}, ("tests",), "tests"),
        ({"name": "route", "config": {"column": "task", "routes": {"m": "math_equivalence", "c": "code_tests"}}},
         ("solution", "tests"), "answer"),  # two gold columns: `answer` cannot go to both
    ],
)  # fmt: skip
def test_composites_declare_their_parts_gold_columns(spec, columns, column):
    reward = build_reward(spec)
    assert reward.gold_columns == columns
    assert gold_column(reward) == column


# -- rubric(): the verifiers class, or an ImportError naming the fix ---------------------------------------------
def test_rubric_without_verifiers_names_the_fix(monkeypatch):
    monkeypatch.setitem(sys.modules, "verifiers", None)
    with pytest.raises(ImportError, match=r"pip install 'verifiers>=0\.1\.3,<0\.4'"):
        rubric(["think_format"])


def test_rubric_with_verifiers_0_4_says_it_has_no_rubric(monkeypatch):
    monkeypatch.setitem(sys.modules, "verifiers", types.SimpleNamespace(__version__="0.4.0"))
    with pytest.raises(ImportError, match=r"0\.4\.0 has no Rubric"):
        rubric(["think_format"])


def test_rubric_builds_the_verifiers_class_with_funcs_weights_and_parser(monkeypatch):
    class FakeRubric:
        def __init__(self, funcs=None, weights=None, parser=None):
            self.funcs, self.weights, self.parser = funcs, weights, parser

    monkeypatch.setitem(sys.modules, "verifiers", types.SimpleNamespace(__version__="0.3.1", Rubric=FakeRubric))
    parser = Parser()
    built = rubric({"rewards": ["think_format", {"name": "tag_count", "weight": 0.25}]}, parser=parser)
    assert isinstance(built, FakeRubric) and built.weights == [1.0, 0.25] and built.parser is parser
    assert [f.__name__ for f in built.funcs] == ["think_format", "tag_count"]


# -- TRL: the tool environments importable from the TRL adapter ----------------------------------------------------
def test_trl_adapter_offers_the_sandbox_environments_lazily():
    from rewardsmith.adapters.trainers import environments
    from rewardsmith.adapters.trainers.trl import PythonSandboxEnvironment, ShellSandboxEnvironment

    assert PythonSandboxEnvironment is environments.PythonSandboxEnvironment
    assert ShellSandboxEnvironment is environments.ShellSandboxEnvironment
    code = (
        "import sys, rewardsmith.adapters.trainers.trl; "
        "print('rewardsmith.adapters.trainers.environments' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert out.stdout.strip() == "False"


# -- a real verifiers Rubric, when verifiers is importable ---------------------------------------------------------
def real_verifiers():
    try:
        import verifiers

        verifiers.Rubric  # noqa: B018 - verifiers 0.3 loads its Rubric on first touch
    except (ImportError, AttributeError) as exc:
        pytest.skip(
            f"verifiers with a Rubric is not importable ({type(exc).__name__}: {exc}); the tests above check the "
            "Rubric's documented call shape, and test_verifiers_legacy.py runs these in the verifiers 0.3.1 environment"
        )
    return verifiers


def real_state(vf, completion: Any, answer: str, **columns: Any):
    """A rollout state as verifiers 0.3's ``Environment.init_state`` and a finished rollout leave it."""
    from verifiers.legacy.utils.message_utils import normalize_messages

    row = {"prompt": [{"role": "user", "content": "2+2?"}], "answer": answer, "info": {}, "example_id": 0, **columns}
    state = vf.State(input=row)
    state["task"] = dict(row)
    state["prompt"] = normalize_messages(row["prompt"])
    state["completion"] = normalize_messages(completion)
    state["trajectory"] = []
    return state


@needs_math
def test_real_rubric_scores_rollouts_and_groups():
    vf = real_verifiers()
    rb = rubric(["math_equivalence", {"name": "think_format", "weight": 0.5}])
    assert isinstance(rb, vf.Rubric)
    state = real_state(vf, [{"role": "assistant", "content": "<think>ok</think> \\boxed{4}"}], "4")
    asyncio.run(rb.score_rollout(state))
    assert state["reward"] == 1.5 and state["metrics"] == {"math_equivalence": 1.0, "think_format": 1.0}
    states = [
        real_state(vf, [{"role": "assistant", "content": "\\boxed{5}"}], "4"),
        real_state(vf, "The answer is 4", "4"),  # completion format: verifiers' "text" role
        real_state(vf, [{"role": "assistant", "content": "4"}], ""),  # no gold: unscorable, scored 0.0
    ]
    asyncio.run(rb.score_group(states))
    assert [s["reward"] for s in states] == [0.0, 1.0, 0.0]
    assert states[2]["rewardsmith"]["math_equivalence"]["score"] is None


@needs_code
def test_real_rubric_passes_dataset_columns_by_name():
    vf = real_verifiers()
    rb = rubric(["code_tests"])
    state = real_state(vf, [{"role": "assistant", "content": RIGHT}], "", tests=ADD_TESTS)
    asyncio.run(rb.score_rollout(state))
    assert state["reward"] == 1.0


@needs_math
def test_real_single_turn_env_rollouts_scored_by_rewardsmith(fault_server):
    vf = real_verifiers()
    try:
        from verifiers.legacy.clients.openai_chat_completions_client import OpenAIChatCompletionsClient

        env_class = vf.SingleTurnEnv
    except (ImportError, AttributeError) as exc:
        pytest.skip(f"verifiers' environments need more of verifiers[all] here: {exc}")
    from datasets import Dataset
    from openai import AsyncOpenAI

    fault_server.push("answer:<think>ok</think> \\boxed{4}", "answer:The answer is 5")
    dataset = Dataset.from_list([{"question": "2+2?", "answer": "4"}, {"question": "3+3?", "answer": "6"}])
    env = env_class(eval_dataset=dataset, rubric=rubric(["math_equivalence", {"name": "think_format", "weight": 0.5}]))
    client = OpenAIChatCompletionsClient(AsyncOpenAI(base_url=fault_server.base_url, api_key="x", max_retries=0))
    out = asyncio.run(
        env.evaluate(client=client, model="m", num_examples=2, max_concurrent=1, on_progress=lambda *a: None)
    )
    rewards = {o["answer"]: (o["reward"], o["metrics"]["math_equivalence"]) for o in out["outputs"]}
    assert rewards == {"4": (1.5, 1.0), "6": (0.0, 0.0)}
