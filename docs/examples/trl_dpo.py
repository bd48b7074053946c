"""DPO with TRL on an RLAIF export, runnable as written on a CPU in under a minute.

    python trl_dpo.py                          # makes the demo export first (rewardsmith rlaif pairs --demo)
    python trl_dpo.py --pairs my-pairs/train.jsonl

Without ``--pairs`` the script runs ``rewardsmith rlaif pairs --demo --out OUT/pairs``: bundled prompts and
candidates labelled by the embedded judge, a plumbing default that is no real labeler. For real pairs, label your
own prompts with a real judge (``--data prompts.jsonl --judge openai:MODEL``). Every line marked ``GPU:`` says what to
change for a real run.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # GPU: drop this line so the model can be downloaded

from trl import DPOConfig, DPOTrainer

from rewardsmith.adapters.demo.tiny_model import build_tiny_model
from rewardsmith.adapters.trainers.trl import dpo_dataset


def demo_pairs(out: str) -> str:
    """The RLAIF demo export (20 judged pairs), written by the command line a user would type."""
    folder = os.path.join(out, "pairs")
    command = [sys.executable, "-m", "rewardsmith", "rlaif", "pairs", "--demo", "--out", folder, "--no-progress"]
    print("$", "rewardsmith", *command[3:], flush=True)
    subprocess.run(command, check=True)
    return os.path.join(folder, "train.jsonl")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", default=None, help="an RLAIF export (train.jsonl); default: make the demo one")
    parser.add_argument("--steps", type=int, default=3)
    parser.add_argument("--out", default=None, help="output folder (default: a temporary one)")
    args = parser.parse_args()
    out = args.out or tempfile.mkdtemp(prefix="dpo-")

    # prompt / chosen / rejected as chat messages; the judge's provenance columns are dropped.
    pairs = dpo_dataset(args.pairs or demo_pairs(out), format="conversational")
    print(f"{len(pairs)} preference pairs")

    model = str(build_tiny_model(os.path.join(out, "tiny-model")))  # GPU: model = "Qwen/Qwen2.5-0.5B-Instruct"
    config = DPOConfig(
        output_dir=os.path.join(out, "dpo"),
        use_cpu=True,  # GPU: remove
        bf16=False,  # GPU: remove (bf16 is the default on a GPU that has it)
        per_device_train_batch_size=4,  # GPU: 8 to 32
        max_steps=args.steps,  # GPU: num_train_epochs=1 on thousands of pairs
        learning_rate=5e-6,
        beta=0.1,
        logging_steps=1,
        save_strategy="no",
        report_to="none",  # GPU: "wandb" or "tensorboard"
    )
    trainer = DPOTrainer(model=model, args=config, train_dataset=pairs)
    trainer.train()
    for entry in trainer.state.log_history:
        if "rewards/accuracies" in entry:
            print(f"step {entry['step']}: loss {entry['loss']:.4f}  reward accuracy {entry['rewards/accuracies']:.2f}")


if __name__ == "__main__":
    main()
