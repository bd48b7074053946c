"""One adapter options model: the same spec file, with the same options, read by TRL, verifiers, verl and serve.

The options (``label_column``, ``answer_column``, ``whole_batch``, ``unscorable_score``) are declared once in
rewardsmith/adapters/options.py; each adapter reads the ones it has a use for, and the rule "an unscorable sample
scores ``unscorable_score``" is one function. The spec below routes the gold through a column named ``gold`` and
asks for -1.0 on an unscorable sample: each adapter's verdicts on (right, no gold, wrong) are pinned here.
"""

from __future__ import annotations

import asyncio
import json
import math
import urllib.request
from typing import Any

import pytest
import yaml

from rewardsmith import ConfigError
from rewardsmith.adapters.options import AdapterOptions, options_of, split_options, unscorable_as

MATH = {"name": "math_equivalence", "config": {"gold_column": "gold", "timeout_s": 5, "workers": 1}}
SPEC = {"rewards": [{**MATH, "answer_column": "gold", "label_column": "gold", "unscorable_score": -1.0}]}
ANSWER = "so it is \\boxed{4}"
# (gold, expected number for a trainer that needs one, unscorable)
VERDICTS = [("4", 1.0, False), (None, -1.0, True), ("5", 0.0, False)]


@pytest.fixture()
def spec_file(tmp_path):
    path = tmp_path / "rewards.yaml"
    path.write_text(yaml.safe_dump(SPEC))
    return path


@pytest.mark.parametrize(
    ("score", "unscorable_score", "expected"),
    [(1.0, -1.0, 1.0), (0.0, -1.0, 0.0), (0.25, None, 0.25), (None, -1.0, -1.0), (None, None, 0.0), (None, 0.5, 0.5)],
)
def test_unscorable_becomes_its_number_and_a_score_stays(score, unscorable_score, expected):
    assert unscorable_as(score, unscorable_score) == expected
    assert AdapterOptions(unscorable_score=unscorable_score).as_number(score) == expected


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"unscorable_scor": 1.0}, "unknown option keys ['unscorable_scor']; the options are "),
        ({"whole_batch": "yes"}, "whole_batch"),
        ({"label_column": ""}, "must be a column name"),
        ({"unscorable_score": math.nan}, "unscorable_score"),
    ],
)
def test_invalid_options_fail_with_one_clear_error(options, message):
    with pytest.raises(ConfigError, match=message.replace("[", r"\[").replace("]", r"\]")) as caught:
        options_of(options, "where")
    assert str(caught.value).startswith("where: ")
    if "unknown" in message:
        assert all(key in str(caught.value) for key in AdapterOptions.model_fields)


def test_split_options_separates_a_term_from_its_options():
    term, options = split_options(SPEC["rewards"][0])
    assert term == MATH
    assert options == {"answer_column": "gold", "label_column": "gold", "unscorable_score": -1.0}
    assert split_options("think_format") == ("think_format", {})
    with pytest.raises(ConfigError, match=r"unknown keys \['colour'\]; a term takes name, config, .*whole_batch"):
        split_options({"name": "think_format", "colour": "red"})


def test_trl_reads_the_spec_and_keeps_none(spec_file):
    """TRL takes None (it ignores that function for the sample), so the options change nothing it gets."""
    from rewardsmith.adapters.trainers.trl import grpo_rewards

    funcs, weights = grpo_rewards(spec_file)
    plain, _ = grpo_rewards([MATH])
    golds = [gold for gold, *_ in VERDICTS]
    expected = [None if unscorable else number for _, number, unscorable in VERDICTS]
    assert funcs[0]([ANSWER] * 3, gold=golds) == plain[0]([ANSWER] * 3, gold=golds) == expected
    assert weights == [1.0]


def test_verifiers_reads_answer_column_and_unscorable_score(spec_file):
    from rewardsmith.adapters.trainers.verifiers.rubric import rubric_funcs

    (fn,), weights = rubric_funcs(spec_file)
    assert fn.answer_column == "gold" and weights == [1.0]
    completion = [{"role": "assistant", "content": ANSWER}]
    for gold, number, unscorable in VERDICTS:
        state: dict[str, Any] = {}
        assert asyncio.run(fn(completion=completion, answer=gold or "", state=state)) == number
        assert (state["rewardsmith"]["math_equivalence"]["score"] is None) is unscorable


def test_verl_reads_unscorable_score_from_its_mapping():
    """verl's mapping carries the option at its top level (its routes name the gold column per route)."""
    from rewardsmith.adapters.trainers.verl import VerlScorer

    route = {"match": ["*"], "reward": "math_equivalence", "config": MATH["config"], "ground_truth_column": "gold"}
    scorer = VerlScorer({"routes": [route], "unscorable_score": -1.0})
    for gold, number, unscorable in VERDICTS:
        assert scorer(data_source="any", solution_str=ANSWER, ground_truth=gold) == {
            "score": number,
            "unscorable": unscorable,
        }
    default = VerlScorer({"routes": [route]})
    assert default(data_source="any", solution_str=ANSWER, ground_truth=None) == {"score": 0.0, "unscorable": True}


def _post(url: str, payload: dict[str, Any]) -> dict[str, Any]:
    request = urllib.request.Request(url, json.dumps(payload).encode(), {"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=120) as response:
        return json.loads(response.read())


@pytest.mark.slow
def test_serve_reads_label_column_and_unscorable_score(spec_file):
    """A real ``rewardsmith serve``: the term's unscorable_score beats the server's; a term without one gets it."""
    from rewardsmith.adapters.runtime.serve.process import ServerProcess

    document = {"rewards": [*SPEC["rewards"], {**MATH, "label": "plain"}]}
    spec_file.write_text(yaml.safe_dump(document))
    prompt = "What is 2 + 2? "
    golds = [gold for gold, *_ in VERDICTS]
    payload = {"query": [prompt + ANSWER] * 3, "prompts": [prompt] * 3, "labels": golds}
    with ServerProcess(spec_file, "--unscorable-score", "-2") as server:
        with urllib.request.urlopen(server.url + "/v1/rewards", timeout=30) as response:
            described = {r["name"]: r for r in json.loads(response.read())["rewards"]}
        own = _post(server.url + "/get_reward/math_equivalence", payload)
        fallback = _post(server.url + "/get_reward/plain", payload)
    assert described["math_equivalence"]["label_column"] == "gold"
    assert described["math_equivalence"]["unscorable_score"] == -1.0
    assert described["plain"]["unscorable_score"] is None
    assert own["rewards"] == [number for _, number, _ in VERDICTS]
    assert fallback["rewards"] == [1.0, -2.0, 0.0]
    assert own["extra_logs"]["unscorable"] == fallback["extra_logs"]["unscorable"] == [0.0, 1.0, 0.0]


def test_every_adapter_refuses_an_unknown_option_naming_the_known_ones(spec_file):
    from rewardsmith.adapters.runtime.serve.specs import build_served
    from rewardsmith.adapters.spec import load_spec
    from rewardsmith.adapters.trainers.verifiers.rubric import rubric_funcs

    typo = {"rewards": [{**MATH, "unscorable_scor": -1.0}]}
    for read in (load_spec, rubric_funcs, build_served):
        with pytest.raises(ConfigError, match=r"unknown keys \['unscorable_scor'\]") as caught:
            read(typo)
        assert all(key in str(caught.value) for key in AdapterOptions.model_fields), read
