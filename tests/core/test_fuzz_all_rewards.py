"""Every registered reward, fed garbage: one float-or-None per completion, never an exception.

Rewards are built from the example configs below (falling back to the defaults). A reward that
needs a service gets one that is not there (a closed port): it must answer ``None``, not raise or hang.
"""

from __future__ import annotations

import math
import pickle
import time
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rewardsmith import ConfigError, get_reward, list_rewards

#: A judge endpoint nothing answers: nothing listens on the discard port.
DEAD_CLIENT = {
    "backend": "openai",
    "base_url": "http://127.0.0.1:9/v1",
    "model": "x",
    "api_key": "x",
    "max_retries": 0,
    "timeout": 5,
}

EXAMPLE_CONFIGS: dict[str, dict[str, Any]] = {
    "think_format": {"answer_tag": "answer"},
    "tag_count": {},
    "regex_match": {"pattern": r"\\boxed\{(\d+)\}", "max_chars": 5000, "timeout_s": 0.2},
    "json_schema": {"json_schema": {"type": "object", "required": ["x"], "properties": {"x": {"type": "integer"}}}},
    "soft_overlong": {"max_length": 64, "buffer": 16},
    "cosine_length": {"correctness": {"name": "regex_match", "config": {"pattern": "4"}}, "max_length": 64},
    "repetition_penalty": {"ngram_size": 2},
    "weighted_sum": {"rewards": ["think_format", {"name": "tag_count", "weight": 0.5}], "name": "fuzz_sum"},
    "gate": {"gate": "think_format", "reward": "repetition_penalty"},
    "route": {"routes": {"fmt": "think_format", "len": "soft_overlong"}, "default": "tag_count"},
    "per_turn": {"reward": "think_format"},
    "math_equivalence": {},
    "code_tests": {},
    "llm_judge": {
        "client": DEAD_CLIENT,
        "sample_timeout": 10,
    },
    "llm_judge_group": {"client": DEAD_CLIENT, "group_timeout": 10},
    "llm_rubric": {
        "client": DEAD_CLIENT,
        "criteria": [{"id": "correct", "description": "right", "required": True}],
        "sample_timeout": 10,
    },
    "reward_model": {"model": "http://127.0.0.1:9/get_reward", "max_retries": 0, "timeout": 5},
    "remote": {"urls": ["http://127.0.0.1:9"], "reward": "think_format", "max_attempts": 1},
    "nemo_gym": {"url": "http://127.0.0.1:9", "max_attempts": 1},
    "ray_pool": {"reward": "think_format", "address": "ray://127.0.0.1:9", "connect_timeout_s": 1},
    "instruction_following": {},
}

#: Rewards that reach a backend get fewer examples; each must still fail fast against a dead one.
SERVICE_REWARDS = {
    "code_tests",
    "llm_judge",
    "llm_judge_group",
    "llm_rubric",
    "reward_model",
    "remote",
    "ray_pool",
    "nemo_gym",
}

#: Wall-clock budget for one call on a small garbage batch.
CALL_BUDGET_S = 30.0


def build_example(name: str):
    """The reward from the example table, else its default config; a clear failure if neither builds."""
    errors = []
    for config in ([EXAMPLE_CONFIGS[name]] if name in EXAMPLE_CONFIGS else []) + [{}]:
        try:
            return get_reward(name, config)
        except ConfigError as exc:
            errors.append(f"{config!r}: {exc}")
    pytest.fail(
        f"reward {name!r} cannot be built from the example table nor from its defaults; "
        f"add a working config to EXAMPLE_CONFIGS in {__file__}:\n" + "\n".join(errors)
    )


HUGE_STRINGS = [
    "<think>" * 20_000,
    "a" * 200_000,
    "\\boxed{" * 5_000,
    "```json\n" * 5_000,
    "{" * 50_000,
    "\x00\ud7ff\U0001f600" * 1_000,
    "<think>" + "word " * 20_000 + "</think><answer>4</answer>",
]

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(allow_nan=True, allow_infinity=True),
    st.binary(max_size=16),
    st.text(max_size=60),
    st.sampled_from(["<think>x</think><answer>4</answer>", "\\boxed{4}", '{"x": 1}', "", " ", "4"]),
)
nested = st.recursive(
    scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=5), inner, max_size=3)),
    max_leaves=8,
)
messages = st.lists(
    st.fixed_dictionaries(
        {
            "role": st.sampled_from(["assistant", "user", "system", None, 3]),
            "content": st.one_of(nested, st.text(max_size=40)),
        }
    ),
    max_size=3,
)
completion_values = st.one_of(scalars, nested, messages, st.sampled_from(HUGE_STRINGS))

COLUMN_NAMES = ["prompts", "solution", "answer", "task", "tests", "completion_ids", "trainer_state", "gold", "x"]


@st.composite
def garbage_batches(draw) -> tuple[list[Any], dict[str, Any]]:
    completions = draw(st.lists(completion_values, max_size=5))
    n = len(completions)
    columns = {}
    for name in draw(st.lists(st.sampled_from(COLUMN_NAMES), max_size=4, unique=True)):
        columns[name] = draw(
            st.one_of(
                st.lists(completion_values, min_size=n, max_size=n),  # aligned garbage
                st.lists(st.lists(st.integers(0, 10), max_size=80), min_size=n, max_size=n),  # id-like
                st.lists(scalars, max_size=n + 2),  # misaligned
                scalars,  # not a column at all
            )
        )
    return completions, columns


def assert_valid_scores(scores: Any, n: int) -> None:
    assert isinstance(scores, list), type(scores)
    assert len(scores) == n
    for score in scores:
        assert score is None or (isinstance(score, float) and math.isfinite(score)), score


NAMES = list_rewards()


@pytest.fixture(scope="module", params=NAMES)
def example_reward(request):
    return build_example(request.param)


def test_every_reward_builds_and_pickles(example_reward):
    probe = ["<think>x</think><answer>4</answer>", "4", None, [{"role": "assistant", "content": "\\boxed{4}"}]]
    clone = pickle.loads(pickle.dumps(example_reward))
    assert clone.__name__ == example_reward.__name__
    scores = clone(probe)
    assert_valid_scores(scores, len(probe))
    assert scores == example_reward(probe)


def test_every_reward_survives_garbage(example_reward):
    examples = 5 if example_reward.name in SERVICE_REWARDS else 40

    @settings(
        max_examples=examples,
        deadline=None,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.large_base_example],
    )
    @given(batch=garbage_batches())
    def run(batch):
        completions, columns = batch
        start = time.monotonic()
        scores = example_reward(completions, **columns)
        assert time.monotonic() - start < CALL_BUDGET_S
        assert_valid_scores(scores, len(completions))
        results = example_reward.details(completions, **columns)
        assert len(results) == len(completions)
        assert all(isinstance(r.reason, str) for r in results)

    run()


@pytest.mark.parametrize("bare", [None, 7, "text", b"bytes", {"role": "assistant", "content": "x"}])
def test_every_reward_answers_a_bare_completion(example_reward, bare):
    assert_valid_scores(example_reward(bare), 1)
