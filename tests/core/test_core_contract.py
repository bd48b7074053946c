"""The core contract: registry, the reward calling convention TRL relies on, composition, pickling."""

from __future__ import annotations

import asyncio
import logging
import math
import multiprocessing
import pickle
import sys
import textwrap
from concurrent.futures import ProcessPoolExecutor
from typing import Any

import pytest
import yaml

import rewardsmith
from rewardsmith import ConfigError, Reward, RewardConfig, RewardResult, get_reward, list_rewards, register_reward
from rewardsmith import registry as registry_module
from tests.support.names import CORE_REWARD_NAMES

GOOD = "<think>2+2=4</think> 4"
BAD = "4"


# -- helpers: tiny rewards that exercise the base class (not registered) -------------------------------
class MatchesSolution(Reward):
    """1.0 when the completion equals the row's ``solution``; the reason quotes the row's prompt."""

    name = "matches_solution"

    def score_one(self, completion: str, row: dict[str, Any]) -> RewardResult:
        if "solution" not in row:
            return RewardResult.unscorable("no solution column")
        return RewardResult(score=float(completion == row["solution"]), reason=f"prompt={row.get('prompt')!r}")


class ExplodesOnBoom(Reward):
    name = "explodes_on_boom"

    def score_one(self, completion: str, row: dict[str, Any]) -> RewardResult:
        if completion == "boom":
            raise RuntimeError("boom")
        if completion == "nan":
            return RewardResult(score=math.nan, reason="produced nan")
        if completion == "raw":
            return 1.0  # type: ignore[return-value]  # a family bug: not a RewardResult
        return RewardResult(score=1.0, reason="fine")


class WrongLength(Reward):
    name = "wrong_length"

    def score_batch(self, completions, rows):
        return [RewardResult(score=1.0)]


class BatchCrash(Reward):
    name = "batch_crash"

    def score_batch(self, completions, rows):
        raise OSError("backend down")


class LogRecorder:
    """A stand-in for TRL's ``log_extra`` that records what rewards log (a plain picklable class)."""

    def __init__(self) -> None:
        self.columns: dict[str, list[Any]] = {}

    def __call__(self, column: str, values: list[Any]) -> None:
        self.columns[column] = list(values)


# -- registry ------------------------------------------------------------------------------------------


def test_list_rewards_has_builtins_sorted():
    names = list_rewards()
    assert names == sorted(names)
    for name in CORE_REWARD_NAMES:
        assert name in names


def test_get_reward_builds_a_named_instance():
    reward = get_reward("tag_count", {"tags": ["<a>"]})
    assert isinstance(reward, Reward)
    assert reward.__name__ == "tag_count" and reward.name == "tag_count"
    assert reward.config.tags == ["<a>"]
    assert get_reward("tag_count", tags=["<b>"]).config.tags == ["<b>"]
    assert rewardsmith.reward_class("think_format") is type(get_reward("think_format"))


@pytest.mark.parametrize(
    ("name", "suggestion"),
    [("think_fromat", "'think_format'"), ("tagcount", "'tag_count'"), ("regex", "'regex_match'")],
)
def test_unknown_name_suggests_close_names(name, suggestion):
    with pytest.raises(ConfigError, match=f"unknown reward '{name}'. Did you mean .*{suggestion}"):
        get_reward(name)


def test_unknown_name_without_close_match_lists_known():
    with pytest.raises(ConfigError, match=r"Known: .*think_format"):
        get_reward("zzzzzzzzzz")


