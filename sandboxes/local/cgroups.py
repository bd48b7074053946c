"""Per-run cgroups for the local sandbox: a memory ceiling for the whole process tree, a task count and a CPU share.

Rlimits bound each process alone (``RLIMIT_AS``) and count processes per uid (``RLIMIT_NPROC``, which root
ignores); a cgroup bounds the run as a whole. Each run gets its own cgroup under a rewardsmith-owned parent
(``<own cgroup>/rewardsmith``) in every hierarchy that offers the controller:

* cgroup v2 (``memory``, ``pids``, ``cpu`` delegated to the process's own cgroup): ``memory.max``, ``pids.max``,
  ``memory.swap.max``, ``cpu.max``; memory kills are read from ``memory.events`` (``oom_kill``);
* cgroup v1 (``memory``, ``pids``, ``cpu`` hierarchies): ``memory.limit_in_bytes`` (+ ``memsw`` when present),
  ``pids.max``, ``cpu.cfs_quota_us``; memory kills are read from ``memory.oom_control`` (``oom_kill``).

CPU: the scheduler shares CPU between processes, so a run whose processes each ``setsid`` and spin would take a
share per process and push an honest neighbour past its wall limit. In its own ``cpu`` cgroup a run is one
scheduling entity however many processes it starts: runs share the CPU equally (the same weight each), and each is
capped at :data:`CPUS_PER_RUN` CPUs (a CFS quota, like the Docker backend's ``cpus``). The rewardsmith parent gets the
weight of one process per CPU, so the runs together are not squeezed into one process's share of a loaded machine.

The run's first process joins its cgroups by writing ``0`` to each ``cgroup.procs`` before it runs any
untrusted code, so everything it starts is counted. When no controller is usable (not root, no delegation),
runs keep their rlimits only and one warning says which limits are not enforced.
"""

from __future__ import annotations

import errno
import itertools
import logging
import os
import secrets
import signal
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from rewardsmith.sandboxes.starvation import scheduler_times

logger = logging.getLogger(__name__)

PARENT_NAME = "rewardsmith"
CONTROLLERS = ("memory", "pids", "cpu")
CPUS_PER_RUN = 1.0  # CPU time per wall second one run may use, all its processes together
CFS_PERIOD_US = 100_000
_MOUNTS = "/proc/self/mounts"
_OWN = "/proc/self/cgroup"


@dataclass(frozen=True)
class Hierarchy:
    """One writable parent directory and the controllers it enforces (``memory`` and/or ``pids``)."""

    parent: str
    controllers: frozenset[str]
    version: int


@dataclass
class RunCgroup:
    """The cgroups of one run (one directory per hierarchy); :meth:`close` kills leftovers and removes them."""

    name: str
    dirs: list[tuple[Hierarchy, str]] = field(default_factory=list)

    @property
    def procs_files(self) -> list[str]:
        return [os.path.join(path, "cgroup.procs") for _, path in self.dirs]

    def join(self) -> None:
        """Move the calling process into every cgroup of the run (safe to call between fork and exec)."""
        for procs in self.procs_files:
            fd = os.open(procs, os.O_WRONLY)
            try:
                os.write(fd, b"0")
            finally:
                os.close(fd)

    def memory_killed(self) -> bool:
        """Whether the kernel's OOM killer killed a process of this run (the cgroup's memory ceiling was hit)."""
        for hierarchy, path in self.dirs:
            if "memory" not in hierarchy.controllers:
                continue
            events = "memory.events" if hierarchy.version == 2 else "memory.oom_control"
            if _read_keyed(os.path.join(path, events)).get("oom_kill", 0) > 0:
                return True
        return False

    def scheduler_times(self) -> tuple[float, float] | None:
        """``(on a CPU, queued for one)`` in seconds over the run's live threads (:mod:`..starvation`)."""
        for hierarchy, path in self.dirs:
            times = scheduler_times(os.path.join(path, "tasks" if hierarchy.version == 1 else "cgroup.threads"))
            if times is not None:
                return times
        return None

    def kill_all(self) -> None:
        """SIGKILL whatever is still in the run's cgroups (orphans that left the process group)."""
        for hierarchy, path in self.dirs:
            if hierarchy.version == 2 and os.path.exists(os.path.join(path, "cgroup.kill")):
                try:
                    _write_file(os.path.join(path, "cgroup.kill"), "1")
                    continue
                except OSError:
                    pass
            for _ in range(100):
                pids = _pids_in(path)
                if not pids:
                    break
                for pid in pids:
                    try:
                        os.kill(pid, signal.SIGKILL)
                    except (ProcessLookupError, PermissionError):
                        pass
                time.sleep(0.005)

    def close(self, timeout_s: float = 5.0) -> None:
        """Kill leftovers and remove the directories; a directory still busy past ``timeout_s`` is left behind."""
        self.kill_all()
        deadline = time.monotonic() + timeout_s
        for _, path in self.dirs:
            while True:
                try:
                    os.rmdir(path)
                    break
                except FileNotFoundError:
                    break
                except OSError as exc:
                    if exc.errno != errno.EBUSY or time.monotonic() > deadline:
                        logger.debug("cgroup %s not removed: %s", path, exc)
                        break
                    time.sleep(0.005)
        self.dirs = []


