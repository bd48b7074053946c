"""Docker backend: a warm pool of locked-down containers, one program at a time in each.

Each container runs with no network, a read-only root, tmpfs work areas, pids/memory/CPU limits, all capabilities
dropped, ``no-new-privileges``, ``--init``, a private IPC namespace and a seccomp profile holding the local tier's
deny-list (:mod:`.seccomp_profile`: no ``io_uring``, no ``AF_NETLINK`` or other non-Unix socket, no ptrace, no new
namespaces). Its keep-alive process runs as ``nobody`` and programs run as the image's unprivileged ``sandbox`` user
(uid 10001), so a program can signal neither the keep-alive nor init. A run is one ``docker exec`` of a fresh
process, a small bootstrap (``bootstrap_inside.py``, package data) that (1) SIGKILLs every process an earlier run left
alive, removes its SysV and POSIX IPC objects and wipes the tmpfs areas, (2) writes the request's files, (3) sets CPU
and file-size rlimits, (4) runs the program under ``timeout -s KILL`` and (5) cleans up the same way once it ends, so
neither memory, files nor kernel objects of a run outlive it (a bootstrap killed before that gets a cleanup exec of its
own). The cleanup is verified, not assumed: a container whose work areas are not empty afterwards (a program can jam
its area so that deletes fail, and plant files for the next run to import) is discarded, and a run whose bootstrap
could not start the program in a container runs again in a fresh one, so a neighbour never pays for it. The
bootstrap prints a ready token before the program exists, so a program cannot fake an infrastructure
failure. The host keeps its own clock: a run that outlives its wall limit plus a grace period, or floods past the
output cap, gets its container killed and replaced in the pool. Memory kills are read from the container's cgroup on
the host, not from anything the program prints.
"""

from __future__ import annotations

import base64
import functools
import json
import logging
import math
import queue
import signal as signals
import threading
import time
import weakref
from importlib import resources
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field

from rewardsmith.sandboxes.base import ALL_LIMITS, BatchMixin, Guarantees, Limits, RunRequest, RunResult, RunStatus
from rewardsmith.sandboxes.docker.engine import (
    as_bytes,
    exec_exit_code,
    feed,
    hang_up,
    only_init_left,
    oom_kills,
    raw_socket,
    read_frames,
    remove_containers,
    still_running,
    ulimit,
)
from rewardsmith.sandboxes.docker.seccomp_profile import seccomp_security_opt
from rewardsmith.sandboxes.starvation import Sample, Sampler, judged_by_own_time, scheduler_times, task_list_of

if TYPE_CHECKING:  # the docker SDK is an optional extra, imported when the first client is made
    import docker

logger = logging.getLogger(__name__)

DEFAULT_IMAGE = "rewardsmith-sandbox:latest"
RUN_UID = 10001  # the image's ``sandbox`` user; programs run as it
KEEPALIVE_UID = 65534  # ``nobody``: a different uid, so programs cannot kill the container's keep-alive
READY_TOKEN = b"\x00rewardsmith-ready\x00"
_WORK_DIRS = ("/sandbox", "/tmp", "/dev/shm")
CLEANUP_FAILED = 125  # the bootstrap's exit code when its after-run cleanup did not finish (bootstrap_inside.py)

FETCH_BUDGET_BYTES = 64 << 20  # most bytes fetch_files may bring back from one run
START_ATTEMPTS = 3  # containers tried for one run whose bootstrap cannot start the program (a dirty container)


class _NotStarted(Exception):
    """The bootstrap failed before the program existed (the container is not clean, or the engine failed): the
    run is the program's to retry in a fresh container, never its verdict."""


@functools.cache
def _inside_script(name: str) -> str:
    """Source of a program that runs inside the container (``bootstrap_inside.py``, ``fetch_inside.py``), read
    once from package data and passed to ``python3 -c``."""
    return resources.files(__package__).joinpath(name).read_text(encoding="utf-8")


class DockerConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    image: str = Field(
        DEFAULT_IMAGE, description="image with python3 and coreutils (see `rewardsmith sandbox build-image`)"
    )
    concurrency: int = Field(2, gt=0, description="warm containers; also the number of programs running at once")
    base_url: str | None = Field(None, description="engine address, e.g. unix:///var/run/docker.sock; None = env")
    cpus: float = Field(1.0, gt=0, description="CPU share of each container")
    tmpfs_mb: int = Field(64, gt=0, description="size of each tmpfs work area (/sandbox, /tmp)")
    grace_s: float = Field(
        3.0, gt=0, description="host-side allowance past the wall limit before the container is killed"
    )
    acquire_timeout_s: float = Field(120.0, gt=0, description="longest wait for a free container")
    start_timeout_s: float = Field(60.0, gt=0, description="API timeout of engine calls")


class _Container:
    """One pooled container and the limits it currently carries."""

    def __init__(self, handle, memory_mb: int, pids: int) -> None:
        self.handle = handle
        self.memory_mb = memory_mb
        self.pids = pids
        self.runs = 0
        self.task_list: str | None = None  # the cgroup file listing its threads, found on first use


class DockerSandbox(BatchMixin):
    """Run programs in a warm pool of locked-down Docker containers.

    >>> sandbox = DockerSandbox(concurrency=2)  # doctest: +SKIP
    >>> sandbox.run(RunRequest(argv=["python3", "-c", "print(6 * 7)"])).stdout  # doctest: +SKIP
    b'42\\n'
    """

    name = "docker"

    def __init__(
        self, image: str = DEFAULT_IMAGE, concurrency: int = 2, base_url: str | None = None, **options
    ) -> None:
        self.config = DockerConfig(image=image, concurrency=concurrency, base_url=base_url, **options)
        self.default_concurrency = self.config.concurrency
        self._lock = threading.Lock()
        self._client: docker.DockerClient | None = None
        self._idle: queue.Queue[_Container] = queue.Queue()
        self._all: set[str] = set()
        self._started = False
        self._finalizer: weakref.finalize | None = None

    # -- pickling: a copy in another process builds its own pool --------------------------------------------------
    def __getstate__(self) -> dict:
        return {"config": self.config}

    def __setstate__(self, state: dict) -> None:
        DockerSandbox.__init__(self, **state["config"].model_dump())

    def __repr__(self) -> str:
        return f"DockerSandbox(image={self.config.image!r}, concurrency={self.config.concurrency})"

    # -- pool -------------------------------------------------------------------------------------------------------
    @property
    def client(self) -> docker.DockerClient:
        if self._client is None:
            import docker

            if self.config.base_url:
                self._client = docker.DockerClient(
                    base_url=self.config.base_url, version="auto", timeout=int(self.config.start_timeout_s)
                )
            else:
                self._client = docker.from_env(version="auto", timeout=int(self.config.start_timeout_s))
        return self._client

    def describe(self) -> Guarantees:
        return Guarantees(
            isolation="strong", enforces=ALL_LIMITS, where=f"locked-down containers of {self.config.image}"
        )

    def warm_up(self) -> None:
        """Start the container pool now rather than on the first run."""
        self._ensure_pool()

    def _ensure_pool(self) -> None:
        with self._lock:
            if self._started:
                return
            self.client.images.get(self.config.image)  # fail fast with ImageNotFound
            for _ in range(self.config.concurrency):
                self._idle.put(self._start_container(Limits()))
            self._finalizer = weakref.finalize(self, remove_containers, self.client, self._all)
            self._started = True

    def _start_container(self, limits: Limits) -> _Container:
        tmpfs_opts = f"rw,nosuid,nodev,size={self.config.tmpfs_mb}m"
        handle = self.client.containers.run(
            self.config.image,
            command=["sleep", "infinity"],
            detach=True,
            init=True,
            user=f"{KEEPALIVE_UID}:{KEEPALIVE_UID}",
            working_dir="/sandbox",
            network_mode="none",
            read_only=True,
            tmpfs={
                "/sandbox": f"{tmpfs_opts},exec,uid={RUN_UID},gid={RUN_UID},mode=0700",
                "/tmp": f"{tmpfs_opts},mode=1777",
            },
            cap_drop=["ALL"],
            security_opt=["no-new-privileges", seccomp_security_opt()],
            ipc_mode="private",
            pids_limit=limits.max_processes + 4,  # init, keep-alive, bootstrap/timeout
            mem_limit=f"{limits.memory_mb}m",
            memswap_limit=f"{limits.memory_mb}m",
            nano_cpus=int(self.config.cpus * 1e9),
            shm_size="16m",
            ulimits=[ulimit("nofile", 256), ulimit("core", 0)],
            environment={"HOME": "/sandbox"},
            labels={"rewardsmith.sandbox": "1"},
            auto_remove=False,
            stop_signal="SIGKILL",
        )
        if handle.id is None:  # never for a container the engine created
            raise RuntimeError("the docker engine returned a container without an id")
        self._all.add(handle.id)
        return _Container(handle, limits.memory_mb, limits.max_processes)

    def _discard(self, container: _Container) -> None:
        try:
            container.handle.kill()  # kill first: a forced remove of a container mid-exec waits on its streams
        except Exception:
            pass
        try:
            container.handle.remove(force=True)
        except Exception as exc:  # already gone or engine trouble: the replacement below still matters
            logger.warning("could not remove container %s: %s", container.handle.short_id, exc)
        self._all.discard(container.handle.id)

    def _replace(self, container: _Container) -> None:
        self._discard(container)
        try:
            self._idle.put(self._start_container(Limits()))
        except Exception as exc:
            logger.error("could not start a replacement container: %s", exc)

    def close(self) -> None:
        """Remove every container of the pool."""
        if self._finalizer is not None:
            self._finalizer()
        self._started = False
        self._idle = queue.Queue()

    # -- runs -------------------------------------------------------------------------------------------------------
    def run(self, request: RunRequest) -> RunResult:
        if request.limits.network:
            return RunResult(status=RunStatus.SANDBOX_ERROR, message="the docker sandbox never grants network access")
        return judged_by_own_time(self._run_once, request, self.config.cpus)

    def _run_once(self, request: RunRequest) -> tuple[RunResult, Sample | None]:
        """One run in a pooled container; with the result, for a wall-clock timeout, its scheduler times before it."""
        why = ""
        for _ in range(START_ATTEMPTS):
            try:
                self._ensure_pool()
                container = self._idle.get(timeout=self.config.acquire_timeout_s)
            except queue.Empty:
                return RunResult(status=RunStatus.SANDBOX_ERROR, message="no free sandbox container in time"), None
            except Exception as exc:
                message = f"docker engine or image unavailable: {exc}"
                return RunResult(status=RunStatus.SANDBOX_ERROR, message=message), None
            healthy = False
            try:
                self._fit_limits(container, request.limits)
                self._find_task_list(container)  # once per container, here: readings share one clock thread
                sampler = Sampler(functools.partial(self._scheduler_times, container), request.limits.wall_time_s)
                try:
                    result, healthy = self._exec(container, request)
                finally:
                    sampler.stop()
                wall_timeout = result.status is RunStatus.TIMEOUT and not result.message.startswith("CPU")
                return result, sampler.sample if wall_timeout else None
            except _NotStarted as exc:  # the program never ran: a fresh container runs it instead
                why = str(exc)
                logger.warning("sandbox container %s not reusable (%s); replaced", container.handle.short_id, why)
            except Exception as exc:
                return RunResult(status=RunStatus.SANDBOX_ERROR, message=f"{type(exc).__name__}: {exc}"), None
            finally:
                container.runs += 1
                if healthy:
                    self._idle.put(container)
                else:
                    self._replace(container)
        return RunResult(status=RunStatus.SANDBOX_ERROR, message=f"sandbox bootstrap failed: {why}"), None

    def _find_task_list(self, container: _Container) -> None:
        """Learn which cgroup file lists the container's threads (an engine call, once per container)."""
        if container.task_list is None:
            try:
                pid = int(self.client.api.inspect_container(container.handle.id)["State"]["Pid"])
            except Exception:
                return  # asked again before the next run
            container.task_list = task_list_of(pid) or ""

    def _scheduler_times(self, container: _Container) -> tuple[float, float] | None:
        """The container's threads' time on a CPU and queued for one (:mod:`..starvation`); the container runs one
        program at a time, and its idle keep-alive and init add nothing. ``None`` on a remote engine. Reads
        ``/proc`` only: the engine was asked where to look before the run."""
        return scheduler_times(container.task_list) if container.task_list else None

    def _fit_limits(self, container: _Container, limits: Limits) -> None:
        if (container.memory_mb, container.pids) == (limits.memory_mb, limits.max_processes):
            return
        memory = limits.memory_mb << 20
        body = {"Memory": memory, "MemorySwap": memory, "PidsLimit": limits.max_processes + 4}
        # the SDK's update_container has no PidsLimit: the engine's endpoint through the client's own (private)
        # request helpers, which the type stubs do not declare
        api: Any = self.client.api
        api._raise_for_status(api._post_json(api._url("/containers/{0}/update", container.handle.id), data=body))
        container.memory_mb, container.pids = limits.memory_mb, limits.max_processes

    def _exec(self, container: _Container, request: RunRequest) -> tuple[RunResult, bool]:
        """Run the request in ``container``; returns the result and whether the container may be reused."""
        limits = request.limits
        spec = {
            "argv": request.argv,
            "wall_s": f"{limits.wall_time_s:.3f}",
            "cpu_s": max(1, math.ceil(limits.cpu_time_s)),
            "fsize": limits.file_size_mb << 20,
            "wipe": list(_WORK_DIRS),
            "keep_files": bool(request.fetch_files),  # the fetch exec reads them, then empties the areas
            "ready": READY_TOKEN.decode("latin-1"),
        }
        payload = json.dumps({p: base64.b64encode(as_bytes(c)).decode() for p, c in request.files.items()}).encode()
        program_stdin = as_bytes(request.stdin)  # length-prefixed: the program never waits on the stream's EOF
        stdin = len(payload).to_bytes(8, "big") + payload + len(program_stdin).to_bytes(8, "big") + program_stdin
        api = self.client.api
        oom_before = oom_kills(container.handle.id)
        try:
            exec_id = api.exec_create(
                container.handle.id,
                ["python3", "-I", "-S", "-c", _inside_script("bootstrap_inside.py"), json.dumps(spec)],
                stdin=True,
                user=f"{RUN_UID}:{RUN_UID}",
                workdir="/sandbox",
                environment={
                    "HOME": "/sandbox",
                    "PATH": "/usr/local/bin:/usr/bin:/bin",
                    "LANG": "C.UTF-8",
                    "PYTHONHASHSEED": "0",
                },
            )["Id"]
        except Exception as exc:  # a container that died while idle: the program never existed
            raise _NotStarted(f"the engine refused the run: {exc}") from exc
        sock = raw_socket(api.exec_start(exec_id, socket=True))
        started = time.monotonic()
        deadline = started + limits.wall_time_s + self.config.grace_s
        writer = threading.Thread(target=feed, args=(sock, stdin), daemon=True)
        writer.start()
        try:
            streams, ending = read_frames(sock, deadline, limits.output_bytes + len(READY_TOKEN))
        finally:
            hang_up(sock)
        wall = time.monotonic() - started
        stdout, stderr = streams
        ready = stdout.startswith(READY_TOKEN)
        stdout = stdout[len(READY_TOKEN) :] if ready else stdout
        cap = limits.output_bytes
        if not ready and ending != "eof":  # the bootstrap hung before the program existed: not the program's doing
            raise _NotStarted(f"the bootstrap did not start the program ({ending})")
        if ending == "deadline":
            return RunResult(
                status=RunStatus.TIMEOUT,
                stdout=stdout[:cap],
                stderr=stderr[:cap],
                wall_time_s=wall,
                message=f"still running {self.config.grace_s:g}s past the wall limit; container killed",
            ), False
        if ending == "flood":
            return RunResult(
                status=RunStatus.OUTPUT_LIMIT,
                stdout=stdout[:cap],
                stderr=stderr[:cap],
                wall_time_s=wall,
                message=f"output over {cap} bytes; container killed",
            ), False
        exit_code = exec_exit_code(api, exec_id)
        if not ready:
            detail = stderr.decode("utf-8", "replace").strip()[-500:]
            raise _NotStarted(f"exit {exit_code}: {detail}")
        result = _verdict(exit_code, wall, limits, oom=oom_kills(container.handle.id) > oom_before)
        if exit_code is None or exit_code > 128:  # killed: by its limits, by itself, or with the whole container?
            unexplained = result.status in (RunStatus.RUNTIME_ERROR, RunStatus.SANDBOX_ERROR)
            if not still_running(container, settle_s=0.5 if unexplained else 0.0):
                message = "the sandbox container stopped during the run"
                return RunResult(status=RunStatus.SANDBOX_ERROR, wall_time_s=wall, message=message), False
        if exit_code is None:  # the engine never reported the run's exit code, yet the container runs on
            message = "the docker engine reported no exit code for the run"
            return RunResult(status=RunStatus.SANDBOX_ERROR, wall_time_s=wall, message=message), False
        files = self._fetch(container, request.fetch_files) if request.fetch_files else {}
        # a signal death may be the bootstrap's own, before its cleanup: then the cleanup runs as an exec of its own;
        # so it does after a fetch, which left the work areas for its read. Reused only when verified clean.
        needs_cleanup = exit_code > 128 or exit_code == CLEANUP_FAILED or bool(request.fetch_files)
        reusable = (not needs_cleanup or self._clean_only(container)) and only_init_left(container.handle.id)
        return result.model_copy(update={"stdout": stdout, "stderr": stderr, "files": files}), reusable

    def _clean_only(self, container: _Container) -> bool:
        """Run the bootstrap's cleanup alone (kill leftovers, remove kernel objects, empty the work areas)."""
        api = self.client.api
        spec = {"wipe": list(_WORK_DIRS), "clean_only": True}
        exec_id = api.exec_create(
            container.handle.id,
            ["python3", "-I", "-S", "-c", _inside_script("bootstrap_inside.py"), json.dumps(spec)],
            user=f"{RUN_UID}:{RUN_UID}",
            workdir="/",  # not the work area, which the run may have made unsearchable
        )["Id"]
        api.exec_start(exec_id, demux=True)
        return exec_exit_code(api, exec_id) == 0

    def _fetch(self, container: _Container, paths: list[str]) -> dict[str, bytes]:
        """Read ``paths`` (relative to the work directory) back from the container's tmpfs before the cleanup
        empties it; missing or non-regular files are left out. ``docker cp`` cannot see tmpfs mounts: one exec reads
        them instead."""
        api = self.client.api
        exec_id = api.exec_create(
            container.handle.id,
            [
                "python3",
                "-I",
                "-S",
                "-c",
                _inside_script("fetch_inside.py"),
                json.dumps(paths),
                str(FETCH_BUDGET_BYTES),
            ],
            user=f"{RUN_UID}:{RUN_UID}",
            workdir="/sandbox",
        )["Id"]
        stdout, stderr = api.exec_start(exec_id, demux=True)
        if exec_exit_code(api, exec_id) != 0:
            detail = (stderr or b"").decode("utf-8", "replace").strip()[-300:]
            raise RuntimeError(f"reading fetch_files back from the container failed: {detail}")
        return {path: base64.b64decode(data) for path, data in json.loads(stdout or b"{}").items()}


