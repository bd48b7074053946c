"""How a code reward reaches its sandbox: the backend its config names, refused at construction when it cannot
carry the verdicts, and a batch of runs that never raises.

``code_tests`` and ``code_turns`` rest their verdicts on the same sandbox contract, so they open, check and run
through these functions: one refusal rule and one way an unavailable backend becomes every run's sandbox error.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Literal, Protocol

from pydantic import Field, model_validator

from rewardsmith.reward import ConfigError
from rewardsmith.reward_config import ConfigGroup
from rewardsmith.sandboxes.base import LimitName, RunRequest, RunResult, RunStatus, SandboxBackend
from rewardsmith.sandboxes.factory import SandboxName

#: What a code reward's verdicts rest on: a wall-time limit, a memory limit and no network (at strong isolation).
SANDBOX_NEEDS: frozenset[LimitName] = frozenset({"wall_time_s", "memory_mb", "network"})


class SandboxSettings(ConfigGroup):
    """Which sandbox runs the code, how isolated, and the limits of each run: a code reward's ``sandbox`` group."""

    backend: SandboxName = Field("local", description="sandbox backend (rewardsmith.sandboxes.factory.SANDBOXES)")
    base_url: str | None = Field(None, description="remote backend URL (SandboxFusion-compatible)")
    backend_options: dict[str, Any] = Field(default_factory=dict, description="extra backend constructor options")
    isolation: Literal["strong", "weak"] = Field(
        "strong",
        description="local backend: 'strong' refuses to run without namespaces (unscorable, with how to fix it); "
        "'weak' opts in to rlimits-only runs, announced in every reason",
    )
    concurrency: int = Field(4, gt=0, description="sandbox runs in flight")
    timeout_s: float = Field(5.0, gt=0, description="wall and CPU limit of each run")
    memory_mb: int = Field(512, gt=0, description="memory limit of each run")

    @model_validator(mode="after")
    def _remote_has_url(self) -> SandboxSettings:
        if self.backend == "remote" and not (self.base_url or self.backend_options.get("base_url")):
            raise ValueError("backend 'remote' needs base_url")
        return self


class SandboxChoice(Protocol):
    """The settings that choose a code reward's sandbox (read only here; a :class:`SandboxSettings` has them)."""

    @property
    def backend(self) -> str: ...

    @property
    def backend_options(self) -> Mapping[str, Any]: ...

    @property
    def base_url(self) -> str | None: ...

    @property
    def isolation(self) -> Literal["strong", "weak"]: ...


def open_sandbox(config: SandboxChoice, offered: Mapping[str, Any]) -> SandboxBackend:
    """The backend ``config`` names, with its options (``base_url`` among them) and the ``offered`` ones it takes."""
    from rewardsmith.sandboxes.factory import open_backend

    options = dict(config.backend_options)
    if config.base_url:
        options.setdefault("base_url", config.base_url)
    return open_backend(config.backend, offered=offered, **options)


def check_sandbox(reward: str, config: SandboxChoice, offered: Mapping[str, Any]) -> None:
    """Refuse (:class:`ConfigError`) a backend whose own description does not cover :data:`SANDBOX_NEEDS` at the
    configured isolation: a backend that drops limits would pay its scores all the same. A backend starts nothing
    until its first run, so one is built here only to be asked (options it refuses are a configuration error too,
    said now rather than as every sample's None)."""
    try:
        backend = open_sandbox(config, offered)
    except Exception as exc:
        lines = [line.strip() for line in str(exc).splitlines() if not line.strip().startswith("For further")]
        why = "; ".join(line for line in lines if line)
        raise ConfigError(f"{reward} cannot open sandbox backend {config.backend!r}: {why}") from None
    try:
        guarantees = backend.describe() if callable(getattr(backend, "describe", None)) else None
    finally:
        backend.close()
    problem: str | None = "it does not say what it guarantees (no describe())"
    if guarantees is not None:
        needs = SANDBOX_NEEDS if config.isolation == "strong" else SANDBOX_NEEDS - {"network"}
        problem = guarantees.shortfall(needs, config.isolation)
    if problem:
        weak_only = guarantees is not None and guarantees.isolation == "weak" and guarantees.enforces >= SANDBOX_NEEDS
        fix = "accept weak isolation with isolation='weak', or use" if weak_only else "use"
        raise ConfigError(
            f"{reward} cannot trust sandbox backend {config.backend!r}: {problem}; to fix: {fix} a backend "
            f"that isolates and enforces {', '.join(sorted(SANDBOX_NEEDS))} (local, docker, remote)"
        )


def run_batch(
    sandbox: Callable[[], SandboxBackend], requests: list[RunRequest], concurrency: int | None
) -> list[RunResult]:
    """One result per request: a backend that cannot be had, or that loses results, is every run's sandbox error
    (an infrastructure failure: each sample's None), never an exception into the reward."""
    if not requests:
        return []
    try:
        results = sandbox().run_batch(requests, concurrency=concurrency)
    except Exception as exc:
        failure = RunResult(status=RunStatus.SANDBOX_ERROR, message=f"backend unavailable: {exc}")
        return [failure for _ in requests]
    if len(results) != len(requests):
        return [RunResult(status=RunStatus.SANDBOX_ERROR, message="backend lost results") for _ in requests]
    return results
