"""The ``route`` reward's glob mode: fnmatch patterns on a column, first match wins, an explicit default.

The exact mode's verdicts are in test_core_contract.py; these rows pin what the glob mode adds and that verl's
``data_source`` routes (adapters/trainers/verl.py) can be written in it.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from rewardsmith import ConfigError, get_reward

GOOD = "<think>a</think>4"
FMT = {"name": "think_format", "label": "fmt"}
TAGS = {"name": "tag_count", "label": "tags"}
FOUR = {"name": "regex_match", "config": {"pattern": "4"}, "label": "four"}

# (config, column value, expected score, a word of the reason)
GLOB_TABLE: list[tuple[dict[str, Any], Any, float | None, str]] = [
    ({"routes": {"*gsm8k*": FMT}}, "openai/gsm8k", 1.0, "formatted"),
    ({"routes": {"*gsm8k*": FMT}}, "gsm8k", 1.0, "formatted"),  # `*` matches nothing too
    ({"routes": {"aime2?": FMT}}, "aime24", 1.0, "formatted"),
    ({"routes": {"aime2?": FMT}}, "aime2024", None, "aime2?"),  # `?` is exactly one character
    ({"routes": {"set[ab]": FMT}}, "setb", 1.0, "formatted"),
    ({"routes": {"set[ab]": FMT}}, "setc", None, "set[ab]"),
    ({"routes": {"math*": FMT}}, "MATH-lighteval", None, "math*"),  # case counts by default
    ({"routes": {"math*": FMT}, "ignore_case": True}, "MATH-lighteval", 1.0, "formatted"),
    ({"routes": {"MATH*": FMT}, "ignore_case": True}, "math-lighteval", 1.0, "formatted"),
    # first match wins: "openai/gsm8k" matches both, the first route in order scores it
    ({"routes": {"*gsm8k*": TAGS, "openai/*": FMT}}, "openai/gsm8k", 0.5, "tag"),
    ({"routes": {"openai/*": FMT, "*gsm8k*": TAGS}}, "openai/gsm8k", 1.0, "formatted"),
    # the list form: several patterns share one reward
    ({"routes": [{"match": ["apps", "taco", "*code*"], "reward": FOUR}]}, "codecontests", 1.0, "4"),
    ({"routes": [{"match": ["apps", "taco"], "reward": FOUR}, {"match": ["*"], "reward": TAGS}]}, "taco", 1.0, "4"),
    ({"routes": [{"match": ["apps", "taco"], "reward": FOUR}, {"match": ["*"], "reward": TAGS}]}, "x", 0.5, "tag"),
    # no match: the default, or unscorable with a reason naming the value and the patterns
    ({"routes": {"*gsm8k*": FMT}, "default": FOUR}, "my_private_set", 1.0, "4"),
    ({"routes": {"*gsm8k*": FMT}}, "my_private_set", None, "'my_private_set'"),
    ({"routes": {"*gsm8k*": FMT}}, None, None, "*gsm8k*"),  # a missing value matches no pattern, not even `*`
    ({"routes": {"*": FMT}}, ["openai/gsm8k"], None, "*"),  # nor does a value that is not text
    ({"routes": {"*": FMT}, "default": FOUR}, 7, 1.0, "4"),
]


def _results(config: dict[str, Any], value: Any) -> list[Any]:
    reward = get_reward("route", {"column": "data_source", "mode": "glob", **config})
    sync = reward.details([GOOD], data_source=[value])
    assert asyncio.run(reward.adetails([GOOD], data_source=[value])) == sync
    return sync


@pytest.mark.parametrize(("config", "value", "expected", "word"), GLOB_TABLE)
def test_glob_route_verdicts(config, value, expected, word):
    (result,) = _results(config, value)
    assert result.score == expected, result.reason
    assert word in result.reason


def test_unrouted_reason_names_the_column_value_and_every_pattern():
    config = {"routes": [{"match": ["*gsm8k*", "aime*"], "reward": FMT}, {"match": ["apps"], "reward": TAGS}]}
    (result,) = _results(config, "my_private_set")
    assert result.score is None
    assert result.reason == (
        "no rewardsmith route for data_source 'my_private_set' (matches none of ['*gsm8k*', 'aime*', 'apps'])"
    )


def test_glob_route_keeps_batch_order_and_scores_each_route_once():
    reward = get_reward(
        "route", {"column": "source", "mode": "glob", "routes": {"a*": FMT, "b*": TAGS}, "default": FOUR}
    )
    sources = ["a1", "b1", "zz", "a2", "b2", "zz"]
    texts = [GOOD, GOOD, "no", GOOD, "<think>", "4"]
    assert reward(texts, source=sources) == [1.0, 0.5, 0.0, 1.0, 0.25, 1.0]
    assert [reward.route_index(s) for s in sources] == [0, 1, None, 0, 1, None]


def test_exact_mode_is_unchanged_by_patterns():
    """In the default mode a key is a value, not a pattern: `*` is only the text `*`."""
    reward = get_reward("route", {"routes": {"*": FMT}})
    assert reward([GOOD, GOOD], task=["*", "math"]) == [1.0, None]
    assert reward.details([GOOD], task=["math"])[0].reason == "no route for task='math'"


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ({"routes": [{"match": ["*"], "reward": FMT}]}, "needs mode: glob"),  # the list form, exact mode
        ({"routes": {"a": FMT}, "ignore_case": True}, "ignore_case applies to mode: glob"),
        ({"mode": "glob", "routes": [{"match": [], "reward": FMT}]}, "match"),
        ({"mode": "glob", "routes": [{"match": ["*"], "reward": "no_such_reward"}]}, "no_such_reward"),
        ({"mode": "glob", "routes": [{"match": ["*"], "reward": FMT, "weight": 2}]}, "weight"),
        ({"mode": "fuzzy", "routes": {"a": FMT}}, "mode"),
    ],
)
def test_invalid_glob_configs_fail_at_construction(config, message):
    with pytest.raises(ConfigError, match=message.replace("*", r"\*")):
        get_reward("route", config)
