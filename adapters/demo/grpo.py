"""The GRPO demo: a verifiable reward driving a short run of the mini GRPO trainer, offline, on a CPU.

The tiny offline model (random weights, built on the spot) is asked ``digit_run`` prompts ("Write 7 digits.")
and rewarded by ``character_share``, the share of digits in its completion: a reward a program checks, no
judge involved. Within 20 steps (a few seconds of training on 2 cores) the mean reward climbs from about 0.1
to about 0.9. The run succeeds only if it did: the mean of the last three steps must beat the first three
by ``min_rise``.

    python -m rewardsmith.adapters.demo.grpo          # exit status 0 only if the reward rose
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel, Field

#: The run: 4 prompts x 8 completions of at most 16 tokens per step, one torch thread.
DEMO_CONFIG: dict[str, Any] = {
    "model": "tiny",
    "learning_rate": 1e-2,
    "batch_size": 4,
    "num_generations": 8,
    "max_completion_length": 16,
    "num_threads": 1,
    "seed": 0,
}
DEMO_PROMPTS = 32
WINDOW = 3  # steps averaged at each end


class GRPODemoResult(BaseModel):
    rewards: list[float] = Field(description="mean reward of each step")
    first: float = Field(description=f"mean reward of the first {WINDOW} steps")
    last: float = Field(description=f"mean reward of the last {WINDOW} steps")
    min_rise: float
    train_s: float

    @property
    def rose(self) -> bool:
        return self.last - self.first >= self.min_rise


def run_grpo_demo(
    *,
    max_steps: int = 20,
    seed: int = 0,
    min_rise: float = 0.2,
    log_file: str | None = None,
    output_dir: str | None = None,
    progress: bool = False,
    echo: Callable[[str], None] = print,
) -> GRPODemoResult:
    """Train, print one line per step with its mean reward, and return the rewards (see ``GRPODemoResult.rose``)."""
    from rewardsmith.adapters.demo.tasks import CharacterShare, digit_run
    from rewardsmith.adapters.mini.grpo import train_grpo

    if max_steps < 2 * WINDOW:
        raise ValueError(f"the demo needs at least {2 * WINDOW} steps to compare its start and end")
    echo(
        "GRPO demo: the tiny offline model (random weights) learns the toy task digit_run ('Write 7 digits.'), "
        "rewarded by character_share, the share of digits in each completion (a verifiable reward, no judge)."
    )
    echo(
        f"{DEMO_CONFIG['batch_size']} prompts x {DEMO_CONFIG['num_generations']} completions per step, "
        f"{max_steps} steps, mini GRPO trainer on CPU"
    )
    _quiet_transformers()
    config = {**DEMO_CONFIG, "max_steps": max_steps, "seed": seed, "progress": progress}
    config.update({k: v for k, v in (("log_file", log_file), ("output_dir", output_dir)) if v})
    started = time.perf_counter()
    history = train_grpo(config, digit_run(DEMO_PROMPTS, seed=seed), CharacterShare())
    train_s = time.perf_counter() - started
    rewards = [float(step["reward"]) for step in history]
    echo("step  mean reward")
    for step, reward in enumerate(rewards, start=1):
        echo(f"{step:>4}  {reward:.3f}  {'#' * round(reward * 40)}")
    first, last = sum(rewards[:WINDOW]) / WINDOW, sum(rewards[-WINDOW:]) / WINDOW
    return GRPODemoResult(rewards=rewards, first=first, last=last, min_rise=min_rise, train_s=train_s)


def _quiet_transformers() -> None:
    """The tiny model is written and read back in a temporary folder; its progress bars would bury the table."""
    from transformers.utils import logging

    logging.disable_progress_bar()


def main(argv: list[str] | None = None) -> int:
    """Run the demo; exit 0 only if the mean reward rose by ``--min-rise``."""
    parser = argparse.ArgumentParser(
        prog="python -m rewardsmith.adapters.demo.grpo", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--max-steps", type=int, default=20)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--min-rise", type=float, default=0.2)
    parser.add_argument("--log-file", default=None, help="metrics log (jsonl), one line per step")
    parser.add_argument("--output-dir", default=None, help="save the trained tiny model here")
    args = parser.parse_args(argv)
    result = run_grpo_demo(
        max_steps=args.max_steps, seed=args.seed, min_rise=args.min_rise, log_file=args.log_file,
        output_dir=args.output_dir,
    )  # fmt: skip
    return report(result)


def report(result: GRPODemoResult) -> int:
    """Print the verdict line; the exit status is 0 only when the reward rose."""
    change = (
        f"mean reward {result.first:.2f} (first {WINDOW} steps) -> {result.last:.2f} (last {WINDOW} steps) "
        f"in {result.train_s:.1f} s of training"
    )
    if not result.rose:
        print(f"FAILED: {change}: did not rise by {result.min_rise:g}", file=sys.stderr)
        return 1
    print(f"{change}: the verifiable reward drove the policy.")
    print("next: RLAIF preference pairs from a constitution: rewardsmith rlaif pairs --demo --out demo-pairs")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
