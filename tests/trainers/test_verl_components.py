"""A weighted-sum route's parts as verl 0.9.1 components: the ``gdpo`` reward manager, then verl's ``gdpo`` estimator.

verl lives in its own virtual environment (see ``test_verl_reward_loop``); in the main run this module has one test,
which runs this file with that environment's python. Inside it, verl's ``RewardLoopWorker`` (reward manager
``gdpo``) scores a grouped batch with ``compute_score``; the components are stacked as verl's reward loop stacks
``reward_extra_info`` and handed to verl's own ``gdpo`` advantage estimator as its ``compute_advantage`` calls it,
with ``algorithm.gdpo_reward_keys`` naming the parts.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

VERL_PYTHON = Path(os.environ.get("REWARDSMITH_VERL_VENV", "/opt/rewardsmith-verl")) / "bin" / "python"
ROOT = Path(__file__).resolve().parents[2]

try:
    import verl
except ImportError:
    verl = None

pytestmark = pytest.mark.slow

if verl is None:

    def test_verl_components_in_its_virtualenv():
        if not VERL_PYTHON.exists():
            pytest.skip(f"verl 0.9.1 virtualenv absent ({VERL_PYTHON}): built by the 'verl 0.9.1 virtualenv' step")
        env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}
        command = [str(VERL_PYTHON), "-m", "pytest", "-q", "-p", "no:cacheprovider", "--noconftest", __file__]
        proc = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=900)
        output = proc.stdout[-6000:] + proc.stderr[-3000:]
        assert proc.returncode == 0, f"verl virtualenv tests failed (rc {proc.returncode}):\n{output}"
        assert " passed" in proc.stdout and "skipped" not in proc.stdout.splitlines()[-1], output

else:
    import numpy as np
    import torch
    from omegaconf import OmegaConf
    from verl.trainer.ppo import core_algos

    from tests.trainers import test_verl_reward_loop as reward_loop
    from tests.trainers.test_verl_reward_loop import run_reward_loop, verl_batch, verl_config

    tokenizer_dir = reward_loop.tokenizer_dir  # the tiny model, as the reward-loop tests build it

    #: gsm8k: format (think tags, weight 0.5) + accuracy; "chat": think_format alone, no parts.
    MAPPING = (
        "{mapping:{routes:["
        "{match:['*gsm8k*'],reward:weighted_sum,config:{rewards:["
        "{name:think_format,label:format,weight:0.5},{name:math_equivalence,label:accuracy}]}},"
        "{match:['chat'],reward:think_format}]}}"
    )
    # (uid, data_source, response, ground truth, score, format, accuracy)
    TABLE = [
        ("g1", "openai/gsm8k", "<think>add</think> \\boxed{72}", "72", 1.5, 1.0, 1.0),
        ("g1", "openai/gsm8k", "<think>add</think> \\boxed{71}", "72", 0.5, 1.0, 0.0),
        ("g1", "openai/gsm8k", "\\boxed{72}", "72", 1.0, 0.0, 1.0),
        ("g2", "openai/gsm8k", "\\boxed{5}", "5", 1.0, 0.0, 1.0),
        ("g2", "openai/gsm8k", "\\boxed{4}", "5", 0.0, 0.0, 0.0),
        ("g3", "chat", "<think>hm</think> hello", None, 1.0, 0.0, 0.0),  # other route: parts report 0.0
        ("g3", "chat", "hello", None, 0.0, 0.0, 0.0),
    ]
    KEYS = ["format", "accuracy"]

    def test_gdpo_manager_and_estimator_take_the_parts(tokenizer_dir):
        rows = [(source, response, truth) for _, source, response, truth, *_ in TABLE]
        config = verl_config(
            tokenizer_dir, "pkg://rewardsmith.adapters.trainers.verl", "compute_score", MAPPING, "gdpo"
        )
        batch = verl_batch(tokenizer_dir, rows)
        outputs = run_reward_loop(config, batch)
        for output, (_, source, response, _, score, fmt, acc) in zip(outputs, TABLE, strict=True):
            info = output["reward_extra_info"]
            assert output["reward_score"] == pytest.approx(score), (source, response, info)
            assert (info["format"], info["accuracy"]) == (fmt, acc), (source, response, info)
            assert info["unscorable"] is False
        assert len({tuple(o["reward_extra_info"]) for o in outputs}) == 1, "every sample has the same keys"

        # what verl's reward loop makes of reward_extra_info, then verl's own advantage step
        infos = [o["reward_extra_info"] for o in outputs]
        for key in infos[0]:
            batch.non_tensor_batch[key] = np.array([info[key] for info in infos])
        batch.non_tensor_batch["uid"] = np.array([uid for uid, *_ in TABLE], dtype=object)
        response_mask = batch.batch["attention_mask"][:, batch.batch["prompts"].size(1) :]
        batch.batch["response_mask"] = response_mask
        batch.batch["token_level_rewards"] = torch.zeros(response_mask.shape, dtype=torch.float32)
        # ppo_trainer.yaml has no gdpo keys: a run adds them (+algorithm.gdpo_reward_keys=[format,accuracy])
        algorithm = OmegaConf.create(
            {
                **OmegaConf.to_container(config.algorithm, resolve=True),
                "adv_estimator": "gdpo",
                "gdpo_reward_keys": KEYS,
                "gdpo_reward_weights": [0.5, 1.0],
            }
        )
        # the arguments verl's compute_advantage (ray_trainer) passes its gdpo estimator
        advantages, _ = core_algos.get_adv_estimator_fn("gdpo")(
            token_level_rewards=batch.batch["token_level_rewards"],
            response_mask=response_mask,
            config=algorithm,
            index=batch.non_tensor_batch["uid"],
            non_tensor_batch=batch.non_tensor_batch,
            batch=batch.batch,
        )
        per_sample = advantages.sum(-1) / response_mask.sum(-1)  # constant over each response's tokens
        assert not torch.isnan(per_sample).any()

        # GDPO by hand from the same parts, before verl's whitening over tokens: the two agree up to a positive
        # affine map
        per_term = torch.tensor([[fmt, acc] for *_, fmt, acc in TABLE])
        ours = grouped_gdpo(per_term, [0.5, 1.0], [uid for uid, *_ in TABLE])
        slope, intercept = np.polyfit(ours.numpy(), per_sample.numpy(), 1)
        assert slope > 0
        assert np.allclose(per_sample.numpy(), slope * ours.numpy() + intercept, atol=1e-3), (per_sample, ours)
        assert float(per_sample[5]) == pytest.approx(float(per_sample[6]), abs=1e-4), (
            "a group without the parts has no signal"
        )
        assert per_sample[2] > per_sample[1], "accuracy counts as much as format once each is normalised"

    def grouped_gdpo(per_term: torch.Tensor, weights: list[float], uids: list[str]) -> torch.Tensor:
        """Per-term group normalisation over uneven groups (verl's uids), weighted sum (unwhitened)."""
        out = torch.zeros(per_term.size(0))
        for uid in dict.fromkeys(uids):
            idx = [i for i, u in enumerate(uids) if u == uid]
            part = per_term[idx]
            std = part.std(dim=0) if len(idx) > 1 else torch.ones(part.size(1))
            out[idx] = (((part - part.mean(dim=0)) / (std + 1e-6)) * torch.tensor(weights)).sum(dim=1)
        return out
