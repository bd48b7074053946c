"""``rewardsmith train grpo|ppo|dpo|ipo|kto|orpo|rm --config FILE``: the mini trainers from a YAML config.

``rewardsmith train grpo --demo`` needs no config: the quick start's job (see :mod:`rewardsmith.adapters.demo.grpo`).

The config is the algorithm's options (see ``MiniGRPOConfig``, ``MiniDPOConfig``, ...) plus where the rows
come from: ``data`` (any file ``datasets`` reads) or ``task`` (a procedural generator). Example::

    model: tiny                 # or a model directory
    task: {name: digit_run, n: 64}
    rewards: [character_share]  # optional when the task has a default reward
    max_steps: 20
    learning_rate: 0.01
    log_file: runs/grpo.jsonl
    output_dir: runs/grpo       # final model, and checkpoints when save_steps > 0
    save_steps: 5               # checkpoint every 5 steps (0: only the final model)

Resuming is explicit: ``--resume`` continues from the newest checkpoint in ``output_dir`` (same data order
and random streams, the metrics log appended without repeating steps) and starts fresh when there is none,
so one command line serves both the first start and every restart. Without it, a run refuses to start over
an ``output_dir`` that holds checkpoints unless ``--overwrite`` says to delete them.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path
from typing import Any

import rewardsmith.adapters.demo.tasks  # noqa: F401  (registers character_share for every command)
from rewardsmith.adapters.mini.runs import ALGORITHMS, run, run_config
from rewardsmith.cli.interrupts import command_line, on_interrupt


def load_run_config(algorithm: str, path: str | Path, overrides: dict[str, Any] | None = None) -> Any:
    """Read and validate a ``train`` config file; errors name the offending field."""
    from rewardsmith.cli.config_files import read_yaml_file

    path = Path(path)
    data = read_yaml_file(path) or {}
    if not isinstance(data, dict):
        raise ValueError(f"{path}: a train config is a mapping")
    data.update({k: v for k, v in (overrides or {}).items() if v is not None})
    return run_config(algorithm, data, path)


def cmd_train(args: argparse.Namespace) -> int:
    if getattr(args, "demo", False):
        if args.config:
            raise ValueError("give either --demo or --config, not both")
        from rewardsmith.adapters.demo.grpo import report, run_grpo_demo

        return report(run_grpo_demo(max_steps=args.max_steps or 20, log_file=args.log_file, output_dir=args.output_dir))
    if not args.config:
        raise ValueError("give --config FILE (or --demo)")
    overrides = {
        "max_steps": args.max_steps,
        "log_file": args.log_file,
        "output_dir": args.output_dir,
        "save_steps": args.save_steps,
        "resume": args.resume or None,
        "overwrite": args.overwrite or None,
    }
    config = load_run_config(args.algorithm, args.config, overrides)
    say_resumed_checkpoint(config)
    with on_interrupt(lambda: checkpoint_saved(config), lambda: resume_line(config)):
        history = run(args.algorithm, config)
    print(json.dumps(summary(args.algorithm, history, config.log_file)))
    return 0


def _newest_checkpoint(config: Any) -> tuple[int, Path] | None:
    from rewardsmith.adapters.mini.checkpoints import list_checkpoints

    found = list_checkpoints(config.output_dir) if config.output_dir else []
    return found[-1] if found else None


def say_resumed_checkpoint(config: Any) -> None:
    """A resumed run says which checkpoint it continues from (the trainer starts fresh, and says so, without one)."""
    newest = _newest_checkpoint(config) if config.resume else None
    if newest is not None:
        print(f"resuming from {newest[1]} (step {newest[0]} of {config.max_steps})", file=sys.stderr, flush=True)


def checkpoint_saved(config: Any) -> str:
    newest = _newest_checkpoint(config)
    if newest is not None:
        return f"newest checkpoint: {newest[1]} (step {newest[0]})"
    if not config.save_steps:
        return "no checkpoint saved (save_steps is 0: --save-steps N checkpoints every N steps)"
    return f"no checkpoint saved yet (the first comes at step {config.save_steps})"


def resume_line(config: Any) -> str:
    if _newest_checkpoint(config) is None:
        return command_line(drop=["--resume"]) + "   (starts again: nothing to resume from)"
    return command_line(drop=["--overwrite"], add=["--resume"])


def summary(algorithm: str, history: list[dict[str, float]], log_file: str | None) -> dict[str, Any]:
    """First and last values of the headline metrics (reward for GRPO, loss for the rest)."""
    out: dict[str, Any] = {"algorithm": algorithm, "steps": len(history), "log_file": log_file}
    for key in ("reward", "loss", "accuracy"):
        values = [h[key] for h in history if key in h and not math.isnan(h[key])]
        if values:
            out[f"{key}_first"], out[f"{key}_last"] = round(values[0], 6), round(values[-1], 6)
    if history:
        out["elapsed_s"] = history[-1]["elapsed_s"]
    return out


RESTART_POLICY = (
    "Checkpoints (save_steps > 0) go to output_dir/checkpoint-NNNNNN, newest only, written atomically. "
    "Resuming is explicit: --resume continues from the newest checkpoint (same data order and random streams; "
    "the metrics log is appended without repeating steps) and starts fresh when there is none, so the same "
    "command serves the first start and every restart. Without --resume a run refuses an output_dir that "
    "holds checkpoints; --overwrite deletes them and starts fresh."
)


def add_commands(subparsers: Any) -> None:
    """Add ``train`` with one sub-command per algorithm."""
    train = subparsers.add_parser(
        "train", help="the mini trainers: GRPO, PPO, DPO, IPO, KTO, ORPO, and RM (a reward model)"
    )
    algos = train.add_subparsers(title="algorithms", metavar="ALGORITHM")
    for name in ALGORITHMS:
        p = algos.add_parser(name, help=f"mini {name.upper()} from a YAML config", description=RESTART_POLICY)
        p.add_argument(
            "--config", required=name != "grpo", help="YAML config (model: tiny | DIR; data: FILE or task: ...)"
        )
        if name == "grpo":
            p.add_argument(
                "--demo",
                action="store_true",
                help="no config: the tiny offline model learns digit_run from the character_share reward "
                "(seconds on 2 CPU cores); exits 0 only if the mean reward rose",
            )
        p.add_argument("--max-steps", type=int, default=None, help="override max_steps")
        p.add_argument("--log-file", default=None, help="override log_file (metrics jsonl)")
        p.add_argument("--output-dir", default=None, help="override output_dir (save the trained model)")
        p.add_argument(
            "--save-steps",
            type=int,
            default=None,
            help="override save_steps (checkpoint every N steps and at the last; 0: final model only)",
        )
        restart = p.add_mutually_exclusive_group()
        restart.add_argument(
            "--resume",
            action="store_true",
            help="continue from the newest checkpoint in output_dir (starts fresh when there is none)",
        )
        restart.add_argument(
            "--overwrite", action="store_true", help="start fresh, deleting the checkpoints in output_dir"
        )
        p.set_defaults(func=cmd_train, algorithm=name, needs=("judge-local",))  # transformers and torch