@pytest.mark.parametrize(
    ("name", "config", "message"),
    [
        ("think_format", {"think_tagg": "x"}, r"reward 'think_format': invalid config: think_tagg: Extra inputs"),
        ("soft_overlong", {"max_length": "many"}, r"max_length: Input should be a valid integer"),
        ("think_format", ["not", "a", "mapping"], r"config must be a mapping, got list"),
        ("weighted_sum", {"rewards": ["no_such_reward"]}, r"unknown reward 'no_such_reward'"),
        ("weighted_sum", {"rewards": []}, r"rewards: List should have at least 1 item"),
        ("regex_match", {"pattern": "4", "overlong_score": math.nan}, r"overlong_score: Input should be a finite"),
        ("soft_overlong", {"max_length": math.inf}, r"max_length: Input should be a finite"),
    ],
)
def test_config_errors_are_raised_at_construction(name, config, message):
    with pytest.raises(ConfigError, match=message):
        get_reward(name, config)


def test_register_reward_rejects_non_rewards_and_name_clashes(clean_registry):
    with pytest.raises(TypeError):
        register_reward("x")(object)  # type: ignore[type-var]

    class Other(Reward):
        name = "other_reward"

    with pytest.raises(ValueError, match="'think_format' is already registered"):
        register_reward("think_format")(Other)
    assert Other.name == "other_reward"  # a refused registration leaves the class untouched
    register_reward("other_reward")(Other)
    assert get_reward("other_reward").__name__ == "other_reward"


@pytest.fixture
def clean_registry():
    """Snapshot and restore the registry's module-level state around a test.

    Built-ins register when ``rewardsmith.rewards`` is first imported, which happens once per process,
    so the snapshot is taken after loading: restoring an earlier one would lose them for good.
    """
    list_rewards()
    saved, loaded = dict(registry_module._REGISTRY), registry_module._REWARDS._loaded
    yield registry_module
    registry_module._REGISTRY.clear()
    registry_module._REGISTRY.update(saved)
    registry_module._REWARDS._loaded = loaded


PLUGIN_MODULE = '''
from rewardsmith import Reward, RewardResult, register_reward


class Shout(Reward):
    """1.0 for an all-caps completion."""

    name = "shout_class_name"

    def score_one(self, completion, row):
        return RewardResult(score=float(completion.isupper()), reason="caps" if completion.isupper() else "quiet")


@register_reward("whisper")
class Whisper(Reward):
    """1.0 for an all-lowercase completion (registers itself on import)."""

    name = "whisper"

    def score_one(self, completion, row):
        return RewardResult(score=float(completion.islower()), reason="")
'''


def test_entry_point_plugins_load(tmp_path, monkeypatch, clean_registry, caplog):
    (tmp_path / "rk_demo_plugin.py").write_text(PLUGIN_MODULE)
    dist = tmp_path / "rk_demo_plugin-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: rk-demo-plugin\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text(
        textwrap.dedent(
            """\
            [rewardsmith.rewards]
            shout = rk_demo_plugin:Shout
            whisper_module = rk_demo_plugin
            broken = rk_demo_plugin_missing:Nope
            """
        )
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "rk_demo_plugin", raising=False)
    clean_registry._REWARDS._loaded = False
    with caplog.at_level(logging.WARNING, logger="rewardsmith.registry"):
        names = list_rewards()
    assert "shout" in names and "whisper" in names and "broken" not in names
    assert "think_format" in names
    assert "could not load reward plugin broken" in caplog.text
    assert get_reward("shout")(["HEY", "hey"]) == [1.0, 0.0]
    assert get_reward("whisper")(["HEY", "hey"]) == [0.0, 1.0]
    monkeypatch.delitem(sys.modules, "rk_demo_plugin", raising=False)


# -- the calling convention ------------------------------------------------------------------------------
def test_plain_and_conversational_completions():
    reward = get_reward("think_format")
    assert reward([GOOD, BAD]) == [1.0, 0.0]
    conversational = [
        [{"role": "assistant", "content": GOOD}],
        [{"role": "assistant", "content": BAD}],
        [
            {
                "role": "assistant",
                "content": [{"type": "text", "text": "<think>a</think>"}, {"type": "text", "text": " b"}],
            }
        ],
        {"role": "assistant", "content": GOOD},
    ]
    assert reward(conversational) == [1.0, 0.0, 1.0, 1.0]


