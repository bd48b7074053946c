"""Runs of the mini trainers from one config: the algorithm's options plus where the rows come from.

``rewardsmith train`` parses its arguments and a YAML file, then calls :func:`run_config` and :func:`run`; choosing a
task's default reward and building rows from a task or a file happen here, in the trainer's package.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

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
        from rewardsmith.adapters.demo import tasks

        return getattr(tasks, self.name)(self.n, seed=self.seed, **self.options)


class DataSource(BaseModel):
    """Fields every ``train`` config adds to its algorithm's options."""

    data: str | None = Field(None, description="training rows (jsonl, json, csv, parquet)")
    task: TaskSpec | None = Field(None, description="procedural rows instead of a file")


def run_config_class(algorithm: str) -> type[BaseModel]:
    """The pydantic model of ``train <algorithm>`` configs: the algorithm's options + data source."""
    base: type[BaseModel]
    if algorithm == "grpo":
        from rewardsmith.adapters.mini.grpo import MiniGRPOConfig

        base = MiniGRPOConfig
    elif algorithm == "ppo":
        from rewardsmith.adapters.mini.ppo import MiniPPOConfig

        base = MiniPPOConfig
    elif algorithm in ("dpo", "ipo"):
        from rewardsmith.adapters.mini.dpo import MiniDPOConfig

        base = MiniDPOConfig
    elif algorithm == "kto":
        from rewardsmith.adapters.mini.kto import MiniKTOConfig

        base = MiniKTOConfig
    elif algorithm == "orpo":
        from rewardsmith.adapters.mini.orpo import MiniORPOConfig

        base = MiniORPOConfig
    elif algorithm == "rm":
        from rewardsmith.adapters.mini.reward_model import MiniRMConfig

        base = MiniRMConfig
    else:
        raise ValueError(f"unknown algorithm {algorithm!r}; choose from {', '.join(ALGORITHMS)}")
    return type(f"{algorithm.upper()}RunConfig", (base, DataSource), {"__module__": __name__})


def run_config(algorithm: str, data: dict[str, Any], path: str | Path = "<config>") -> Any:
    """Validate a ``train`` config mapping (read from ``path``); errors name the offending field."""
    data = dict(data)
    if algorithm == "ipo":
        data["loss"] = "ipo"
    elif algorithm == "dpo":
        data.setdefault("loss", "sigmoid")
    try:
        config: Any = run_config_class(algorithm).model_validate(data)
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
    from rewardsmith.data import read_records

    return read_records(config.data)


def run(algorithm: str, config: Any) -> list[dict[str, float]]:
    """Train with ``config`` (as returned by :func:`load_run_config`); returns the step metrics."""
    rows = training_rows(config)
    options = config.model_dump(exclude={"data", "task"})
    if algorithm in ("grpo", "ppo"):
        from rewardsmith.adapters.demo.tasks import PROMPT_TASKS

        rewards = None
        if config.rewards is None:
            if config.task is None:
                raise ValueError(f"{algorithm} with 'data' needs 'rewards'")
            rewards = _default_reward(PROMPT_TASKS[config.task.name][1])
        options["rewards"] = config.rewards
        if algorithm == "ppo":
            from rewardsmith.adapters.mini.ppo import MiniPPOConfig, train_ppo

            return train_ppo(MiniPPOConfig.model_validate(options), rows, rewards)
        from rewardsmith.adapters.mini.grpo import MiniGRPOConfig, train_grpo

        return train_grpo(MiniGRPOConfig.model_validate(options), rows, rewards)
    if algorithm in ("dpo", "ipo"):
        from rewardsmith.adapters.mini.dpo import MiniDPOConfig, train_dpo

        return train_dpo(MiniDPOConfig.model_validate(options), rows)
    if algorithm == "rm":
        from rewardsmith.adapters.mini.reward_model import MiniRMConfig, train_rm

        return train_rm(MiniRMConfig.model_validate(options), rows)
    if algorithm == "kto":
        from rewardsmith.adapters.mini.kto import MiniKTOConfig, train_kto

        return train_kto(MiniKTOConfig.model_validate(options), rows)
    from rewardsmith.adapters.mini.orpo import MiniORPOConfig, train_orpo

    return train_orpo(MiniORPOConfig.model_validate(options), rows)


def _default_reward(name: str) -> Any:
    from rewardsmith.registry import get_reward

    return get_reward(name)
