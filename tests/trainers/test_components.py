"""What a component is, reward by reward: a weighted sum's parts, a gated part, a route's targets, repeats, verl's keys.

Real rewards throughout (``think_format``, ``regex_match``, ``math_equivalence`` without its symbolic pool); each row
of the tables says which completion gets which component values and why.
"""

from __future__ import annotations

import pytest

from rewardsmith import get_reward
from rewardsmith.adapters.components import component_columns, component_names
from rewardsmith.adapters.runtime.serve.scoring import openrlhf_payload
from rewardsmith.adapters.trainers.verl import VerlScorer
from rewardsmith.reward import ConfigError

MATH = {"name": "math_equivalence", "label": "accuracy", "config": {"symbolic": False}}
DIGIT = {"name": "regex_match", "label": "digit", "config": {"pattern": "[0-9]"}}

GRADED = {"rewards": [MATH, {"name": "think_format", "label": "format", "weight": 0.2}]}
GATED = {
    "rewards": [
        {**MATH, "gate": "think_format", "gate_otherwise": -1.0, "label": "accuracy_if_format"},
        {"name": "think_format", "label": "format"},
    ]
}

# (spec, completion, gold, sum, components, why)
TABLE = [
    (GRADED, "<think>3 + 4</think> \\boxed{7}", "7", 1.2, {"accuracy": 1.0, "format": 1.0}, "both parts, unweighted"),
    (GRADED, "\\boxed{8}", "7", 0.0, {"accuracy": 0.0, "format": 0.0}, "wrong and unformatted"),
    (GRADED, "<think>3 + 4</think> \\boxed{7}", None, 0.2, {"accuracy": None, "format": 1.0}, "no gold: part is None"),
    (GATED, "<think>3 + 4</think> \\boxed{7}", "7", 2.0, {"accuracy_if_format": 1.0, "format": 1.0}, "gate passes"),
    (GATED, "\\boxed{7}", "7", -1.0, {"accuracy_if_format": -1.0, "format": 0.0}, "gate fails: gate_otherwise"),
]


@pytest.mark.parametrize(("spec", "completion", "gold", "total", "components", "why"), TABLE)
def test_a_weighted_sum_carries_each_part(spec, completion, gold, total, components, why):
    reward = get_reward("weighted_sum", spec)
    (result,) = reward.details([completion], solution=[gold])
    assert result.score == pytest.approx(total), why
    assert component_columns(component_names(reward), [result]) == {k: [v] for k, v in components.items()}, why


def test_repeated_names_are_told_apart():
    reward = get_reward("weighted_sum", {"rewards": ["think_format", "think_format", DIGIT]})
    assert component_names(reward) == ["think_format", "think_format_2", "digit"]
    (result,) = reward.details(["<think>a</think> 1"])
    assert result.components == {"think_format": 1.0, "think_format_2": 1.0, "digit": 1.0}


def test_a_route_carries_its_targets_components_and_none_for_the_others():
    route = get_reward(
        "route",
        {
            "column": "task",
            "routes": {"math": {"name": "weighted_sum", "config": GRADED}, "digits": DIGIT},
            "default": {"name": "weighted_sum", "config": {"rewards": [DIGIT, {"name": "think_format"}]}},
        },
    )
    assert component_names(route) == ["accuracy", "format", "digit", "think_format"]
    results = route.details(["\\boxed{7}", "7", "<think>a</think> 7"], solution=["7"] * 3, task=["math", "digits", "x"])
    assert component_columns(component_names(route), results) == {
        "accuracy": [1.0, None, None],
        "format": [0.0, None, None],
        "digit": [None, None, 1.0],  # the plain `digits` route has no components: its score is the route's
        "think_format": [None, None, 1.0],
    }


def test_a_reward_that_is_no_sum_has_no_components():
    assert component_names(get_reward("think_format")) == []
    assert (
        component_names(get_reward("gate", {"reward": {"name": "weighted_sum", "config": GRADED}, "gate": DIGIT})) == []
    )


def test_openrlhf_logs_each_part_as_a_number_under_its_prefix():
    reward = get_reward("weighted_sum", GRADED)
    results = reward.details(["<think>3 + 4</think> \\boxed{7}", "\\boxed{7}"], solution=[None, "7"])
    payload = openrlhf_payload(results, [None, None], -1.0, component_names(reward))
    assert payload["extra_logs"] == {
        "unscorable": [0.0, 0.0],
        "component/accuracy": [-1.0, 1.0],  # unscorable part: the unscorable score, a number for OpenRLHF
        "component/format": [1.0, 0.0],
    }
    assert openrlhf_payload(results, [None, None], 0.0)["extra_logs"] == {"unscorable": [0.0, 0.0]}


VERL_MAPPING = {
    "routes": [
        {"match": ["*gsm8k*"], "reward": "weighted_sum", "config": GRADED},
        {"match": ["chat"], "reward": "think_format"},
    ],
    "unscorable_score": -0.5,
}


def test_verl_results_carry_every_routes_parts_for_every_sample():
    scorer = VerlScorer(VERL_MAPPING)
    assert scorer.component_names == ["accuracy", "format"]
    got = scorer.score_many(
        ["openai/gsm8k", "openai/gsm8k", "chat", "elsewhere"],
        ["<think>3 + 4</think> \\boxed{7}", "\\boxed{7}", "<think>hm</think> hi", "hi"],
        ["7", None, None, None],
    )
    assert got == [
        {"score": 1.2, "unscorable": False, "accuracy": 1.0, "format": 1.0},
        {"score": 0.0, "unscorable": False, "accuracy": -0.5, "format": 0.0},  # no gold: the part, not the sum
        {"score": 1.0, "unscorable": False, "accuracy": -0.5, "format": -0.5},  # another route: no parts
        {"score": -0.5, "unscorable": True, "accuracy": -0.5, "format": -0.5},  # no route at all
    ]


def test_verl_refuses_a_part_that_would_overwrite_a_result_key():
    mapping = {
        "routes": [{"match": ["*"], "reward": "weighted_sum", "config": {"rewards": [{**DIGIT, "label": "score"}]}}]
    }
    with pytest.raises(ConfigError, match=r"\['score'\] would overwrite.*distinct 'label'"):
        VerlScorer(mapping)