def test_trainer_kwargs_are_accepted_and_ignored():
    reward = get_reward("think_format")
    metrics: list[tuple[str, float]] = []
    scores = reward(
        prompts=["p1", "p2"],
        completions=[GOOD, BAD],
        completion_ids=[[1, 2], [3]],
        trainer_state=object(),
        log_metric=lambda name, value: metrics.append((name, value)),
        environments=[object(), object()],
        some_unused_column=["a", "b"],
    )
    assert scores == [1.0, 0.0]


def test_columns_are_aligned_per_sample():
    reward = MatchesSolution()
    results = reward.details(
        ["4", "5", "6"], prompts=["p0", "p1", "p2"], solution=["4", "0", "6"], short_column=["only", "two"]
    )
    assert [r.score for r in results] == [1.0, 0.0, 1.0]
    assert [r.reason for r in results] == ["prompt='p0'", "prompt='p1'", "prompt='p2'"]


def array_columns():
    import numpy as np
    import pandas as pd
    import torch

    return [
        ("numpy", np.array(["4", "0", "6"]), np.array(["p0", "p1", "p2"])),
        ("pandas", pd.Series(["4", "0", "6"]), pd.Series(["p0", "p1", "p2"])),
        ("tuple", ("4", "0", "6"), ("p0", "p1", "p2")),
        ("torch-ids", torch.tensor([4, 0, 6]), ["p0", "p1", "p2"]),
    ]


@pytest.mark.parametrize("case", range(4), ids=["numpy", "pandas", "tuple", "torch"])
def test_array_columns_are_columns_of_plain_values(case):
    name, solution, prompts = array_columns()[case]
    completions = ["4", "5", "6"] if name != "torch-ids" else [4, 5, 6]

    class SeesRows(Reward):
        name = "sees_rows"

        def score_one(self, completion, row):
            return RewardResult(score=float(str(row["solution"]) == completion), reason=repr(row["solution"]))

    texts = [str(c) for c in completions]
    results = SeesRows().details(texts, solution=solution, prompts=prompts)
    assert [r.score for r in results] == [1.0, 0.0, 1.0]
    expected = [repr(4), repr(0), repr(6)] if name == "torch-ids" else [repr("4"), repr("0"), repr("6")]
    assert [r.reason for r in results] == expected  # plain str / int, not numpy or torch scalars
    import numpy as np

    assert get_reward("think_format")(np.array([GOOD, BAD])) == [1.0, 0.0]  # completions as an array too


@pytest.mark.skipif("math_equivalence" not in set(list_rewards()), reason="math family absent")
def test_math_reads_a_numpy_gold_column():
    import numpy as np

    [result] = get_reward("math_equivalence", {"workers": 1}).details(["\\boxed{1}"], solution=np.array(["1"]))
    assert result.score == 1.0


MISALIGNED_TABLE = [
    # (columns, reason of the unscorable samples)
    ({"solution": ["4"]}, "column 'solution' has 1 value for 2 completions (no solution column)"),
    ({"solution": ["4", "5", "6"]}, "column 'solution' has 3 values for 2 completions (no solution column)"),
    ({"solution": "4"}, "column 'solution' is str, not one value per completion (no solution column)"),
    ({"solution": 4}, "column 'solution' is int, not one value per completion (no solution column)"),
    ({"other": ["x"]}, "no solution column; column 'other' has 1 value for 2 completions"),
]


@pytest.mark.parametrize(("columns", "reason"), MISALIGNED_TABLE)
def test_misaligned_columns_are_named_in_the_reason(columns, reason):
    results = MatchesSolution().details(["4", "4"], **columns)
    assert [(r.score, r.reason) for r in results] == [(None, reason)] * 2
    # a composite does not repeat the note its part already gave
    [result, _] = get_reward("weighted_sum", {"rewards": [MatchesSolution()]}).details(["4", "4"], **columns)
    assert result.score is None and result.reason.count(reason.split(" (")[0].split("; ")[-1]) == 1


