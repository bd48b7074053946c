"""Verdict tables for the length family: soft_overlong, cosine_length, repetition_penalty."""

from __future__ import annotations

import asyncio
import math
import pickle

import pytest

from rewardsmith import ConfigError, get_reward

# (config, completion, completion_ids or None, expected)
SOFT_OVERLONG_TABLE = [
    ({"max_length": 10, "buffer": 4, "unit": "chars"}, "x" * 0, None, 0.0),
    ({"max_length": 10, "buffer": 4, "unit": "chars"}, "x" * 6, None, 0.0),
    ({"max_length": 10, "buffer": 4, "unit": "chars"}, "x" * 7, None, -0.25),
    ({"max_length": 10, "buffer": 4, "unit": "chars"}, "x" * 8, None, -0.5),
    ({"max_length": 10, "buffer": 4, "unit": "chars"}, "x" * 10, None, -1.0),
    ({"max_length": 10, "buffer": 4, "unit": "chars"}, "x" * 11, None, -1.0),
    ({"max_length": 10, "buffer": 4, "unit": "chars"}, "x" * 10_000, None, -1.0),
    ({"max_length": 10, "buffer": 10, "unit": "chars"}, "x" * 5, None, -0.5),
    # tokens: the ids decide, not the text
    ({"max_length": 10, "buffer": 4}, "short", list(range(9)), -0.75),
    ({"max_length": 10, "buffer": 4}, "x" * 100, list(range(3)), 0.0),
    ({"max_length": 10, "buffer": 4, "unit": "tokens"}, "x", list(range(12)), -1.0),
    ({"max_length": 10, "buffer": 4, "unit": "chars"}, "x" * 3, list(range(12)), 0.0),
    # auto without ids falls back to characters; tokens without ids is unscorable
    ({"max_length": 10, "buffer": 4}, "x" * 8, None, -0.5),
    ({"max_length": 10, "buffer": 4, "unit": "tokens"}, "x", None, None),
    ({"max_length": 10, "buffer": 4, "unit": "tokens"}, "x", "not ids", None),
]


@pytest.mark.parametrize(("config", "completion", "ids", "expected"), SOFT_OVERLONG_TABLE)
def test_soft_overlong_verdicts(config, completion, ids, expected):
    columns = {} if ids is None else {"completion_ids": [ids]}
    [result] = get_reward("soft_overlong", config).details([completion], **columns)
    assert result.score == (pytest.approx(expected) if expected is not None else None), result.reason


def test_soft_overlong_matches_trl_reference_shape():
    """Same numbers as TRL's ``get_soft_overlong_punishment(max_completion_len=20, soft_punish_cache=5)``."""
    from trl.rewards import get_soft_overlong_punishment

    reference = get_soft_overlong_punishment(max_completion_len=20, soft_punish_cache=5)
    ids = [list(range(n)) for n in (0, 10, 15, 16, 18, 20, 21, 40)]
    ours = get_reward("soft_overlong", {"max_length": 20, "buffer": 5})(["x"] * len(ids), completion_ids=ids)
    assert ours == pytest.approx(reference(completion_ids=ids))


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        ({"max_length": 4, "buffer": 5}, "must not exceed max_length"),
        ({"max_length": 0}, "max_length"),
        ({"buffer": 0}, "buffer"),
        ({"unit": "words"}, "unit"),
    ],
)
def test_soft_overlong_bad_config(bad, message):
    with pytest.raises(ConfigError, match=message):
        get_reward("soft_overlong", bad)


CORRECT_IF_42 = {"name": "regex_match", "config": {"pattern": "42"}}
COSINE = {"correctness": CORRECT_IF_42, "max_length": 100, "unit": "chars"}


def _pad(text: str, length: int) -> str:
    return text + " " * (length - len(text))


