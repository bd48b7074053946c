"""Reward configs grouped by stage: one rule (on ``RewardConfig``) takes every setting flat or in its group.

The grouped form is what the docs show; the flat one is what spec files, ``get_reward(name, **flat)`` and
``MathEquivalence(boxed="last")`` have always written, so both must build the same config, read the same, and
fingerprint the same.
"""

from __future__ import annotations

import pickle
from typing import Any

import pytest
from pydantic import Field

from rewardsmith import ConfigError, get_reward
from rewardsmith.adapters.spec import load_spec
from rewardsmith.reward_config import ConfigGroup, RewardConfig, build_config
from rewardsmith.rewards.code.reward import CodeTestsConfig
from rewardsmith.rewards.code_turns import CodeTurnsConfig
from rewardsmith.rewards.math.reward import MathEquivalence, MathEquivalenceConfig
from rewardsmith.scoring import scorer_id


class Stage(ConfigGroup):
    level: int = 1
    shared: int = 0


class Other(ConfigGroup):
    mode: str = "a"
    shared: int = 0


class Toy(RewardConfig):
    column: str = "c"
    stage: Stage = Field(default_factory=Stage)
    other: Other = Field(default_factory=Other)


def _build(config: Any = None, **overrides: Any) -> RewardConfig:
    return build_config(Toy, config, overrides, reward_name="toy")


def test_a_flat_setting_goes_into_the_one_group_that_declares_it():
    flat, nested = Toy(level=3, mode="b"), Toy(stage={"level": 3}, other={"mode": "b"})
    assert flat == nested
    assert (
        flat.model_dump()
        == nested.model_dump()
        == {
            "column": "c",
            "stage": {"level": 3, "shared": 0},
            "other": {"mode": "b", "shared": 0},
        }
    )
    assert Toy(stage=Stage(level=3), mode="b") == flat  # a group given as its model takes flat settings beside it


def test_a_flat_name_reads_its_group_and_other_names_stay_errors():
    config = Toy(level=3)
    assert config.level == config.stage.level == 3
    with pytest.raises(AttributeError):
        config.nope  # noqa: B018
    with pytest.raises(AttributeError):
        config.shared  # noqa: B018  # two groups declare it: no guess


def test_wrong_flat_settings_are_one_line_errors():
    with pytest.raises(ConfigError, match=r"'shared' is a setting of several groups \(stage, other\)"):
        _build(shared=1)
    with pytest.raises(ConfigError, match="'level' is given twice: flat and inside 'stage'"):
        _build({"stage": {"level": 2}, "level": 3})
    with pytest.raises(ConfigError, match="levle: Extra inputs are not permitted"):
        _build(levle=3)
    with pytest.raises(ConfigError, match=r"stage\.levle: Extra inputs are not permitted"):
        _build(stage={"levle": 3})
    assert _build(stage={"shared": 1}).stage.shared == 1  # inside its group an ambiguous name is plain


def test_overrides_win_setting_by_setting_also_inside_a_group():
    base = Toy(stage={"level": 3, "shared": 2})
    assert _build(base, level=5).stage == Stage(level=5, shared=2)
    assert _build({"stage": {"shared": 2}}, stage={"level": 5}).stage == Stage(level=5, shared=2)
    assert _build({"level": 3}, level=4).stage.level == 4


def test_flat_is_one_spelling_of_given_settings():
    assert Toy.flat({"stage": {"level": 3}}) == Toy.flat({"level": 3}) == {"level": 3}
    assert Toy.flat({"stage": {"shared": 1}, "mode": "b"}) == {"stage": {"shared": 1}, "mode": "b"}


def test_a_grouped_config_pickles():
    config = Toy(level=3)
    assert pickle.loads(pickle.dumps(config)) == config


#: Every setting ``math_equivalence`` and ``code_tests`` took flat before they were grouped: each still does.
MATH_FLAT = {
    "boxed": "last",
    "decimal_comma": True,
    "anchors": False,
    "fallback_last_math": True,
    "fallback_last_number": True,
    "reasoning_end": None,
    "answer_tag": None,
    "rel_tol": 1e-3,
    "float_rounding": 4,
    "symbolic": False,
    "timeout_s": 2.0,
    "startup_timeout_s": 30.0,
    "timeout_score": None,
    "workers": 1,
    "memory_limit_mb": 1024,
    "cache_size": 8,
    "llm_fallback": {"backend": "openai", "model": "m", "base_url": "http://127.0.0.1:9/v1"},
    "llm_fallback_max_tokens": 2,
    "correct": 2.0,
    "wrong": -1.0,
}
CODE_FLAT = {
    "language": "cpp",
    "code_block": "first",
    "allow_untagged_block": False,
    "scoring": "all_or_nothing",
    "timeout_s": 2.0,
    "memory_mb": 256,
    "compile_timeout_s": 30.0,
    "max_tests": 3,
    "backend": "docker",
    "base_url": "http://127.0.0.1:9",
    "backend_options": {"retries": 1},
    "isolation": "weak",
    "concurrency": 2,
    "stop_on_first_failure": True,
    "check_batch": 4,
    "detect_tests": False,
    "prepend_prompt": "never",
    "untrusted_asserts": "run",
}
TURNS_FLAT = {
    "sources": "fenced",
    "tool_names": ["python"],
    "code_argument": "source",
    "no_code_score": 0.5,
    "recorded_output": "zero",
    "compare_chars": 10,
    "timeout_s": 2.0,
    "memory_mb": 256,
    "output_bytes": 1024,
    "backend": "docker",
    "base_url": None,
    "backend_options": {},
    "isolation": "weak",
    "concurrency": 2,
}