def test_misaligned_columns_leave_scored_samples_alone():
    assert [r.reason for r in MatchesSolution().details(["4"], prompts=["p"], solution=["4"], x=[1, 2])] == [
        "prompt='p'"
    ]


class NeedsGold(Reward):
    """Declares its gold column: a misaligned gold is reported before the family runs."""

    name = "needs_gold"
    calls = 0
    gold_columns = ("gold",)

    def score_one(self, completion, row):
        type(self).calls += 1
        return RewardResult(score=float(completion == row.get("gold")), reason=f"gold={row.get('gold')!r}")


def test_gold_columns_misaligned_are_unscorable_before_the_family_runs():
    NeedsGold.calls = 0
    results = NeedsGold().details(["4", "5"], gold=["4"])
    assert [(r.score, r.reason) for r in results] == [(None, "column 'gold' has 1 value for 2 completions")] * 2
    assert NeedsGold.calls == 0
    assert NeedsGold()(["4", "5"], gold=["4", "4"]) == [1.0, 0.0] and NeedsGold.calls == 2
    assert NeedsGold()(["4"]) == [0.0]  # absent (not misaligned): the family decides


def test_log_extra_receives_reasons_under_the_logged_name():
    recorder = LogRecorder()
    get_reward("think_format")([GOOD, BAD], log_extra=recorder)
    assert recorder.columns == {"think_format_reason": ["well formatted", "found 0 </think>, expected 1"]}

    named = get_reward("weighted_sum", {"rewards": ["think_format"], "name": "fmt_total"})
    recorder = LogRecorder()
    named([GOOD], log_extra=recorder)
    assert list(recorder.columns) == ["fmt_total_reason"]

    recorder = LogRecorder()
    asyncio.run(named.as_async()([GOOD], log_extra=recorder))
    assert named.as_async().__name__ == "fmt_total" and list(recorder.columns) == ["fmt_total_reason"]


def test_failing_log_extra_costs_nothing():
    def broken_log_extra(column, values):
        raise RuntimeError("logger down")

    assert get_reward("think_format")([GOOD], log_extra=broken_log_extra) == [1.0]


NON_TEXT_TABLE = [
    # (completion, reason: the type that was found, not the NoneType of a failed conversion)
    (None, "completion is None, not text"),
    (5, "completion is int, not text"),
    (1.5, "completion is float, not text"),
    (b"<think>a</think> b", "completion is bytes, not text"),
    ({"x": 1}, "completion content is None, not text"),
    ({"role": "assistant", "content": 5}, "completion content is int, not text"),
    ([{"role": "assistant", "content": 5}], "completion content is int, not text"),
    ([{"role": "assistant", "content": [{"type": "image"}]}], "completion content has no text part"),
    ([], "completion is an empty list, not text"),
    ([{"role": "user", "content": GOOD}], "completion has no assistant message"),
    ([[GOOD]], "completion is a list of list, not messages"),
    (object(), "completion is object, not text"),
]


@pytest.mark.parametrize(("completion", "reason"), NON_TEXT_TABLE, ids=[r for _, r in NON_TEXT_TABLE])
def test_non_text_completions_are_unscorable_with_their_type(completion, reason):
    for reward in (get_reward("think_format"), get_reward("weighted_sum", {"rewards": ["think_format"]})):
        [result] = reward.details([completion])
        assert (result.score, result.reason) == (None, reason)
        [result] = asyncio.run(reward.adetails([completion]))
        assert (result.score, result.reason) == (None, reason)


def test_non_text_completions_never_reach_the_family():
    seen: list[Any] = []

    class Recorder(Reward):
        name = "recorder"

        def score_batch(self, completions, rows):
            seen.extend(completions)
            return [RewardResult(score=1.0) for _ in completions]

    scores = Recorder()([GOOD, 5, None, [{"role": "assistant", "content": "b"}]])
    assert scores == [1.0, None, None, 1.0] and seen == [GOOD, "b"]
    assert Recorder()([5]) == [None] and seen == [GOOD, "b"]  # a batch without text costs no family call


