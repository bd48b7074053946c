"""The default sandbox: local, no daemon, full isolation at warm-interpreter speed.

Tiers, strongest first (chosen once per instance, the weaker one announced by a logged warning):

``bwrap``
    A pool of bubblewrap sandboxes (no network, private PID/IPC/UTS namespaces, read-only ``/usr``, empty
    environment), each holding a warm forkserver whose runs are forked from a zygote that never held a request
    or a response. Every run gets its own mount, PID and IPC namespace, fresh size-capped tmpfs on ``/work``,
    ``/tmp`` and ``/dev/shm``, its own ``/proc``, a fresh unprivileged uid, no capabilities,
    ``no_new_privs``, rlimits (CPU, address space, processes, file size, open files) and a seccomp deny-list.
    The program is PID 1 of its namespace, so every descendant (``setsid`` or not) dies with it.
    ``python3 FILE.py`` runs in the forked warm interpreter (no exec), and so does a *warm script* (a trusted
    ``python3 -S -c`` program named at construction, compiled once, run with a site-less interpreter's import
    state); anything else is exec'd.
    Needs ``bwrap`` and root (the forkserver keeps ``CAP_SYS_ADMIN`` to build per-run namespaces).
``bwrap-exec``
    One bubblewrap sandbox per run (user namespace, so no root needed): the same namespaces, read-only system,
    empty environment, uid 65534, seccomp (``bwrap --seccomp``), rlimits and size-capped tmpfs for every
    writable area (``/work``, ``/tmp``, ``/dev/shm``; root and ``/dev`` read-only), but a fresh interpreter per
    run. ``auto`` uses it when the forkserver cannot start.
``subprocess``
    rlimits, a fresh temp directory, an empty environment and (as root) an unprivileged uid; no namespaces.
    Weak: it runs only with ``isolation="weak"``. Without it, a machine where bubblewrap cannot run gets no tier
    at all: every run is a ``SANDBOX_ERROR`` whose message says how to fix it (fail closed), and
    :attr:`LocalSandbox.isolation_warning` names the weak tier whenever it is in use.

In every tier, where the kernel lets this process manage cgroups (see :mod:`rewardsmith.sandboxes.local.cgroups`), each
run also gets its own cgroup: ``memory_mb`` bounds the memory of all its processes together (an OOM kill there
is reported as ``MEMORY``) and ``max_processes`` its task count; without them a warning says so once.

>>> from rewardsmith.sandboxes.base import RunRequest
>>> box = LocalSandbox()
>>> box.run(RunRequest(argv=["python3", "main.py"], files={"main.py": "print(6 * 7)"})).stdout
b'42\\n'
"""

from __future__ import annotations

import logging
import os
import queue
import secrets
import threading
from typing import Any, ClassVar, Literal

from rewardsmith.sandboxes.base import ALL_LIMITS, BatchMixin, Guarantees, RunRequest, RunResult, RunStatus
from rewardsmith.sandboxes.local.bwrap import run_in_bwrap
from rewardsmith.sandboxes.local.cgroups import CPUS_PER_RUN, CgroupManager, RunCgroup, cgroup_manager
from rewardsmith.sandboxes.local.fallback import run_in_subprocess
from rewardsmith.sandboxes.local.forkserver_host import (
    ForkserverError,
    ForkserverProcess,
    find_bwrap,
    request_payload,
    result_from_report,
    sandbox_path_env,
)
from rewardsmith.sandboxes.local.seccomp import build_seccomp_bpf
from rewardsmith.sandboxes.starvation import Sample, Sampler, judged_by_own_time

logger = logging.getLogger(__name__)

Tier = Literal["auto", "bwrap", "bwrap-exec", "subprocess"]
Isolation = Literal["strong", "weak"]
STRONG_TIERS = ("bwrap", "bwrap-exec")
HOW_TO_FIX = (
    "install bubblewrap (apt-get install bubblewrap), use backend 'docker' or 'remote', or accept weak isolation "
    "explicitly with isolation='weak'"
)
WEAK_NOTE = (
    "WEAK ISOLATION (opted in): rlimits and a uid drop only; the host filesystem is readable and the network reachable"
)
PROBE = RunRequest(argv=["python3", "-c", "print('ok')"])
_warned: set[str] = set()
_warn_lock = threading.Lock()