@pytest.mark.parametrize(
    ("model", "flat"),
    [(MathEquivalenceConfig, MATH_FLAT), (CodeTestsConfig, CODE_FLAT), (CodeTurnsConfig, TURNS_FLAT)],
    ids=["math_equivalence", "code_tests", "code_turns"],
)
def test_every_former_flat_setting_builds_the_grouped_config(model: type[RewardConfig], flat: dict[str, Any]):
    config = model(**flat)
    grouped = model.model_validate(config.model_dump())
    assert grouped == config and set(config.model_dump()) == set(model.model_fields)
    for name, value in flat.items():
        group = next(g for g, kind in model.groups().items() if name in kind.model_fields)
        assert getattr(getattr(config, group), name) == value == getattr(config, name)
        assert model(**{name: value}) == model(**{group: {name: value}})
    assert model.flat(config.model_dump()) == {**model.flat(model().model_dump()), **flat}


def test_math_equivalence_scores_the_same_flat_or_grouped():
    completions, gold = [r"first \boxed{1}, then \boxed{2}"], ["2"]
    rewards = [
        MathEquivalence(boxed="last", symbolic=False),
        get_reward("math_equivalence", {"extract": {"boxed": "last"}}, symbolic=False),
        MathEquivalence(MathEquivalenceConfig(compare={"symbolic": False}), extract={"boxed": "last"}),
    ]
    try:
        assert {r.config for r in rewards} == {rewards[0].config}
        assert [r(completions, solution=gold) for r in rewards] == [[1.0]] * 3
        assert MathEquivalence(boxed="first", symbolic=False)(completions, solution=gold) == [0.0]
    finally:
        for reward in rewards:
            reward.close()


def test_spec_files_take_either_spelling(tmp_path):
    flat = tmp_path / "flat.yaml"
    flat.write_text("rewards:\n  - name: math_equivalence\n    config: {boxed: last, timeout_s: 3, symbolic: false}\n")
    grouped = tmp_path / "grouped.yaml"
    grouped.write_text(
        "rewards:\n  - name: math_equivalence\n    config:\n      extract: {boxed: last}\n"
        "      runtime: {timeout_s: 3}\n      compare: {symbolic: false}\n"
    )
    built = [load_spec(path).combined() for path in (flat, grouped)]
    try:
        assert built[0].config == built[1].config
        assert built[0].config.runtime.timeout_s == 3
    finally:
        for reward in built:
            reward.close()


def test_a_scorer_fingerprint_does_not_depend_on_the_spelling():
    flat = scorer_id("math_equivalence", {"boxed": "last", "timeout_s": 3}, "completion")
    grouped = scorer_id("math_equivalence", {"extract": {"boxed": "last"}, "runtime": {"timeout_s": 3}}, "completion")
    assert flat == grouped
    assert flat != scorer_id("math_equivalence", {"boxed": "first", "timeout_s": 3}, "completion")


def test_rewards_list_names_each_grouped_setting(capsys):
    from rewardsmith.cli.main import main

    assert main(["rewards", "list", "--json"]) == 0
    import json

    rows = {row["name"]: row["config"] for row in json.loads(capsys.readouterr().out)}
    assert "extract.boxed" in rows["math_equivalence"] and "runtime.timeout_s" in rows["math_equivalence"]
    assert "sandbox.backend" in rows["code_tests"] and "gold_column" in rows["math_equivalence"]
    assert "extract" not in rows["math_equivalence"]


def test_the_audit_profile_reads_a_grouped_setting_as_its_flat_spelling():
    from rewardsmith.hackaudit.spec_kinds import profile_spec

    for config in ({"sandbox": {"timeout_s": 9}}, {"timeout_s": 9}):
        profile = profile_spec({"rewards": [{"name": "code_tests", "config": {**config, "tests_column": "t"}}]})
        assert (profile.code_timeout_s, profile.tests_column) == (9.0, "t")
