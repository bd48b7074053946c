"""GRPO with TRL and two rewardsmith rewards, runnable as written on a CPU in under a minute.

    python trl_grpo.py            # a tiny model built offline, 3 steps
    python trl_grpo.py --steps 20

The model is a tiny randomly initialised one built on the spot, so nothing is downloaded and the rewards are
mostly 0.0: the point is the wiring. Every line marked ``GPU:`` says what to change for a real run.
"""

from __future__ import annotations

import argparse
import os
import tempfile

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # GPU: drop this line so the model can be downloaded

from datasets import Dataset
from trl import GRPOConfig, GRPOTrainer

from rewardsmith.adapters.demo.tiny_model import build_tiny_model
from rewardsmith.adapters.trainers.trl import grpo_rewards

# Two rewards and their weights: the answer must equal the gold in `solution` (read by math_equivalence)
# and the reasoning must sit in <think>...</think> (think_format). The same list can live in a YAML file:
# grpo_rewards("rewards.yaml").
SPEC = [
    {"name": "math_equivalence", "weight": 1.0, "config": {"workers": 1}},  # GPU: drop workers (one per CPU)
    {"name": "think_format", "weight": 0.2},
]

SYSTEM = "Think inside <think></think>, then give the final answer in \\boxed{}."
PROBLEMS = [("3 + 5", 8), ("12 - 7", 5), ("4 * 6", 24), ("9 + 10", 19), ("15 - 8", 7), ("7 * 3", 21)]


def dataset() -> Dataset:
    """Conversational prompts with the gold answer in a `solution` column (TRL passes every column on)."""
    rows = [
        {
            "prompt": [{"role": "system", "content": SYSTEM}, {"role": "user", "content": f"What is {expr}?"}],
            "solution": str(value),
        }
        for expr, value in PROBLEMS
    ]
    return Dataset.from_list(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=3)
    parser.add_argument("--out", default=None, help="output folder (default: a temporary one)")
    args = parser.parse_args()
    out = args.out or tempfile.mkdtemp(prefix="grpo-")

    model = str(build_tiny_model(os.path.join(out, "tiny-model")))  # GPU: model = "Qwen/Qwen2.5-0.5B-Instruct"
    reward_funcs, reward_weights = grpo_rewards(SPEC)

    config = GRPOConfig(
        output_dir=out,
        use_cpu=True,  # GPU: remove
        bf16=False,  # GPU: remove (bf16 is the default on a GPU that has it)
        reward_weights=reward_weights,
        num_generations=4,  # GPU: 8 to 16
        per_device_train_batch_size=4,  # GPU: 8 or more (a multiple of num_generations)
        max_completion_length=16,  # GPU: 512 to 1024 so there is room to think
        max_steps=args.steps,  # GPU: num_train_epochs=1 on a dataset of thousands of prompts
        learning_rate=1e-5,
        logging_steps=1,
        save_strategy="no",
        report_to="none",  # GPU: "wandb" or "tensorboard"
    )
    trainer = GRPOTrainer(model=model, reward_funcs=reward_funcs, args=config, train_dataset=dataset())
    trainer.train()

    # TRL logs one mean and std per reward term (named after the reward) and the weighted total.
    for entry in trainer.state.log_history:
        if "rewards/math_equivalence/mean" in entry:
            print(
                f"step {entry['step']}: math_equivalence {entry['rewards/math_equivalence/mean']:.2f}  "
                f"think_format {entry['rewards/think_format/mean']:.2f}  weighted reward {entry['reward']:.2f}"
            )


if __name__ == "__main__":
    main()