def warn_once(key: str, message: str) -> None:
    """Log ``message`` as a warning the first time ``key`` is seen in this process."""
    with _warn_lock:
        if key in _warned:
            return
        _warned.add(key)
    logger.warning(message)


class LocalSandbox(BatchMixin):
    """Run untrusted programs on this machine (see the module docstring for the isolation tiers).

    Args:
        tier: ``"auto"`` (the strongest tier that starts), or one of ``"bwrap"``, ``"bwrap-exec"``,
            ``"subprocess"`` (runs fail with ``SANDBOX_ERROR`` if it cannot start).
        isolation: ``"strong"`` (default: namespaces or nothing) or ``"weak"`` (the explicit opt-in that lets
            ``auto`` fall back to, and ``tier="subprocess"`` select, the subprocess tier).
        warm_modules: ``{name: source}`` of trusted Python modules the forkserver imports once at start, so
            runs that ``import name`` skip compiling it (other tiers import the file shipped with the run).
        warm_scripts: sources of trusted ``python3 -S -c`` programs (a checker the host starts often) that the
            forkserver compiles once at start: a run of exactly one of them is forked warm with a fresh site-less
            interpreter's import state instead of starting and compiling a new interpreter (other tiers exec it).
        concurrency: default worker count of :meth:`run_batch`; also the number of warm forkservers kept.
        seccomp: load the seccomp deny-list in each run (needs ``pyseccomp`` + ``libseccomp.so.2`` on the host).

    Instances pickle without their processes; forkservers start lazily on first use.
    """

    name = "local"
    #: the options a caller offers every backend (:func:`~rewardsmith.sandboxes.factory.open_backend`) that this one
    #: takes: the weak tier is chosen only on the caller's opt-in, and the harness runtime is preloaded once
    accepts_offered: ClassVar[frozenset[str]] = frozenset({"isolation", "warm_modules", "warm_scripts"})

    def __init__(
        self,
        tier: Tier = "auto",
        concurrency: int = 2,
        seccomp: bool = True,
        isolation: Isolation = "strong",
        warm_modules: dict[str, str] | None = None,
        warm_scripts: list[str] | None = None,
    ) -> None:
        if tier not in ("auto", "bwrap", "bwrap-exec", "subprocess"):
            raise ValueError(f"tier must be 'auto', 'bwrap', 'bwrap-exec' or 'subprocess', got {tier!r}")
        if isolation not in ("strong", "weak"):
            raise ValueError(f"isolation must be 'strong' or 'weak', got {isolation!r}")
        if tier == "subprocess" and isolation != "weak":
            raise ValueError("tier 'subprocess' is weak isolation: pass isolation='weak' to opt in to it")
        self.requested_tier = tier
        self.isolation = isolation
        self.warm_modules = dict(warm_modules or {})
        self.warm_scripts = list(warm_scripts or [])
        self.default_concurrency = max(1, int(concurrency))
        self.seccomp = seccomp
        self._init_runtime()

    def _init_runtime(self) -> None:
        self._lock = threading.Lock()
        self._idle: queue.SimpleQueue[ForkserverProcess] = queue.SimpleQueue()
        self._all: list[ForkserverProcess] = []
        self._tier: str | None = None
        self._seccomp_bpf: bytes | None = None
        self._cgroups: CgroupManager | None = None
        self._startup_error = ""

    def __getstate__(self) -> dict[str, Any]:
        return {
            "requested_tier": self.requested_tier,
            "isolation": self.isolation,
            "warm_modules": self.warm_modules,
            "warm_scripts": self.warm_scripts,
            "default_concurrency": self.default_concurrency,
            "seccomp": self.seccomp,
        }

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._init_runtime()

    # -- public ----------------------------------------------------------------------------------
    @property
    def tier(self) -> str:
        """The isolation tier actually in use (resolves ``auto`` by starting one forkserver)."""
        return self._resolve_tier()

    @property
    def isolation_warning(self) -> str | None:
        """Said in every result a caller reports while the weak tier runs; ``None`` under a strong tier."""
        return WEAK_NOTE if self._resolve_tier() == "subprocess" else None

    @property
    def seccomp_active(self) -> bool:
        return self._resolve_tier() == "bwrap" and self._seccomp_bpf is not None

    @property
    def cgroup_controllers(self) -> frozenset[str]:
        """The per-run cgroup limits in force (``memory``, ``pids``); empty when only rlimits apply."""
        self._resolve_tier()
        return self._cgroups.controllers if self._cgroups is not None else frozenset()

    def describe(self) -> Guarantees:
        """Strong unless the weak tier was opted in to (a strong instance runs under namespaces or not at all);
        read from the configuration, so it starts nothing."""
        if self.requested_tier == "subprocess" or (self.requested_tier == "auto" and self.isolation == "weak"):
            return Guarantees(
                isolation="weak",
                enforces=ALL_LIMITS - {"network"},
                where="this machine; bubblewrap namespaces if they start, else rlimits and a uid drop only",
            )
        return Guarantees(isolation="strong", enforces=ALL_LIMITS, where="this machine, in bubblewrap namespaces")

    def warm_up(self) -> None:
        """Resolve the tier now (under ``auto`` or ``bwrap`` that starts the first forkserver), not on the first run."""
        self._resolve_tier()

    def run(self, request: RunRequest) -> RunResult:
        if request.limits.network:
            return RunResult(status=RunStatus.SANDBOX_ERROR, message="the local sandbox never grants network access")
        tier = self._resolve_tier()
        if tier == "bwrap":
            return judged_by_own_time(self._run_in_forkserver, request, CPUS_PER_RUN)
        if tier == "bwrap-exec":
            bwrap = find_bwrap()
            if bwrap is None:
                return RunResult(status=RunStatus.SANDBOX_ERROR, message="bwrap disappeared")
            return run_in_bwrap(request, self._environment(sandboxed=True), bwrap, self._seccomp_bpf, self._cgroups)
        if tier == "subprocess":
            return run_in_subprocess(request, self._environment(sandboxed=False), self._cgroups)
        message = f"local sandbox unavailable: {self._startup_error}"
        return RunResult(status=RunStatus.SANDBOX_ERROR, message=message)

    def close(self) -> None:
        with self._lock:
            servers, self._all = self._all, []
        for server in servers:
            server.close()
        while not self._idle.empty():
            self._idle.get_nowait()

    def __enter__(self) -> LocalSandbox:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:
            pass

    # -- internals -------------------------------------------------------------------------------
    def _run_in_forkserver(self, request: RunRequest, attempts: int = 2) -> tuple[RunResult, Sample | None]:
        """One run in a warm forkserver; with the result, for a wall-clock timeout, its scheduler times before it."""
        shipped = {f"{name}.py": source for name, source in self.warm_modules.items()}
        if any(request.files.get(path) == source for path, source in shipped.items()):
            # the warm interpreter already has these modules: no need to copy their sources into every run
            files = {p: c for p, c in request.files.items() if shipped.get(p) != c}
            request = request.model_copy(update={"files": files})
        try:
            server = self._checkout()
        except ForkserverError as exc:
            return RunResult(status=RunStatus.SANDBOX_ERROR, message=str(exc)), None
        uid = 100_000 + secrets.randbelow(1 << 30)
        cgroup: RunCgroup | None = None
        if self._cgroups is not None:
            try:
                cgroup = self._cgroups.create(request.limits.memory_mb, request.limits.max_processes)
            except OSError as exc:
                self._idle.put(server)
                message = f"cannot create the run's cgroup: {exc}"
                return RunResult(status=RunStatus.SANDBOX_ERROR, message=message), None
        payload = request_payload(request, uid, self._environment(sandboxed=True), cgroup.name if cgroup else None)
        memory_killed = False
        sampler = Sampler(cgroup.scheduler_times, request.limits.wall_time_s) if cgroup is not None else None
        try:
            report = server.call(payload, timeout_s=request.limits.wall_time_s + 15.0)
        except (ForkserverError, ValueError) as exc:
            self._discard(server)
            return RunResult(status=RunStatus.SANDBOX_ERROR, message=str(exc)), None
        finally:
            if sampler is not None:
                sampler.stop()
            if cgroup is not None:
                cgroup.kill_all()
                memory_killed = cgroup.memory_killed()
                cgroup.close()
        if report.get("retire"):  # the forkserver cannot fork runs any more; the program never started
            self._discard(server)
            if attempts > 1:
                return self._run_in_forkserver(request, attempts - 1)
        else:
            self._idle.put(server)
        result = result_from_report(report, request.limits, memory_killed=memory_killed)
        wall_timeout = result.status is RunStatus.TIMEOUT and result.message == "wall-clock limit"
        return result, sampler.sample if sampler is not None and wall_timeout else None

    def _checkout(self) -> ForkserverProcess:
        while True:
            try:
                server = self._idle.get_nowait()
            except queue.Empty:
                return self._start_forkserver()
            if server.alive():
                return server
            self._discard(server)

    def _start_forkserver(self) -> ForkserverProcess:
        bwrap = find_bwrap()
        if bwrap is None:
            raise ForkserverError("bwrap is not installed")
        server = self._new_forkserver(bwrap)
        with self._lock:
            self._all.append(server)
        return server

    def _new_forkserver(self, bwrap: str) -> ForkserverProcess:
        return ForkserverProcess(
            bwrap,
            self._seccomp_bpf,
            cgroup_parents=self._cgroup_parents(),
            warm_modules=self.warm_modules,
            warm_scripts=self.warm_scripts,
        )

    def _discard(self, server: ForkserverProcess) -> None:
        with self._lock:
            if server in self._all:
                self._all.remove(server)
        server.close()

    def _resolve_tier(self) -> str:
        if self._tier is not None:
            return self._tier
        with self._lock:
            if self._tier is not None:
                return self._tier
            tier = self._probe()
            self._tier = tier
        return tier

    def _cgroup_parents(self) -> list[str]:
        return [hierarchy.parent for hierarchy in self._cgroups.hierarchies] if self._cgroups else []

    def _probe(self) -> str:
        self._cgroups = cgroup_manager()
        if self.requested_tier == "subprocess":
            return "subprocess"
        if self.seccomp:
            self._seccomp_bpf = build_seccomp_bpf()
            if self._seccomp_bpf is None:
                warn_once(
                    "seccomp",
                    "rewardsmith local sandbox: seccomp unavailable (pip install pyseccomp; needs "
                    "libseccomp.so.2); runs are isolated by namespaces, uid and rlimits only",
                )
        bwrap = find_bwrap()
        problems = []
        if bwrap is None:
            problems.append("bwrap is not installed (apt-get install bubblewrap)")
        if bwrap and self.requested_tier in ("auto", "bwrap"):
            try:
                if os.geteuid() != 0:
                    raise ForkserverError("the forkserver tier needs root (it builds a namespace per run)")
                server = self._new_forkserver(bwrap)
                self._all.append(server)  # the caller holds self._lock
                self._idle.put(server)
                return "bwrap"
            except (ForkserverError, OSError) as exc:
                problems.append(f"forkserver: {exc}")
        if bwrap and self.requested_tier in ("auto", "bwrap-exec"):
            probe = run_in_bwrap(PROBE, self._environment(sandboxed=True), bwrap, self._seccomp_bpf)
            if probe.ok and probe.stdout == b"ok\n":
                if self.requested_tier == "auto":
                    logger.info("rewardsmith local sandbox: one bwrap per run (%s)", "; ".join(problems))
                return "bwrap-exec"
            problems.append(f"bwrap per run: {probe.status.value} {probe.message} {probe.stderr[-200:]!r}")
        self._startup_error = "; ".join(problems)
        if self.requested_tier != "auto":
            logger.error("rewardsmith local sandbox: tier %r unavailable: %s", self.requested_tier, self._startup_error)
            return "unavailable"
        if self.isolation != "weak":
            self._startup_error = f"no strong isolation here ({self._startup_error}); to fix: {HOW_TO_FIX}"
            logger.error("rewardsmith local sandbox: refusing to run untrusted code: %s", self._startup_error)
            return "unavailable"
        warn_once(
            "weak-tier",
            "rewardsmith local sandbox: WEAK ISOLATION (isolation='weak'). bubblewrap cannot run here "
            f"({self._startup_error}); running under rlimits + uid drop without namespaces: the host "
            "filesystem is readable, the network reachable and setsid orphans can survive.",
        )
        return "subprocess"

    @staticmethod
    def _environment(sandboxed: bool) -> dict[str, str]:
        path = sandbox_path_env() if sandboxed else "/usr/local/bin:/usr/bin:/bin"
        return {
            "PATH": path,
            "HOME": "/tmp",
            "LANG": "C.UTF-8",
            "LC_ALL": "C.UTF-8",
            "PYTHONDONTWRITEBYTECODE": "1",
            "PYTHONHASHSEED": "0",
            "PYTHONIOENCODING": "utf-8",
        }
