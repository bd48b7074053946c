"""rewardsmith rewards inside a real TRL ``GRPOTrainer`` on the tiny offline model (CPU, two steps).

The trainer logs what it saw: per-function rewards under each function's name, the completions,
and the extra columns rewards log through ``log_extra``. Rescoring the logged completions with
rewardsmith must give the same numbers, under the rewardsmith names.
"""

from __future__ import annotations

import math
import re
from typing import Any

import pytest

from rewardsmith import Reward, get_reward
from tests.support.trl_helpers import tiny_grpo_config

pytestmark = pytest.mark.slow

PROMPTS = ["What is 2 + 2?", "What is 3 + 5?", "Compute 7 - 1.", "Say the answer is 42.", "Think step by step: 1 + 1?"]
COMPOSITE_NAME = "format_and_length"


def composite() -> Reward:
    """Tags, DAPO's overlong penalty in tokens (ids from TRL) and a cosine length term in characters.

    The random tiny model always fills its 16-token budget, so the character-based cosine term
    (keyed on "contains a digit") is what makes the logged values differ from sample to sample.
    """
    digit = {"name": "regex_match", "config": {"pattern": "[0-9]"}}
    return get_reward(
        "weighted_sum",
        {
            "name": COMPOSITE_NAME,
            "rewards": [
                {"name": "tag_count", "weight": 0.5},
                {"name": "soft_overlong", "config": {"max_length": 20, "buffer": 8, "unit": "tokens"}},
                {"name": "cosine_length", "config": {"correctness": digit, "max_length": 40, "unit": "chars"}},
            ],
        },
    )


def plain_dataset():
    from datasets import Dataset

    return Dataset.from_dict({"prompt": PROMPTS * 2, "task": ["math"] * 10})


#: Alternate prompts are "chat": a math-only routed reward must leave them unscorable (NaN in TRL's logs).
TASKS = {prompt: ("math" if i % 2 == 0 else "chat") for i, prompt in enumerate(PROMPTS)}


def conversational_dataset():
    from datasets import Dataset

    return Dataset.from_dict(
        {"prompt": [[{"role": "user", "content": p}] for p in PROMPTS * 2], "task": [TASKS[p] for p in PROMPTS * 2]}
    )


def math_only() -> Reward:
    """Repetition penalty for math rows only; other tasks get None."""
    return get_reward("route", {"name": "math_only", "routes": {"math": {"name": "repetition_penalty"}}})


def train(model_dir, dataset, reward_funcs, output_dir):
    from trl import GRPOTrainer

    args = tiny_grpo_config(output_dir, seed=0, disable_tqdm=True)
    trainer = GRPOTrainer(model=str(model_dir), reward_funcs=reward_funcs, args=args, train_dataset=dataset)
    trainer.train()
    return trainer


def token_counts_from_reasons(reasons: list[str]) -> list[int]:
    """The token lengths soft_overlong reported (its reason reads ``... (N tokens (soft zone a-b))``)."""
    counts = []
    for reason in reasons:
        match = re.search(r"soft_overlong=[^ ]+ \((\d+) tokens ", reason)
        assert match, f"soft_overlong did not count tokens: {reason!r}"
        counts.append(int(match.group(1)))
    return counts


def same(logged: list[float], expected: list[float | None]) -> bool:
    """TRL stores rewards as float32 and None as NaN."""
    if len(logged) != len(expected):
        return False
    for got, want in zip(logged, expected, strict=True):
        if want is None:
            if not math.isnan(got):
                return False
        elif not math.isclose(got, want, rel_tol=1e-6, abs_tol=1e-6):
            return False
    return True


def check_logs(trainer, is_conversational: bool, extra_names: list[str] = ()) -> None:
    logs = trainer._logs
    assert trainer.reward_func_names == ["think_format", COMPOSITE_NAME, *extra_names]
    assert set(logs["rewards"]) == {"think_format", COMPOSITE_NAME, *extra_names}
    completions: list[Any] = list(logs["completion"])
    assert len(completions) == 4
    if is_conversational:
        assert all(isinstance(c, list) and c[0]["role"] == "assistant" for c in completions)
    else:
        assert all(isinstance(c, str) for c in completions)

    think = get_reward("think_format")
    assert same(list(logs["rewards"]["think_format"]), think(completions))
    assert list(logs["extra"]["think_format_reason"]) == [r.reason for r in think.details(completions)]

    reasons = list(logs["extra"][f"{COMPOSITE_NAME}_reason"])
    counts = token_counts_from_reasons(reasons)
    assert all(1 <= n <= 16 for n in counts), counts  # max_completion_length=16 is the token budget
    assert len(set(logs["rewards"][COMPOSITE_NAME])) > 1  # the comparison below is not between constants
    expected = composite()(completions, completion_ids=[[0] * n for n in counts])
    assert same(list(logs["rewards"][COMPOSITE_NAME]), expected)
    assert reasons == [r.reason for r in composite().details(completions, completion_ids=[[0] * n for n in counts])]

    logged = [entry for entry in trainer.state.log_history if f"rewards/{COMPOSITE_NAME}/mean" in entry]
    assert len(logged) == 2  # one entry per step, under the rewardsmith name
    assert sum(counts) / len(counts) == pytest.approx(float(logged[-1]["completions/mean_length"]))


def test_grpo_plain_dataset(tiny_model_dir, tmp_path):
    trainer = train(tiny_model_dir, plain_dataset(), [get_reward("think_format"), composite()], tmp_path)
    check_logs(trainer, is_conversational=False)


def test_grpo_conversational_dataset(tiny_model_dir, tmp_path):
    funcs = [get_reward("think_format"), composite(), math_only()]
    trainer = train(tiny_model_dir, conversational_dataset(), funcs, tmp_path)
    check_logs(trainer, is_conversational=True, extra_names=["math_only"])

    # the dataset column reached the reward aligned with each completion: rescoring with the task of the
    # logged prompt gives what the trainer logged, NaN (None) for chat rows
    logs = trainer._logs
    tasks = [TASKS[prompt[-1]["content"]] for prompt in logs["prompt"]]
    expected = math_only()(list(logs["completion"]), task=tasks)
    assert same(list(logs["rewards"]["math_only"]), expected)
    assert all((score is None) == (task == "chat") for score, task in zip(expected, tasks, strict=True))
    routed_means = [e["rewards/math_only/mean"] for e in trainer.state.log_history if "rewards/math_only/mean" in e]
    assert len(routed_means) == 2


def test_grpo_async_rewards(tiny_model_dir, tmp_path):
    funcs = [get_reward("think_format").as_async(), composite().as_async()]
    from trl.trainer.utils import is_async_callable

    assert all(is_async_callable(f) for f in funcs)
    trainer = train(tiny_model_dir, plain_dataset(), funcs, tmp_path)
    check_logs(trainer, is_conversational=False)
