"""TRL adapter: specs become GRPOTrainer reward functions; RLAIF rows become DPOTrainer datasets.

End to end on the tiny offline model with real TRL 1.16 trainers.
"""

from __future__ import annotations

import json
import math

import pytest

import rewardsmith
from rewardsmith.adapters.demo.tasks import arithmetic, arithmetic_pairs
from rewardsmith.adapters.spec import RewardSpec, load_spec
from rewardsmith.adapters.trainers.trl import dpo_dataset, grpo_config_kwargs, grpo_rewards
from rewardsmith.reward import AsyncReward, ConfigError
from tests.support.trl_helpers import tiny_dpo_config, tiny_grpo_config

HAVE = set(rewardsmith.list_rewards())
needs = pytest.mark.skipif(not {"math_equivalence", "think_format"} <= HAVE, reason="math/format families absent")

SPEC = {
    "rewards": [
        {"name": "math_equivalence", "config": {"workers": 1}, "weight": 1.0, "gate": "think_format"},
        {"name": "think_format", "weight": 0.25},
        {
            "name": "route",
            "weight": 0.5,
            "label": "by_task",
            "config": {"column": "task", "routes": {"arithmetic": "think_format"}},
        },
    ]
}


# -- spec -> reward_funcs / reward_weights ---------------------------------------------------------
@needs
def test_spec_builds_named_funcs_and_weights():
    funcs, weights = grpo_rewards(SPEC)
    assert [f.__name__ for f in funcs] == ["math_equivalence_if_think_format", "think_format", "by_task"]
    assert weights == [1.0, 0.25, 0.5]
    assert grpo_config_kwargs(SPEC) == {"reward_weights": [1.0, 0.25, 0.5]}
    good, bad, unformatted = "<think>3+4=7</think> \\boxed{7}", "<think>x</think> \\boxed{8}", "\\boxed{7}"
    scores = [f([good, bad, unformatted], solution=["7"] * 3, task=["arithmetic"] * 3) for f in funcs]
    assert scores[0] == [1.0, 0.0, 0.0]  # gated: right answer outside the format earns nothing
    assert scores[1][0] == 1.0 and scores[1][2] == 0.0
    assert scores[2] == scores[1]  # routed to think_format by the task column


@needs
def test_spec_from_yaml_file_and_async(tmp_path):
    path = tmp_path / "spec.yaml"
    path.write_text("rewards:\n  - think_format\n  - name: tag_count\n    weight: 0.5\nasync: true\n")
    spec = load_spec(path)
    funcs = spec.reward_funcs()
    assert all(isinstance(f, AsyncReward) for f in funcs) and spec.reward_weights() == [1.0, 0.5]
    combined = spec.combined()
    assert combined(["<think>a</think> b"])[0] == pytest.approx(
        funcs[0].reward(["<think>a</think> b"])[0] + 0.5 * funcs[1].reward(["<think>a</think> b"])[0]
    )


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ({"rewards": []}, "rewards"),
        ({"rewards": [{"name": "no_such_reward"}]}, "no_such_reward"),
        ({"rewards": [{"name": "weighted_sum", "config": {"rewards": []}}]}, "weighted_sum"),
        ({"rewards": [{"name": "gate", "wieght": 1}]}, "wieght"),
        ({"reward": ["think_format"]}, "reward"),
        ("not-a-file.yaml", "no such reward spec file"),
        (
            [{"name": "think_format"}, {"name": "tag_count"}, {"name": "think_format", "weight": 0.5}],
            "rewards.0, rewards.2 are all logged as 'think_format'.*give all but one a distinct 'label'",
        ),
        (
            [{"name": "tag_count", "gate": "think_format"}, {"name": "tag_count", "gate": {"name": "think_format"}}],
            "logged as 'tag_count_if_think_format'",
        ),
        ([{"name": "think_format", "weight": float("nan")}], "rewards.0.weight: weight must be a finite number"),
        ([{"name": "think_format", "weight": float("inf")}], "rewards.0.weight: weight must be a finite number"),
        ([{"name": "think_format", "gate": "tag_count", "gate_otherwise": float("nan")}], "gate_otherwise"),
        ([{"name": "weighted_sum", "config": {"rewards": ["think_format"], "weights": [float("-inf")]}}], "weights"),
    ],
)
def test_invalid_spec_fails_at_load(spec, message):
    with pytest.raises((ConfigError, FileNotFoundError), match=message):
        load_spec(spec)


