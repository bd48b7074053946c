"""Tool environments for TRL's ``GRPOTrainer(environment_factory=...)``: the model's code runs in a rewardsmith sandbox.

TRL (1.16, experimental) builds one environment per rollout from a zero-argument factory, exposes its public
methods as tools (their docstrings become the tool schema), calls ``reset(**row)`` before generation and, when
defined, ``get_reward()`` once the rollout is finished. The classes here:

- :class:`PythonSandboxEnvironment` — tool ``run_python(code)``; variables persist across calls within a rollout
  (earlier cells are replayed silently before the new one, so state never lives outside the sandbox);
- :class:`ShellSandboxEnvironment` — tool ``run_shell(command)``; each command runs in a fresh sandbox.

Every call runs under the sandbox's limits (no network, memory, processes), a per-call wall-clock limit and a
per-rollout time budget; output returned to the model is truncated. ``get_reward()`` scores the rollout with any
rewardsmith reward: the program the model ran (``score_on="program"``, as a fenced block, e.g. for ``code_tests``)
or its last output (``score_on="output"``, e.g. for ``math_equivalence``), with the row's columns as gold.

>>> from functools import partial
>>> factory = partial(PythonSandboxEnvironment, reward={"name": "code_tests"})
>>> # GRPOTrainer(model, train_dataset=ds, environment_factory=factory, reward_funcs=[...], args=...)
"""

from __future__ import annotations

import functools
import json
import logging
import time
from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from rewardsmith.compose import build_reward
from rewardsmith.sandboxes.base import Limits, RunRequest, RunResult, RunStatus, SandboxBackend

logger = logging.getLogger(__name__)

_REPLAY = """\
import contextlib, io, sys
_g = {"__name__": "__main__"}
for _i in range(%d):
    with open(f"cell_{_i}.py") as _f:
        _src = _f.read()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        try:
            exec(compile(_src, f"cell_{_i}.py", "exec"), _g)
        except BaseException:
            pass
with open("cell_%d.py") as _f:
    _src = _f.read()
exec(compile(_src, "cell.py", "exec"), _g)
"""


class ToolEnvironmentConfig(BaseModel):
    """Limits and scoring of one tool environment; validated once, when the environment is built."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    backend: str = Field("local", description="rewardsmith sandbox backend: local, docker or remote")
    backend_options: dict[str, Any] = Field(default_factory=dict, description="options for open_backend")
    call_timeout_s: float = Field(5.0, gt=0, description="wall-clock limit of one tool call")
    rollout_budget_s: float = Field(20.0, gt=0, description="sandbox time one rollout may spend over all calls")
    max_calls: int = Field(8, gt=0, description="tool calls one rollout may make")
    memory_mb: int = Field(512, gt=0, description="memory limit of one call")
    max_output_chars: int = Field(2000, gt=0, description="characters of output returned to the model")
    reward: Any = Field(None, description='rewardsmith reward spec for get_reward, e.g. {"name": "code_tests"}')
    score_on: Literal["program", "output"] = Field("program", description="what get_reward scores")
    language: str = Field("python", description="fence label of the program handed to the reward")


@functools.lru_cache(maxsize=8)
def _shared_backend(name: str, options: str) -> SandboxBackend:
    """One backend per (name, options) per process: every rollout's environment shares its sandbox pool."""
    from rewardsmith.sandboxes.factory import open_backend

    return open_backend(name, **json.loads(options))


