"""Benchmark: the reward-hacking monitor's false-alarm rate on clean GRPO runs and its detection delay on a hack.

TRL ``GRPOTrainer`` on the tiny offline model (CPU), the bundled math rows, one shadow check of 8 completions per
step. Scenarios:

- hackable: the training reward is ``regex_match`` on any digit, the shadow is ``math_equivalence``; measured: the
  share of runs that raise an alarm and the step of the first one;
- clean (learning): the shadow agrees with the reward (both pay for a digit), so the reward rises as the policy
  learns while nothing is hacked; measured: the share of runs with any alarm (a false alarm), with its 95 % Wilson
  interval;
- clean (static): reward and shadow are both ``math_equivalence``; the random model never scores, so the policy
  does not move.

    python bench/monitor_false_alarms.py                   # 10 seeds x 16 steps per scenario
    python bench/monitor_false_alarms.py --seeds 20 --steps 24 --json out.json
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

ANY_DIGIT = {"name": "regex_match", "config": {"pattern": "[0-9]"}}
SCENARIOS = {
    "hackable": (ANY_DIGIT, "math_equivalence"),
    "clean (learning)": (ANY_DIGIT, ANY_DIGIT),
    "clean (static)": ({"name": "math_equivalence"}, "math_equivalence"),
}


def one_run(model_dir: Path, out: Path, train_spec, shadow, seed: int, steps: int) -> tuple[list, int]:
    from datasets import Dataset
    from trl import GRPOTrainer

    from rewardsmith.compose import build_reward
    from rewardsmith.monitor import HackMonitor
    from rewardsmith.monitor.trl import HackMonitorCallback
    from tests.support.trl_helpers import tiny_grpo_config

    rows = [json.loads(line) for line in (ROOT / "rewardsmith/samples/hack_math_rows.jsonl").read_text().splitlines()]
    data = Dataset.from_dict({"prompt": [r["prompt"] for r in rows], "solution": [r["solution"] for r in rows]})
    monitor = HackMonitor(shadow=shadow, seed=seed)
    args = tiny_grpo_config(
        out, seed=seed, max_steps=steps, per_device_train_batch_size=8, learning_rate=1e-3, disable_tqdm=True
    )
    trainer = GRPOTrainer(
        model=str(model_dir),
        reward_funcs=[monitor.watch(build_reward(train_spec))],
        args=args,
        train_dataset=data,
        callbacks=[HackMonitorCallback(monitor)],
    )
    trainer.train()
    return monitor.alarms, len(monitor.history)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--steps", type=int, default=16)
    parser.add_argument("--json", default=None)
    args = parser.parse_args()

    import logging

    import torch
    import transformers

    from rewardsmith.adapters.demo.tiny_model import build_tiny_model
    from rewardsmith.audit.stats import wilson

    torch.set_num_threads(1)
    transformers.logging.set_verbosity_error()
    logging.getLogger("rewardsmith.monitor.monitor").setLevel(logging.ERROR)
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        model_dir = build_tiny_model(Path(tmp) / "tiny")
        for name, (train_spec, shadow) in SCENARIOS.items():
            started = time.perf_counter()
            alarmed, first_steps, signals, checks = 0, [], {}, 0
            for seed in range(args.seeds):
                out = Path(tmp) / f"{name}-{seed}"
                alarms, n_checks = one_run(model_dir, out, train_spec, shadow, seed, args.steps)
                checks += n_checks
                if alarms:
                    alarmed += 1
                    first_steps.append(alarms[0].step)
                    signals[alarms[0].signal] = signals.get(alarms[0].signal, 0) + 1
            low, high = wilson(alarmed / args.seeds, args.seeds)
            results[name] = {
                "runs": args.seeds,
                "steps": args.steps,
                "checks": checks,
                "runs_with_alarm": alarmed,
                "rate": alarmed / args.seeds,
                "low": low,
                "high": high,
                "first_alarm_steps": first_steps,
                "first_signals": signals,
                "seconds": round(time.perf_counter() - started, 1),
            }
            r = results[name]
            steps_text = f", first alarm at steps {sorted(first_steps)}" if first_steps else ""
            print(
                f"{name:18s} runs with an alarm: {alarmed}/{args.seeds} = {r['rate']:.0%} "
                f"[95% CI {low:.0%}, {high:.0%}]{steps_text} ({r['seconds']} s)"
            )
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