@needs
def test_labels_make_repeated_rewards_distinct():
    funcs, weights = grpo_rewards(
        [{"name": "math_equivalence", "config": {"workers": 1}}, {"name": "math_equivalence", "label": "math_strict"}]
    )
    assert [f.__name__ for f in funcs] == ["math_equivalence", "math_strict"] and weights == [1.0, 1.0]


def test_bare_list_is_a_spec():
    spec = load_spec([{"name": "character_share", "weight": 2.0}])
    assert isinstance(spec, RewardSpec) and spec.reward_weights() == [2.0]


# -- RLAIF rows -> DPO datasets --------------------------------------------------------------------
RLAIF_ROWS = [
    {
        "status": "pair",
        "prompt": "Be kind?",
        "chosen": "Yes.",
        "rejected": "No.",
        "prob_chosen": 0.8,
        "judge_model": "smol",
        "principles": ["harmless"],
    },
    {
        "status": "pair",
        "prompt": [{"role": "system", "content": "S"}, {"role": "user", "content": "Q?"}],
        "chosen": [{"role": "assistant", "content": "A"}],
        "rejected": [{"role": "assistant", "content": "B"}],
        "prob_chosen": 0.7,
        "judge_model": "smol",
        "principles": ["honest"],
    },
    {
        "status": "dropped",
        "reason": "tie",
        "prompt": "x",
        "response_a": "a",
        "response_b": "b",
        "judge_model": "smol",
        "principles": ["honest"],
    },
    {"status": "pair", "prompt": "same", "chosen": "z", "rejected": "z", "judge_model": "smol", "principles": []},
]

# (format, keep_provenance, expected columns, expected rows as (prompt, chosen, rejected))
DPO_TABLE = [
    ("plain", False, ["prompt", "chosen", "rejected"], [("Be kind?", "Yes.", "No."), ("Q?", "A", "B")]),
    (
        "conversational",
        True,
        ["prompt", "chosen", "rejected", "status", "prob_chosen", "judge_model", "principles"],
        [
            (
                [{"role": "user", "content": "Be kind?"}],
                [{"role": "assistant", "content": "Yes."}],
                [{"role": "assistant", "content": "No."}],
            ),
            (RLAIF_ROWS[1]["prompt"], RLAIF_ROWS[1]["chosen"], RLAIF_ROWS[1]["rejected"]),
        ],
    ),
]


@pytest.mark.parametrize(("fmt", "keep", "columns", "expected"), DPO_TABLE)
def test_dpo_dataset_verdict_table(fmt, keep, columns, expected):
    ds = dpo_dataset(RLAIF_ROWS, format=fmt, keep_provenance=keep)
    assert ds.column_names == columns
    assert [(r["prompt"], r["chosen"], r["rejected"]) for r in ds.to_list()] == expected  # dropped/tied rows gone


def test_dpo_dataset_keep_format_leaves_fields_alone():
    ds = dpo_dataset([RLAIF_ROWS[1]], keep_provenance=False)
    assert ds.to_list() == [{k: RLAIF_ROWS[1][k] for k in ("prompt", "chosen", "rejected")}]


def test_dpo_dataset_system_prompt_and_errors(tmp_path):
    ds = dpo_dataset([RLAIF_ROWS[0]], format="conversational", system_prompt="Be brief.")
    assert ds[0]["prompt"][0] == {"role": "system", "content": "Be brief."}
    with pytest.raises(ValueError, match="no usable preference rows"):
        dpo_dataset([RLAIF_ROWS[2], RLAIF_ROWS[3]])
    with pytest.raises(ValueError, match="format"):
        dpo_dataset([RLAIF_ROWS[0]], format="chatml")  # type: ignore[arg-type]
    path = tmp_path / "pairs.jsonl"

    path.write_text("".join(json.dumps(r) + "\n" for r in [RLAIF_ROWS[0], RLAIF_ROWS[3]]))
    assert dpo_dataset(path).to_list() == [{"prompt": "Be kind?", "chosen": "Yes.", "rejected": "No."}]