class RaisingEquality:
    """A role object whose comparison raises: garbage from a buggy pipeline, not text."""

    __hash__ = object.__hash__

    def __eq__(self, other):
        raise RuntimeError("cannot compare")


def test_exotic_message_objects_do_not_raise():
    [result] = get_reward("think_format").details([[{"role": RaisingEquality(), "content": GOOD}]])
    assert result.score is None and result.reason == "completion is not text"


def test_empty_text_is_scored_not_unscorable():
    assert get_reward("think_format")(["", [{"role": "assistant", "content": ""}]]) == [0.0, 0.0]


def test_bare_single_completion_is_one_sample():
    assert get_reward("think_format")(GOOD) == [1.0]


def test_internal_errors_become_none_per_sample():
    results = ExplodesOnBoom().details(["ok", "boom", "nan", "raw", None])
    assert [r.score for r in results] == [1.0, None, None, None, None]
    assert results[1].reason == "internal error: RuntimeError: boom"
    assert results[2].reason.startswith("non-finite score nan")
    assert "expected a RewardResult" in results[3].reason


def test_batch_failures_and_wrong_lengths_become_none():
    for reward, reason in [
        (BatchCrash(), "internal error: OSError: backend down"),
        (WrongLength(), "internal error: 1 results for 3 samples"),
    ]:
        results = reward.details(["a", "b", "c"])
        assert [r.score for r in results] == [None, None, None]
        assert all(r.reason == reason for r in results)
        assert reward(["a", "b", "c"]) == [None, None, None]
        assert asyncio.run(reward.as_async()(["a", "b", "c"])) == [None, None, None]


def test_custom_config_is_validated_once():
    class LengthAbove(Reward):
        name = "length_above"

        class Config(RewardConfig):
            threshold: int = 3

        def score_one(self, completion, row):
            return RewardResult(score=float(len(completion) > self.config.threshold))

    assert LengthAbove({"threshold": 1})(["ab", "a"]) == [1.0, 0.0]
    with pytest.raises(ConfigError, match="length_above"):
        LengthAbove(threshold="x")


# -- composition -------------------------------------------------------------------------------------------
UNSCORABLE_IF_LONG = {"name": "regex_match", "config": {"pattern": "4", "max_chars": 30, "overlong_score": None}}
LONG_GOOD = "<think>" + "x" * 40 + "</think> 4"

# (config, completion, expected)
WEIGHTED_SUM_TABLE = [
    ({"rewards": ["think_format", {"name": "tag_count", "weight": 0.5}]}, GOOD, 1.0 + 0.5 * 0.5),
    ({"rewards": ["think_format", {"name": "tag_count", "weight": 0.5}]}, BAD, 0.0),
    ({"rewards": ["think_format", "tag_count"], "weights": [2.0, -1.0]}, GOOD, 2.0 - 0.5),
    ({"rewards": ["think_format", UNSCORABLE_IF_LONG]}, GOOD, 2.0),
    ({"rewards": ["think_format", UNSCORABLE_IF_LONG]}, LONG_GOOD, 1.0),  # the None part is skipped
    ({"rewards": ["think_format", UNSCORABLE_IF_LONG], "missing": "zero"}, LONG_GOOD, 1.0),
    ({"rewards": [UNSCORABLE_IF_LONG]}, LONG_GOOD, None),  # every part unscorable
    ({"rewards": [UNSCORABLE_IF_LONG], "missing": "zero"}, LONG_GOOD, 0.0),
    ({"rewards": ["think_format"]}, None, None),
]