# (config, completion, expected)
COSINE_TABLE = [
    (COSINE, "42", 0.5 + 0.25 * (1 + math.cos(math.pi * 0.02))),  # short correct: near 1
    (COSINE, _pad("42", 50), 0.75),  # half way: mid of [0.5, 1.0]
    (COSINE, _pad("42", 100), 0.5),
    (COSINE, _pad("42", 1000), 0.5),  # clamped past max_length
    (COSINE, _pad("41", 2), -1.0 + 0.25 * (1 - math.cos(math.pi * 0.02))),  # short wrong: near -1
    (COSINE, _pad("41", 50), -0.75),
    (COSINE, _pad("41", 100), -0.5),
    (
        {**COSINE, "min_value_correct": 0.0, "max_value_correct": 2.0, "min_value_wrong": -3.0, "max_value_wrong": 0.0},
        _pad("42", 50),
        1.0,
    ),
    ({**COSINE, "correct_threshold": 2.0}, _pad("42", 100), -0.5),  # 1.0 < threshold: counts as wrong
]


@pytest.mark.parametrize(("config", "completion", "expected"), COSINE_TABLE)
def test_cosine_length_verdicts(config, completion, expected):
    [result] = get_reward("cosine_length", config).details([completion])
    assert result.score == pytest.approx(expected, abs=1e-9), result.reason


def test_cosine_length_uses_tokens_when_trainer_passes_ids():
    reward = get_reward("cosine_length", {"correctness": CORRECT_IF_42, "max_length": 10})
    scores = reward(["42" + " " * 500, "42"], completion_ids=[[1] * 5, [1] * 10])
    assert scores == pytest.approx([0.75, 0.5])


def test_cosine_length_keeps_unscorable_unscorable():
    """The wrapped reward's None stays None (open-r1 turns an unparsable gold into 1.0)."""
    wrapped = {"name": "regex_match", "config": {"pattern": "42", "max_chars": 10, "overlong_score": None}}
    reward = get_reward("cosine_length", {"correctness": wrapped, "max_length": 100})
    results = reward.details(["42" + "x" * 50, "42", None])
    assert [r.score for r in results] == [None, pytest.approx(1.0, abs=1e-3), None]
    assert results[0].reason.startswith("correctness unscorable: ")


def test_cosine_length_async_path_matches_sync():
    reward = get_reward("cosine_length", COSINE)
    completions = [_pad("42", 30), _pad("7", 70), None]
    expected = reward(completions)
    assert asyncio.run(reward.as_async()(completions)) == expected


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        ({}, "correctness"),
        ({"correctness": "no_such_reward"}, "unknown reward 'no_such_reward'"),
        ({"correctness": {"name": "regex_match", "config": {"pattern": "("}}}, "invalid pattern"),
        ({"correctness": CORRECT_IF_42, "max_length": 0}, "max_length"),
    ],
)
def test_cosine_length_bad_config(bad, message):
    with pytest.raises(ConfigError, match=message):
        get_reward("cosine_length", bad)


REPETITION_TABLE = [
    ({}, "the cat sat on the mat", 0.0),
    ({}, "", 0.0),
    ({}, "too short", 0.0),
    ({"ngram_size": 2}, "a b a b a b", -0.6),
    ({"ngram_size": 2}, "A b a B a b", -0.6),  # case-insensitive
    ({"ngram_size": 1}, "go go go go", -0.75),
    ({"ngram_size": 1, "max_penalty": -0.5}, "go go go go", -0.375),
    ({"ngram_size": 3, "max_penalty": 0.0}, "x y z x y z x y z", 0.0),
    ({"ngram_size": 3}, " ".join(["w"] * 1002), -1.0 + 1 / 1000),
]


@pytest.mark.parametrize(("config", "completion", "expected"), REPETITION_TABLE)
def test_repetition_penalty_verdicts(config, completion, expected):
    [result] = get_reward("repetition_penalty", config).details([completion])
    assert result.score == pytest.approx(expected), result.reason


@pytest.mark.parametrize(("bad", "message"), [({"max_penalty": 0.5}, "max_penalty"), ({"ngram_size": 0}, "ngram_size")])
def test_repetition_penalty_bad_config(bad, message):
    with pytest.raises(ConfigError, match=message):
        get_reward("repetition_penalty", bad)


def test_length_rewards_pickle():
    for name, config in [("soft_overlong", {"max_length": 8, "buffer": 4}), ("cosine_length", COSINE)]:
        reward = get_reward(name, config)
        clone = pickle.loads(pickle.dumps(reward))
        assert clone(["42   ", "x" * 9]) == reward(["42   ", "x" * 9])