# -- end to end with TRL ---------------------------------------------------------------------------
#: Single-digit golds ("What is 2 + 0?") that the random tiny model sometimes hits with its last number, and a
#: digit check that varies from sample to sample, so the comparison below is not between constants.
E2E_SPEC = [
    {"name": "math_equivalence", "config": {"workers": 1, "fallback_last_number": True}},
    {"name": "think_format", "weight": 0.5},
    {"name": "regex_match", "label": "has_digit", "config": {"pattern": "[0-9]"}, "weight": 0.1},
]


def same_as_logged(logged: list[float], expected: list[float | None]) -> bool:
    """TRL stores rewards as float32 and None as NaN."""
    return len(logged) == len(expected) and all(
        math.isnan(got) if want is None else math.isclose(got, want, rel_tol=1e-6, abs_tol=1e-6)
        for got, want in zip(logged, expected, strict=True)
    )


@needs
@pytest.mark.slow
@pytest.mark.parametrize("use_async", [False, True])
def test_grpo_trainer_end_to_end_with_math_and_format(tiny_model_dir, tmp_path, use_async):
    from datasets import Dataset
    from transformers import AutoTokenizer
    from trl import GRPOTrainer

    rows = arithmetic(8, ops="+", max_operand=4, conversational=True)
    gold_of = {row["prompt"][-1]["content"]: row["solution"] for row in rows}
    funcs, weights = grpo_rewards({"rewards": E2E_SPEC, "async": use_async})
    args = tiny_grpo_config(tmp_path, reward_weights=weights, per_device_train_batch_size=8, seed=0)
    trainer = GRPOTrainer(
        model=str(tiny_model_dir),
        reward_funcs=funcs,
        args=args,
        train_dataset=Dataset.from_list(rows),
        processing_class=AutoTokenizer.from_pretrained(tiny_model_dir),
    )
    trainer.train()
    logged = [h for h in trainer.state.log_history if "rewards/math_equivalence/mean" in h]
    assert len(logged) == 2
    assert all(math.isfinite(h["loss"]) for h in logged)

    # rescoring the logged completions with rewardsmith gives what the trainer logged, function by function
    logs = trainer._logs
    completions = list(logs["completion"])
    golds = [gold_of[prompt[-1]["content"]] for prompt in logs["prompt"]]
    assert len(completions) == 8 and set(logs["rewards"]) == {"math_equivalence", "think_format", "has_digit"}
    for reward in load_spec(E2E_SPEC).reward_funcs():
        expected = reward.details(completions, solution=golds)
        assert same_as_logged(list(logs["rewards"][reward.__name__]), [r.score for r in expected]), reward.__name__
        assert list(logs["extra"][f"{reward.__name__}_reason"]) == [r.reason for r in expected]
    assert len(set(logs["rewards"]["has_digit"])) > 1  # the values compared are not all the same
    assert set(logs["rewards"]["think_format"]) == {0.0}  # a random model never formats
    math_reasons = list(logs["extra"]["math_equivalence_reason"])
    assert all(reason.startswith(f"gold {gold!r}") for gold, reason in zip(golds, math_reasons, strict=True))


@pytest.mark.slow
@pytest.mark.parametrize(("fmt", "keep"), [("plain", False), ("conversational", True)])
def test_dpo_trainer_end_to_end_on_pairs(tiny_model_dir, tmp_path, fmt, keep):
    from transformers import AutoTokenizer
    from trl import DPOTrainer

    rows = [r | {"judge_model": "smol", "prob_chosen": 0.9} for r in arithmetic_pairs(8)]
    ds = dpo_dataset(rows, format=fmt, keep_provenance=keep)
    args = tiny_dpo_config(tmp_path, max_steps=3, learning_rate=1e-3)
    trainer = DPOTrainer(
        model=str(tiny_model_dir),
        args=args,
        train_dataset=ds,
        processing_class=AutoTokenizer.from_pretrained(tiny_model_dir),
    )
    trainer.train()
    logged = [h for h in trainer.state.log_history if "rewards/margins" in h]
    assert len(logged) == 3 and logged[0]["loss"] == pytest.approx(math.log(2), abs=1e-3)
    assert logged[-1]["rewards/margins"] > 0  # the chosen answers gained on the rejected ones