GATE_TABLE = [
    ({"gate": "think_format", "reward": "tag_count"}, "<think>a</think><answer>4</answer>", 1.0),
    ({"gate": "think_format", "reward": "tag_count"}, GOOD, 0.5),
    ({"gate": "think_format", "reward": "tag_count"}, "<think>a</think>", 0.0),  # gate fails: otherwise=0
    ({"gate": "think_format", "reward": "tag_count", "otherwise": -1.0}, BAD, -1.0),
    ({"gate": "think_format", "reward": "tag_count", "otherwise": None}, BAD, None),
    ({"gate": "tag_count", "reward": "think_format", "threshold": 0.5}, GOOD, 1.0),
    ({"gate": "tag_count", "reward": "think_format", "threshold": 0.75}, GOOD, 0.0),
    ({"gate": UNSCORABLE_IF_LONG, "reward": "think_format"}, LONG_GOOD, None),  # unscorable gate
    ({"gate": "think_format", "reward": UNSCORABLE_IF_LONG}, LONG_GOOD, None),
]

ROUTES = {"fmt": "think_format", "tags": "tag_count"}
ROUTE_TABLE = [
    ({"routes": ROUTES}, GOOD, "fmt", 1.0),
    ({"routes": ROUTES}, GOOD, "tags", 0.5),
    ({"routes": ROUTES}, GOOD, "other", None),
    ({"routes": ROUTES}, GOOD, None, None),
    ({"routes": ROUTES}, GOOD, ["fmt"], None),  # an unhashable value routes nowhere, without raising
    ({"routes": ROUTES, "default": {"name": "regex_match", "config": {"pattern": "4"}}}, GOOD, "other", 1.0),
    ({"routes": ROUTES, "column": "kind"}, GOOD, "fmt", None),  # the configured column is absent
]


def _score_both_ways(reward: Reward, completions: list[Any], **columns: Any) -> list[float | None]:
    sync = reward(completions, **columns)
    assert asyncio.run(reward.as_async()(completions, **columns)) == sync
    return sync


@pytest.mark.parametrize(("config", "completion", "expected"), WEIGHTED_SUM_TABLE)
def test_weighted_sum_verdicts(config, completion, expected):
    assert _score_both_ways(get_reward("weighted_sum", config), [completion]) == [expected]


@pytest.mark.parametrize(("config", "completion", "expected"), GATE_TABLE)
def test_gate_verdicts(config, completion, expected):
    assert _score_both_ways(get_reward("gate", config), [completion]) == [expected]


@pytest.mark.parametrize(("config", "completion", "task", "expected"), ROUTE_TABLE)
def test_route_verdicts(config, completion, task, expected):
    assert _score_both_ways(get_reward("route", config), [completion], task=[task]) == [expected]


def test_route_keeps_batch_order():
    reward = get_reward("route", {"routes": ROUTES})
    tasks = ["tags", "fmt", "nope", "fmt", "tags"]
    completions = [GOOD, BAD, GOOD, GOOD, BAD]
    assert _score_both_ways(reward, completions, task=tasks) == [0.5, 0.0, None, 1.0, 0.0]
    reasons = [r.reason for r in reward.details(completions, task=tasks)]
    assert reasons[2] == "no route for task='nope'"


def test_composite_reasons_name_parts():
    reward = get_reward("weighted_sum", {"rewards": ["think_format", "tag_count"]})
    [result] = reward.details([BAD])
    assert result.reason.startswith("think_format=0.0 (found 0 </think>, expected 1); tag_count=0.0")
    [gated] = get_reward("gate", {"gate": "think_format", "reward": "tag_count"}).details([BAD])
    assert gated.reason == "gate think_format failed (0.0): found 0 </think>, expected 1"


def test_composition_from_yaml():
    spec = yaml.safe_load(
        textwrap.dedent(
            """\
            name: weighted_sum
            config:
              name: format_and_length
              rewards:
                - name: gate
                  weight: 1.0
                  config:
                    gate: think_format
                    reward: {name: regex_match, config: {pattern: '\\\\boxed\\{\\d+\\}'}}
                - name: soft_overlong
                  weight: 0.5
                  config: {max_length: 40, buffer: 10, unit: chars}
            """
        )
    )
    reward = get_reward(spec["name"], spec["config"])
    assert reward.__name__ == "format_and_length"
    ok = "<think>a</think> \\boxed{4}"
    long_ok = "<think>" + "a" * 30 + "</think> \\boxed{4}"
    assert reward([ok, long_ok, "\\boxed{4}"]) == [1.0, 1.0 + 0.5 * -1.0, 0.0]


