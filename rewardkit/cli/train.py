"""``rewardkit train grpo|ppo|dpo|ipo|kto|orpo|rm --config FILE``: the mini trainers from a YAML config.

``rewardkit train grpo --demo`` needs no config: the quick start's job (see :mod:`rewardkit.adapters.demo.grpo`).

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
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

import rewardkit.adapters.demo.tasks  # noqa: F401  (registers character_share for every command)

ALGORITHMS = ("grpo", "ppo", "dpo", "ipo", "kto", "orpo", "rm")

#: Which row shape each algorithm reads, and the procedural tasks that produce it.
ROW_SHAPES = {
    "grpo": "prompt",
    "ppo": "prompt",
    "dpo": "pair",
    "ipo": "pair",
    "orpo": "pair",
    "kto": "unpaired",
    "rm": "pair",
}
TASK_SHAPES = {
    "arithmetic": "prompt",
    "digit_run": "prompt",
    "arithmetic_pairs": "pair",
    "arithmetic_unpaired": "unpaired",
}


class TaskSpec(BaseModel):
    """A procedural task: generator name, row count, seed and generator options."""

    model_config = ConfigDict(extra="forbid")

    name: Literal["arithmetic", "digit_run", "arithmetic_pairs", "arithmetic_unpaired"]
    n: int = Field(64, ge=1)
    seed: int = 0
    options: dict[str, Any] = Field(default_factory=dict)

    def rows(self) -> list[dict[str, Any]]:
        from rewardkit.adapters.demo import tasks

        return getattr(tasks, self.name)(self.n, seed=self.seed, **self.options)


class DataSource(BaseModel):
    """Fields every ``train`` config adds to its algorithm's options."""

    data: str | None = Field(None, description="training rows (jsonl, json, csv, parquet)")
    task: TaskSpec | None = Field(None, description="procedural rows instead of a file")


def run_config_class(algorithm: str) -> type[BaseModel]:
    """The pydantic model of ``train <algorithm>`` configs: the algorithm's options + data source."""
    if algorithm == "grpo":
        from rewardkit.adapters.mini.grpo import MiniGRPOConfig as base
    elif algorithm == "ppo":
        from rewardkit.adapters.mini.ppo import MiniPPOConfig as base
    elif algorithm in ("dpo", "ipo"):
        from rewardkit.adapters.mini.dpo import MiniDPOConfig as base
    elif algorithm == "kto":
        from rewardkit.adapters.mini.kto import MiniKTOConfig as base
    elif algorithm == "orpo":
        from rewardkit.adapters.mini.orpo import MiniORPOConfig as base
    elif algorithm == "rm":
        from rewardkit.adapters.mini.reward_model import MiniRMConfig as base
    else:
        raise ValueError(f"unknown algorithm {algorithm!r}; choose from {', '.join(ALGORITHMS)}")
    return type(f"{algorithm.upper()}RunConfig", (base, DataSource), {"__module__": __name__})


def load_run_config(algorithm: str, path: str | Path, overrides: dict[str, Any] | None = None) -> Any:
    """Read and validate a ``train`` config file; errors name the offending field."""
    from rewardkit.cli.config_files import read_yaml_file

    path = Path(path)
    data = read_yaml_file(path) or {}
    if not isinstance(data, dict):
        raise ValueError(f"{path}: a train config is a mapping")
    data.update({k: v for k, v in (overrides or {}).items() if v is not None})
    if algorithm == "ipo":
        data["loss"] = "ipo"
    elif algorithm == "dpo":
        data.setdefault("loss", "sigmoid")
    try:
        config = run_config_class(algorithm).model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc'])) or '<config>'}: {e['msg']}" for e in exc.errors())
        raise ValueError(f"{path}: invalid {algorithm} config: {problems}") from None
    if (config.data is None) == (config.task is None):
        raise ValueError(f"{path}: give exactly one of 'data' or 'task'")
    if config.task is not None and TASK_SHAPES[config.task.name] != ROW_SHAPES[algorithm]:
        raise ValueError(
            f"{path}: task {config.task.name!r} makes {TASK_SHAPES[config.task.name]} rows; "
            f"{algorithm} needs {ROW_SHAPES[algorithm]} rows"
        )
    return config


def training_rows(config: Any) -> list[dict[str, Any]]:
    if config.task is not None:
        return config.task.rows()
    from rewardkit.data import read_records

    return read_records(config.data)


def run(algorithm: str, config: Any) -> list[dict[str, float]]:
    """Train with ``config`` (as returned by :func:`load_run_config`); returns the step metrics."""
    rows = training_rows(config)
    options = config.model_dump(exclude={"data", "task"})
    if algorithm in ("grpo", "ppo"):
        from rewardkit.adapters.demo.tasks import PROMPT_TASKS

        rewards = None
        if config.rewards is None:
            if config.task is None:
                raise ValueError(f"{algorithm} with 'data' needs 'rewards'")
            rewards = _default_reward(PROMPT_TASKS[config.task.name][1])
        options["rewards"] = config.rewards
        if algorithm == "ppo":
            from rewardkit.adapters.mini.ppo import MiniPPOConfig, train_ppo

            return train_ppo(MiniPPOConfig.model_validate(options), rows, rewards)
        from rewardkit.adapters.mini.grpo import MiniGRPOConfig, train_grpo

        return train_grpo(MiniGRPOConfig.model_validate(options), rows, rewards)
    if algorithm in ("dpo", "ipo"):
        from rewardkit.adapters.mini.dpo import MiniDPOConfig, train_dpo

        return train_dpo(MiniDPOConfig.model_validate(options), rows)
    if algorithm == "rm":
        from rewardkit.adapters.mini.reward_model import MiniRMConfig, train_rm

        return train_rm(MiniRMConfig.model_validate(options), rows)
    if algorithm == "kto":
        from rewardkit.adapters.mini.kto import MiniKTOConfig, train_kto

        return train_kto(MiniKTOConfig.model_validate(options), rows)
    from rewardkit.adapters.mini.orpo import MiniORPOConfig, train_orpo

    return train_orpo(MiniORPOConfig.model_validate(options), rows)


def _default_reward(name: str) -> Any:
    from rewardkit.registry import get_reward

    return get_reward(name)


def cmd_train(args: argparse.Namespace) -> int:
    if getattr(args, "demo", False):
        if args.config:
            raise ValueError("give either --demo or --config, not both")
        from rewardkit.adapters.demo.grpo import report, run_grpo_demo

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
    history = run(args.algorithm, config)
    print(json.dumps(summary(args.algorithm, history, config.log_file)))
    return 0


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