def _verdict(exit_code: int | None, wall: float, limits: Limits, oom: bool) -> RunResult:
    """Status from the exit code docker reports, the host's clock and the cgroup's OOM counter."""
    if exit_code is None:
        return RunResult(status=RunStatus.SANDBOX_ERROR, wall_time_s=wall, message="exec finished without an exit code")
    signal = exit_code - 128 if exit_code > 128 else None
    code = None if signal else exit_code
    if exit_code == 0:
        return RunResult(status=RunStatus.OK, exit_code=0, wall_time_s=wall)
    if signal == signals.SIGKILL and oom:
        return RunResult(
            status=RunStatus.MEMORY, signal=signal, wall_time_s=wall, message=f"memory limit {limits.memory_mb} MB"
        )
    if signal == signals.SIGKILL and wall >= limits.wall_time_s * 0.98:
        return RunResult(
            status=RunStatus.TIMEOUT, signal=signal, wall_time_s=wall, message=f"wall limit {limits.wall_time_s:g}s"
        )
    if signal == signals.SIGXCPU or (signal == signals.SIGKILL and wall >= limits.cpu_time_s * 0.98):
        return RunResult(
            status=RunStatus.TIMEOUT, signal=signal, wall_time_s=wall, message=f"CPU limit {limits.cpu_time_s:g}s"
        )
    if oom:
        return RunResult(
            status=RunStatus.MEMORY,
            exit_code=code,
            signal=signal,
            wall_time_s=wall,
            message=f"memory limit {limits.memory_mb} MB",
        )
    if signal == signals.SIGXFSZ:
        return RunResult(status=RunStatus.RUNTIME_ERROR, signal=signal, wall_time_s=wall, message="file size limit")
    return RunResult(status=RunStatus.RUNTIME_ERROR, exit_code=code, signal=signal, wall_time_s=wall)
