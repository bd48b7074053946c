"""The sandbox contract: run one untrusted program under limits, get a result that cannot lie.

Callers never branch on which backend they hold (local, docker, remote); each backend implements
``run`` (and may override ``run_batch`` for speed) and says what it guarantees with ``describe``, which
:mod:`rewardsmith.sandboxes.conformance` verifies by running programs. Nothing here knows about rewards.
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from enum import Enum
from typing import Literal, Protocol, get_args, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field


class Limits(BaseModel):
    """Resource limits of one run. Defaults suit a unit-test style program."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    wall_time_s: float = Field(10.0, gt=0, description="wall-clock limit; the whole process tree is killed past it")
    cpu_time_s: float = Field(10.0, gt=0, description="CPU-time limit (RLIMIT_CPU)")
    memory_mb: int = Field(512, gt=0, description="address-space / cgroup memory limit")
    max_processes: int = Field(16, gt=0, description="processes/threads the program may create")
    output_bytes: int = Field(1 << 20, gt=0, description="stdout and stderr are each capped at this many bytes")
    file_size_mb: int = Field(16, gt=0, description="largest file the program may write (RLIMIT_FSIZE)")
    network: bool = Field(False, description="network access; off unless a backend is told otherwise")


class RunRequest(BaseModel):
    """One program: files written into a fresh working directory, then ``argv`` run there."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    argv: list[str] = Field(min_length=1, description="command, e.g. ['python3', 'main.py']")
    files: dict[str, str | bytes] = Field(default_factory=dict, description="relative path -> content")
    stdin: str | bytes = b""
    limits: Limits = Field(default_factory=Limits)
    fetch_files: list[str] = Field(
        default_factory=list, description="relative paths read back into RunResult.files after the run (if present)"
    )


class RunStatus(str, Enum):
    OK = "ok"  # exited with code 0
    RUNTIME_ERROR = "runtime_error"  # non-zero exit or killed by a signal
    TIMEOUT = "timeout"  # wall or CPU limit
    MEMORY = "memory"  # memory limit
    OUTPUT_LIMIT = "output_limit"  # stdout/stderr over the cap
    SANDBOX_ERROR = "sandbox_error"  # the sandbox itself failed: not the program's fault


class RunResult(BaseModel):
    """What happened. ``status`` is decided by the sandbox, outside the program."""

    model_config = ConfigDict(extra="forbid")

    status: RunStatus
    exit_code: int | None = None
    signal: int | None = None
    stdout: bytes = b""
    stderr: bytes = b""
    wall_time_s: float = 0.0
    cpu_time_s: float | None = None
    files: dict[str, bytes] = Field(default_factory=dict, description="files fetched back after the run, if asked")
    message: str = Field("", description="why, for sandbox errors and limit hits")

    @property
    def ok(self) -> bool:
        return self.status is RunStatus.OK

    @property
    def infrastructure_failure(self) -> bool:
        return self.status is RunStatus.SANDBOX_ERROR


IsolationLevel = Literal["strong", "weak", "none"]
#: the :class:`Limits` fields a backend can promise to enforce (``network``: a request without it gets none)
LimitName = Literal[
    "wall_time_s", "cpu_time_s", "memory_mb", "max_processes", "output_bytes", "file_size_mb", "network"
]
ALL_LIMITS: frozenset[LimitName] = frozenset(get_args(LimitName))


class Guarantees(BaseModel):
    """What a backend promises about every program it runs: the contract a caller checks before trusting its
    verdicts (``code_tests`` refuses a backend that promises too little) and that
    :mod:`rewardsmith.sandboxes.conformance` verifies, so a promise that is not kept fails a check, not a training run.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    isolation: IsolationLevel = Field(
        description="strong: the program reaches neither the host's files and processes, the network nor other runs' "
        "state (namespaces, a container, another host); weak: its limits hold but the host's files and network are "
        "reachable; none: it runs as the caller does"
    )
    enforces: frozenset[LimitName] = Field(
        description="the Limits fields whose requested values every run is held to (a limit only a server's own "
        "policy sets is not one of them)"
    )
    where: str = Field("", description="one line: where programs run and what confines them (said in refusals)")

    def shortfall(self, needs: frozenset[LimitName], isolation: IsolationLevel = "strong") -> str | None:
        """Why these guarantees do not cover ``needs`` at ``isolation`` (``"weak"`` accepts weak or strong), or None."""
        problems = []
        accepted = {"strong": ("strong",), "weak": ("strong", "weak"), "none": ("strong", "weak", "none")}[isolation]
        if self.isolation not in accepted:
            problems.append(f"its isolation is {self.isolation} ({self.where or 'no detail given'})")
        missing = sorted(needs - self.enforces)
        if missing:
            problems.append(f"it does not enforce {', '.join(missing)}")
        return "; ".join(problems) or None


@runtime_checkable
class SandboxBackend(Protocol):
    """Anything that can run a :class:`RunRequest`. Implementations must never raise for program faults.

    A constructor starts nothing (a caller may build one only to read :meth:`describe`); :meth:`warm_up` starts
    what the first run would (a pool, a server), and :meth:`close` stops it. A backend class may list, as
    ``accepts_offered``, which options callers offer every backend it takes (``isolation``, ``warm_modules``,
    ``warm_scripts``: see :func:`~rewardsmith.sandboxes.factory.open_backend`); others are not passed to it.
    """

    name: str

    def run(self, request: RunRequest) -> RunResult: ...

    def run_batch(self, requests: Sequence[RunRequest], concurrency: int | None = None) -> list[RunResult]: ...

    def describe(self) -> Guarantees: ...

    def warm_up(self) -> None: ...

    def close(self) -> None: ...


class BatchMixin:
    """The default batch form on top of ``run`` with bounded concurrency (threads: ``run`` blocks)."""

    default_concurrency: int = 2

    def run(self, request: RunRequest) -> RunResult:  # pragma: no cover - implemented by backends
        raise NotImplementedError

    def run_batch(self, requests: Sequence[RunRequest], concurrency: int | None = None) -> list[RunResult]:
        workers = max(1, concurrency or self.default_concurrency)
        if workers == 1 or len(requests) <= 1:
            return [self._safe_run(r) for r in requests]
        with ThreadPoolExecutor(max_workers=workers) as pool:
            return list(pool.map(self._safe_run, requests))

    def warm_up(self) -> None:
        """Nothing to start ahead: the first run pays no start-up."""
        return None

    def close(self) -> None:
        return None

    def _safe_run(self, request: RunRequest) -> RunResult:
        try:
            return self.run(request)
        except Exception as exc:  # a backend bug is an infrastructure failure, never a program verdict
            return RunResult(status=RunStatus.SANDBOX_ERROR, message=f"{type(exc).__name__}: {exc}")