class CgroupManager:
    """Finds the usable hierarchies once, creates the rewardsmith parent there, and makes one cgroup per run."""

    def __init__(self, mounts_file: str = _MOUNTS, own_file: str = _OWN) -> None:
        self._counter = itertools.count()
        self.hierarchies: list[Hierarchy] = []
        self.problems: list[str] = []
        self._discover(mounts_file, own_file)

    @property
    def controllers(self) -> frozenset[str]:
        return frozenset().union(*(h.controllers for h in self.hierarchies))

    @property
    def available(self) -> bool:
        return bool(self.hierarchies)

    def create(self, memory_mb: int, max_tasks: int, cpus: float = CPUS_PER_RUN) -> RunCgroup:
        """A fresh cgroup for one run: at most ``memory_mb`` MiB for all its processes, ``max_tasks`` tasks and
        ``cpus`` CPUs (with the same scheduling weight as every other run)."""
        run = RunCgroup(f"{os.getpid()}-{next(self._counter)}-{secrets.token_hex(4)}")
        limit = str(memory_mb << 20)
        try:
            for hierarchy in self.hierarchies:
                path = os.path.join(hierarchy.parent, run.name)
                os.mkdir(path)
                run.dirs.append((hierarchy, path))
                if "memory" in hierarchy.controllers:
                    if hierarchy.version == 2:
                        _write(path, "memory.max", limit)
                        _write(path, "memory.swap.max", "0", optional=True)
                    else:
                        _write(path, "memory.limit_in_bytes", limit)
                        _write(path, "memory.memsw.limit_in_bytes", limit, optional=True)
                if "pids" in hierarchy.controllers:
                    _write(path, "pids.max", str(max(1, max_tasks)))
                if "cpu" in hierarchy.controllers:
                    quota = str(max(1000, int(cpus * CFS_PERIOD_US)))
                    if hierarchy.version == 2:
                        _write(path, "cpu.max", f"{quota} {CFS_PERIOD_US}")
                    else:
                        _write(path, "cpu.cfs_period_us", str(CFS_PERIOD_US))
                        _write(path, "cpu.cfs_quota_us", quota)
        except OSError:
            run.close()
            raise
        return run

    # -- discovery ---------------------------------------------------------------------------------
    def _discover(self, mounts_file: str, own_file: str) -> None:
        try:
            mounts = Path(mounts_file).read_text().splitlines()
            own = Path(own_file).read_text().splitlines()
        except OSError as exc:
            self.problems.append(f"cannot read cgroup mounts: {exc}")
            return
        own_paths: dict[str, str] = {}
        for line in own:
            parts = line.split(":", 2)
            if len(parts) == 3:
                for controller in parts[1].split(",") if parts[1] else [""]:
                    own_paths[controller] = parts[2]
        v1_mounts: dict[str, str] = {}
        v2_mount = None
        for line in mounts:
            fields = line.split()
            if len(fields) < 4:
                continue
            if fields[2] == "cgroup2":
                v2_mount = fields[1]
            elif fields[2] == "cgroup":
                for option in fields[3].split(","):
                    if option in CONTROLLERS:
                        v1_mounts[option] = fields[1]
        wanted = set(CONTROLLERS)
        if v2_mount is not None and "" in own_paths:
            hierarchy = self._setup_v2(v2_mount, own_paths[""], wanted - set(v1_mounts))
            if hierarchy is not None:
                self.hierarchies.append(hierarchy)
                wanted -= hierarchy.controllers
        for controller in sorted(wanted):
            if controller not in v1_mounts:
                self.problems.append(f"no cgroup hierarchy offers {controller!r}")
                continue
            parent = self._make_parent(v1_mounts[controller], own_paths.get(controller, "/"))
            if parent is not None:
                if controller == "cpu":
                    _write(parent, "cpu.shares", str(1024 * (os.cpu_count() or 1)), optional=True)
                self.hierarchies.append(Hierarchy(parent, frozenset({controller}), 1))

    def _setup_v2(self, mount: str, own_path: str, usable: set[str]) -> Hierarchy | None:
        own_dir = _inside(mount, own_path)
        try:
            available = set(Path(own_dir, "cgroup.controllers").read_text().split())
        except OSError:
            return None
        controllers = available & usable
        if not controllers:
            return None
        try:
            enable = " ".join(f"+{c}" for c in sorted(controllers))
            _write(own_dir, "cgroup.subtree_control", enable)
            parent = self._make_parent(mount, own_path)
            if parent is None:
                return None
            _write(parent, "cgroup.subtree_control", enable)
            if "cpu" in controllers:
                _write(parent, "cpu.weight", str(min(10_000, 100 * (os.cpu_count() or 1))), optional=True)
        except OSError as exc:
            self.problems.append(f"cgroup v2 {sorted(controllers)} not delegated to {own_dir}: {exc.strerror}")
            return None
        return Hierarchy(parent, frozenset(controllers), 2)

    def _make_parent(self, mount: str, own_path: str) -> str | None:
        parent = os.path.join(_inside(mount, own_path), PARENT_NAME)
        try:
            os.makedirs(parent, exist_ok=True)
            probe = os.path.join(parent, f"probe-{os.getpid()}-{secrets.token_hex(4)}")
            os.mkdir(probe)
            os.rmdir(probe)
        except OSError as exc:
            self.problems.append(f"cannot create cgroups under {os.path.dirname(parent)}: {exc.strerror}")
            return None
        _prune_stale(parent)
        return parent


