"""A spec's terms as TRL components: the real ``GRPOTrainer`` with ``multi_objective_aggregation="normalize_then_sum"``.

One GRPO step on the tiny offline model (CPU). TRL logs each term's rewards under its label and the advantages it
trained on; those advantages must be GDPO's (each term normalised in its group, weighted, summed, whitened), which the
mini trainer's :func:`decoupled_advantages` computes independently from the same logged rewards, and must differ from
what the default ``sum_then_normalize`` makes of them.
"""

from __future__ import annotations

import math

import pytest

from tests.support.trl_helpers import tiny_grpo_config

pytestmark = pytest.mark.slow

#: Three terms the random tiny model spreads differently: tags (mostly 0) and two length terms.
SPEC = {
    "rewards": [
        {"name": "tag_count", "label": "format", "weight": 0.5},
        {
            "name": "cosine_length",
            "label": "short",
            "config": {
                "correctness": {"name": "regex_match", "config": {"pattern": "[aeiou]"}},
                "max_length": 60,
                "unit": "chars",
            },
        },
        {
            "name": "cosine_length",
            "label": "length",
            "weight": 2.0,
            "config": {
                "correctness": {"name": "regex_match", "config": {"pattern": "[0-9]"}},
                "max_length": 40,
                "unit": "chars",
            },
        },
    ]
}


def test_each_term_is_a_component_trl_normalises_before_summing(tiny_model_dir, tmp_path):
    import torch
    from datasets import Dataset
    from trl import GRPOTrainer

    from rewardsmith.adapters.mini.grpo import decoupled_advantages, group_advantages
    from rewardsmith.adapters.trainers.trl import grpo_config_kwargs, grpo_rewards

    funcs, weights = grpo_rewards(SPEC)
    kwargs = grpo_config_kwargs(SPEC, "normalize_then_sum")
    assert kwargs == {"reward_weights": [0.5, 1.0, 2.0], "multi_objective_aggregation": "normalize_then_sum"}
    args = tiny_grpo_config(tmp_path, seed=0, disable_tqdm=True, max_steps=1, **kwargs)
    dataset = Dataset.from_dict({"prompt": ["What is 2 + 2?", "Compute 7 - 1."] * 2})
    trainer = GRPOTrainer(model=str(tiny_model_dir), reward_funcs=funcs, args=args, train_dataset=dataset)
    trainer.train()

    assert trainer.reward_func_names == ["format", "short", "length"]
    logged = trainer._logs
    per_term = torch.tensor([list(logged["rewards"][name]) for name in trainer.reward_func_names]).T
    assert per_term.shape == (4, 3)
    assert all(len(set(per_term[:, k].tolist())) > 1 for k in (1, 2)), (per_term, list(logged["completion"]))
    advantages = torch.tensor(list(logged["advantages"]))
    expected = decoupled_advantages(per_term, weights, num_generations=4)
    assert torch.allclose(advantages, expected, atol=1e-4), (advantages, expected)

    summed = (per_term * torch.tensor(weights)).sum(dim=1)
    assert not torch.allclose(advantages, group_advantages(summed, 4), atol=1e-3)  # not sum_then_normalize
    history = [entry for entry in trainer.state.log_history if "rewards/length/mean" in entry]
    assert len(history) == 1 and all(f"rewards/{n}/mean" in history[0] for n in ("format", "short", "length"))
    assert math.isclose(history[0]["rewards/length/mean"], float(per_term[:, 2].mean()), rel_tol=1e-5)


def test_an_unknown_aggregation_is_refused_naming_the_choices():
    from rewardsmith.adapters.trainers.trl import grpo_config_kwargs

    with pytest.raises(ValueError, match="sum_then_normalize, normalize_then_sum"):
        grpo_config_kwargs(SPEC, "normalise_then_sum")  # type: ignore[arg-type]
    assert grpo_config_kwargs(SPEC) == {"reward_weights": [0.5, 1.0, 2.0]}