def truncate(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters, keeping its head and tail and saying how much was dropped."""
    if len(text) <= limit:
        return text
    head = limit * 2 // 3
    tail = limit - head
    return f"{text[:head]}\n...[{len(text) - limit} characters truncated]...\n{text[-tail:]}"


def describe(result: RunResult, timeout_s: float) -> str:
    """What the model sees: stdout, then stderr, then why the run stopped when it did not exit cleanly."""
    out = result.stdout.decode("utf-8", "replace")
    err = result.stderr.decode("utf-8", "replace")
    parts = [out] if out else []
    if err:
        parts.append(f"[stderr]\n{err}")
    if result.status is RunStatus.TIMEOUT:
        parts.append(f"[stopped: time limit of {timeout_s:g}s]")
    elif result.status is RunStatus.MEMORY:
        parts.append("[stopped: memory limit]")
    elif result.status is RunStatus.OUTPUT_LIMIT:
        parts.append("[stopped: output limit]")
    elif result.status is RunStatus.SANDBOX_ERROR:
        parts.append("[sandbox error: the call did not run]")
    elif result.status is RunStatus.RUNTIME_ERROR:
        parts.append(f"[exit code {result.exit_code}]" if result.exit_code is not None else "[killed]")
    return "\n".join(parts) if parts else "[no output]"


class SandboxToolEnvironment:
    """Shared per-rollout state and budgets; subclasses add one public tool method that calls :meth:`_execute`."""

    def __init__(self, config: ToolEnvironmentConfig | Mapping[str, Any] | None = None, **overrides: Any) -> None:
        data = dict(config.model_dump() if isinstance(config, BaseModel) else config or {})
        data.update(overrides)
        self._config = ToolEnvironmentConfig.model_validate(data)
        self._reward = build_reward(self._config.reward) if self._config.reward is not None else None
        self._backend = _shared_backend(self._config.backend, json.dumps(self._config.backend_options, sort_keys=True))
        self.reset()

    # -- TRL's environment protocol --------------------------------------------------------------
    def reset(self, **row: Any) -> str | None:
        """Start a rollout: forget earlier calls and keep the row's columns as the reward's gold."""
        self._row = {k: v for k, v in row.items() if k != "prompt"}
        self._cells: list[str] = []
        self._outputs: list[str] = []
        self._spent_s = 0.0
        self._calls = 0
        return None

    def get_reward(self) -> float | None:
        """Score the rollout with the configured reward; ``None`` (ignored by TRL) when unscorable or unset."""
        if self._reward is None:
            return None
        try:
            if self._config.score_on == "output":
                completion = self._outputs[-1] if self._outputs else ""
            else:
                program = "\n\n".join(self._cells)
                completion = f"```{self._config.language}\n{program}\n```" if program else ""
            columns = {k: [v] for k, v in self._row.items()}
            result = self._reward.details([completion], **columns)[0]
            return result.score
        except Exception:  # a reward must never raise into the trainer
            logger.exception("environment reward failed")
            return None

    # -- shared machinery --------------------------------------------------------------------------
    def _execute(self, request_for: Any, cell: str) -> str:
        cfg = self._config
        if not isinstance(cell, str):
            return f"[error: expected text, got {type(cell).__name__}]"
        if self._calls >= cfg.max_calls:
            return f"[refused: this rollout already made {cfg.max_calls} tool calls]"
        remaining = cfg.rollout_budget_s - self._spent_s
        if remaining <= 0.05:
            return f"[refused: this rollout spent its {cfg.rollout_budget_s:g}s time budget]"
        timeout = min(cfg.call_timeout_s, remaining)
        limits = Limits(
            wall_time_s=timeout,
            cpu_time_s=timeout,
            memory_mb=cfg.memory_mb,
            output_bytes=max(4 * cfg.max_output_chars, 4096),
        )
        self._calls += 1
        started = time.monotonic()
        try:
            result = self._backend.run(request_for(cell, limits))
        except Exception as exc:  # a backend failure is reported to the model, never raised into the trainer
            result = RunResult(status=RunStatus.SANDBOX_ERROR, message=f"{type(exc).__name__}: {exc}")
        self._spent_s += max(time.monotonic() - started, result.wall_time_s)
        text = truncate(describe(result, timeout), cfg.max_output_chars)
        if result.status in (RunStatus.OK, RunStatus.RUNTIME_ERROR):  # a cell that hung is not replayed
            self._cells.append(cell)
            self._outputs.append(result.stdout.decode("utf-8", "replace").strip())
        return text


class PythonSandboxEnvironment(SandboxToolEnvironment):
    """A Python interpreter in a sandbox; variables defined in one call are visible in the next."""

    def run_python(self, code: str) -> str:
        """Run Python code in a sandbox and return what it printed. Variables persist between calls.

        Args:
            code: The Python program to run.
        """
        return self._execute(self._python_request, code)

    def _python_request(self, code: str, limits: Limits) -> RunRequest:
        n = len(self._cells)
        files: dict[str, str | bytes] = {f"cell_{i}.py": c for i, c in enumerate(self._cells)}
        files[f"cell_{n}.py"] = code
        files["main.py"] = _REPLAY % (n, n)
        return RunRequest(argv=["python3", "main.py"], files=files, limits=limits)


class ShellSandboxEnvironment(SandboxToolEnvironment):
    """A POSIX shell in a sandbox; each command starts from a fresh working directory."""

    def run_shell(self, command: str) -> str:
        """Run a shell command in a sandbox and return its output.

        Args:
            command: The shell command line to run.
        """
        return self._execute(self._shell_request, command)

    @staticmethod
    def _shell_request(command: str, limits: Limits) -> RunRequest:
        return RunRequest(argv=["sh", "-c", command], limits=limits)