@pytest.mark.parametrize(
    ("name", "config", "message"),
    [
        ("weighted_sum", {"rewards": ["think_format"], "weights": [1.0, 2.0]}, "2 weights for 1 rewards"),
        ("weighted_sum", {"rewards": [{"name": "think_format", "wieght": 2}]}, "unknown keys"),
        ("weighted_sum", {"rewards": [42]}, "a reward spec is a name"),
        ("weighted_sum", {"rewards": ["think_format"], "weights": [math.nan]}, "weights.0: Input should be a finite"),
        ("weighted_sum", {"rewards": ["think_format"], "weights": [math.inf]}, "weights.0: Input should be a finite"),
        ("weighted_sum", {"rewards": [{"name": "think_format", "weight": math.nan}]}, "weight must be a finite"),
        ("weighted_sum", {"rewards": [{"name": "think_format", "weight": "2"}]}, "weight must be a finite number"),
        ("gate", {"reward": "think_format", "gate": "tag_count", "threshold": math.nan}, "threshold"),
        ("gate", {"reward": "think_format"}, "gate: Field required"),
        ("route", {"routes": {}}, "routes"),
        ("route", {"routes": {"a": {"name": "regex_match", "config": {"pattern": "("}}}}, "invalid pattern"),
    ],
)
def test_composition_config_errors(name, config, message):
    with pytest.raises(ConfigError, match=message):
        get_reward(name, config)


def test_composites_accept_reward_instances():
    reward = rewardsmith.WeightedSum({"rewards": [get_reward("think_format"), MatchesSolution()], "weights": [1, 2]})
    assert reward([GOOD, "4"], solution=["x", "4"]) == [1.0, 2.0]


# -- pickling ----------------------------------------------------------------------------------------------
def _picklable_zoo() -> list[Reward]:
    return [
        get_reward("think_format", {"answer_tag": "answer"}),
        get_reward("regex_match", {"pattern": r"\d+"}),
        get_reward("weighted_sum", {"rewards": ["think_format", {"name": "tag_count", "weight": 0.5}], "name": "ws"}),
        get_reward("gate", {"gate": "think_format", "reward": "tag_count"}),
        get_reward("route", {"routes": ROUTES, "default": "think_format"}),
        get_reward("cosine_length", {"correctness": {"name": "regex_match", "config": {"pattern": "4"}}}),
    ]


def test_rewards_and_async_wrappers_pickle():
    completions = [GOOD, BAD, "<think>a</think><answer>4</answer>"]
    for reward in _picklable_zoo():
        clone = pickle.loads(pickle.dumps(reward))
        assert clone.__name__ == reward.__name__
        assert clone(completions, task=["fmt", "tags", "x"]) == reward(completions, task=["fmt", "tags", "x"])
        async_clone = pickle.loads(pickle.dumps(reward.as_async()))
        assert asyncio.run(async_clone(completions, task=["fmt", "tags", "x"])) == reward(
            completions, task=["fmt", "tags", "x"]
        )


def test_rewards_score_in_a_spawned_process():
    """TRL's async GRPO scores in a spawned worker: the reward object itself must travel there."""
    completions = [GOOD, BAD, [{"role": "assistant", "content": GOOD}]]
    rewards = _picklable_zoo()
    expected = [r(completions, task=["fmt", "tags", "fmt"]) for r in rewards]
    with ProcessPoolExecutor(max_workers=1, mp_context=multiprocessing.get_context("spawn")) as pool:
        futures = [pool.submit(r, completions, task=["fmt", "tags", "fmt"]) for r in rewards]
        got = [f.result(timeout=120) for f in futures]
    assert got == expected
