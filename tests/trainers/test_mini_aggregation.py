"""The mini GRPO trainer's two reward aggregations on hand-computed groups.

The table's group is the normalisation pitfall in three samples: term ``a`` spreads wide (0, 0, 3), term ``b`` narrow
(1, 0, 0). Summed first, ``a`` decides alone and sample 0, the only one ``b`` rewards, gets a negative advantage;
normalised first (GDPO), each term has the same say and sample 0's advantage is positive.
"""

from __future__ import annotations

import math

import pytest
import torch
from pydantic import ValidationError

from rewardsmith.adapters.mini.grpo import MiniGRPOConfig, decoupled_advantages, round_advantages
from rewardsmith.adapters.mini.rollout import combine_rewards

NAN = math.nan
R3 = math.sqrt(3)
A = [0.0, 0.0, 3.0]
B = [1.0, 0.0, 0.0]

# (name, per-sample [a, b] terms, weights, num_generations, advantage, aggregation, expected advantages)
# Hand computation (unbiased stds, eps ignored by the tolerance):
#   sum [1, 0, 3]: mean 4/3, std sqrt(7/3)            -> (r - 4/3) / sqrt(7/3)
#   a: mean 1, std sqrt 3 -> [-1, -1, 2] / sqrt 3;  b: mean 1/3, std 1/sqrt 3 -> [2, -1, -1] / sqrt 3
#   S = [1, -2, 1] / sqrt 3: mean 0, std 1            -> S
#   weights (2, 0): S = [-2, -2, 4] / sqrt 3, std 2   -> [-1, -1, 2] / sqrt 3
#   rloo: a -> [-1.5, -1.5, 3] / sqrt 3, b -> [1, -.5, -.5] * sqrt 3; S = [.5, -1, .5] * sqrt 3, std 1.5 -> as grpo
S73 = math.sqrt(7 / 3)
TABLE = [
    (
        "sum first: the wide term decides",
        [A, B],
        [1, 1],
        3,
        "grpo",
        "sum_then_normalize",
        [-1 / 3 / S73, -4 / 3 / S73, 5 / 3 / S73],
    ),
    (
        "normalised first: each term has its say",
        [A, B],
        [1, 1],
        3,
        "grpo",
        "normalize_then_sum",
        [1 / R3, -2 / R3, 1 / R3],
    ),
    ("weights act after normalising", [A, B], [2, 0], 3, "grpo", "normalize_then_sum", [-1 / R3, -1 / R3, 2 / R3]),
    ("rloo normalised first", [A, B], [1, 1], 3, "rloo", "normalize_then_sum", [1 / R3, -2 / R3, 1 / R3]),
    (
        "an unscorable sample moves nothing and gets 0",
        [[*A, NAN], [*B, NAN]],
        [1, 1],
        4,
        "grpo",
        "normalize_then_sum",
        [1 / R3, -2 / R3, 1 / R3, 0.0],
    ),
    (
        "an unscorable term adds nothing to its sample",
        [[0.0, 0.0, 3.0, 0.0, 0.0, 3.0], [1.0, 0.0, 0.0, NAN, NAN, NAN]],
        [1, 1],
        3,
        "grpo",
        "normalize_then_sum",
        # group 2 has only a: [-1, -1, 2]/sqrt 3; S = [1, -2, 1, -1, -1, 2]/sqrt 3: mean 0, std sqrt(12/5)/sqrt 3
        [x / math.sqrt(12 / 5) for x in (1, -2, 1, -1, -1, 2)],
    ),
]


@pytest.mark.parametrize(("name", "terms", "weights", "groups", "advantage", "aggregation", "expected"), TABLE)
def test_advantages_by_hand(name, terms, weights, groups, advantage, aggregation, expected):
    config = MiniGRPOConfig(
        num_generations=groups, advantage=advantage, reward_aggregation=aggregation, rewards=["think_format"]
    )
    per_term = torch.tensor(terms, dtype=torch.float32).T
    got = round_advantages(config, per_term, combine_rewards(per_term, weights), weights)
    assert torch.allclose(got, torch.tensor(expected), atol=1e-3), (name, got.tolist(), expected)


def test_the_two_aggregations_disagree_on_the_narrow_terms_sample():
    per_term = torch.tensor([A, B]).T
    summed = round_advantages(MiniGRPOConfig(num_generations=3), per_term, combine_rewards(per_term, [1, 1]), [1, 1])
    assert summed[0] < 0 < float(decoupled_advantages(per_term, [1, 1], 3)[0])


def test_every_sample_unscorable_gives_zero_advantages_not_nan():
    per_term = torch.full((4, 2), NAN)
    assert torch.equal(decoupled_advantages(per_term, [1, 1], 2), torch.zeros(4))


def test_an_unknown_aggregation_is_refused():
    with pytest.raises(ValidationError, match="sum_then_normalize"):
        MiniGRPOConfig(reward_aggregation="gdpo")


def test_normalising_a_single_term_is_refused_naming_the_fix():
    from rewardsmith.adapters.mini.grpo import MiniGRPOTrainer

    summed = {"name": "weighted_sum", "config": {"rewards": ["think_format", "character_share"]}}
    config = {"reward_aggregation": "normalize_then_sum", "rewards": [summed]}
    with pytest.raises(ValueError, match="list the parts of a weighted sum as terms"):
        MiniGRPOTrainer(config, [{"prompt": "Write 3 digits."}])