def _inside(mount: str, own_path: str) -> str:
    candidate = os.path.join(mount, own_path.lstrip("/"))
    return candidate if os.path.isdir(candidate) else mount  # a namespaced or bind-mounted hierarchy


def _prune_stale(parent: str) -> None:
    """Remove run cgroups left behind by processes that no longer exist (best effort: busy ones stay)."""
    try:
        entries = os.listdir(parent)
    except OSError:
        return
    for name in entries:
        owner = name.split("-", 1)[0]
        if not owner.isdigit() or int(owner) == os.getpid():
            continue
        try:
            os.kill(int(owner), 0)
            continue
        except ProcessLookupError:
            pass
        except PermissionError:
            continue
        try:
            os.rmdir(os.path.join(parent, name))
        except OSError:
            pass


# Plain descriptors: a run reads and writes a dozen of these small files on its path, where pathlib's parsing
# cost more than the system calls.
def _write_file(path: str, value: str) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o644)
    try:
        os.write(fd, value.encode())
    finally:
        os.close(fd)


def _read_file(path: str) -> str:
    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    try:
        chunks = []
        while chunk := os.read(fd, 65536):
            chunks.append(chunk)
        return b"".join(chunks).decode()
    finally:
        os.close(fd)


def _write(directory: str, name: str, value: str, optional: bool = False) -> None:
    path = os.path.join(directory, name)
    if optional and not os.path.exists(path):
        return
    try:
        _write_file(path, value)
    except OSError:
        if not optional:
            raise


def _read_keyed(path: str) -> dict[str, int]:
    values: dict[str, int] = {}
    try:
        text = _read_file(path)
    except OSError:
        return values
    for line in text.splitlines():
        key, _, value = line.partition(" ")
        if value.strip().isdigit():
            values[key] = int(value)
    return values


def _pids_in(path: str) -> list[int]:
    try:
        return [int(line) for line in _read_file(os.path.join(path, "cgroup.procs")).split()]
    except (OSError, ValueError):
        return []


_manager: CgroupManager | None = None
_manager_lock = threading.Lock()


def cgroup_manager() -> CgroupManager | None:
    """The process-wide manager, or ``None`` when no cgroup controller is usable (logged once)."""
    global _manager
    with _manager_lock:
        if _manager is None:
            _manager = CgroupManager()
            missing = set(CONTROLLERS) - _manager.controllers
            if missing:
                unenforced = []
                if "memory" in missing:
                    unenforced.append("total memory of a run (only RLIMIT_AS per process)")
                if "pids" in missing:
                    unenforced.append("task count of a run (only RLIMIT_NPROC per uid, which root ignores)")
                if "cpu" in missing:
                    unenforced.append("CPU share of a run (a run of many processes can slow its neighbours)")
                logger.warning(
                    "rewardsmith local sandbox: cgroup limits not enforced: %s (%s)",
                    "; ".join(unenforced),
                    "; ".join(_manager.problems) or "no usable cgroup controller",
                )
        return _manager if _manager.available else None
