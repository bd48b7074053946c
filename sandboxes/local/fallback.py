"""The weak tier: a plain subprocess under rlimits, a fresh temp directory, an empty environment and (as root)
an unprivileged uid. No namespaces: the host filesystem stays readable and the network reachable, and an
orphan that calls ``setsid`` escapes the process-group kill. Used only when the caller opted in with
``isolation="weak"``; :class:`~rewardsmith.sandboxes.local.backend.LocalSandbox` then says so in a warning and in
``isolation_warning``.
"""

from __future__ import annotations

import os
import resource
import secrets
import select
import signal
import subprocess
import tempfile
import time
from pathlib import Path

from rewardsmith.sandboxes.base import Limits, RunRequest, RunResult, RunStatus
from rewardsmith.sandboxes.local.cgroups import CgroupManager, RunCgroup
from rewardsmith.sandboxes.local.forkserver_host import classify_exit, piped


class Preexec:
    """Runs in the child between fork and exec (a class, so the limits travel without a closure)."""

    def __init__(
        self,
        limits: Limits,
        uid: int | None,
        nproc: int,
        address_space_mb: int | None = None,
        cgroup: RunCgroup | None = None,
        file_size_bytes: int | None = None,
    ) -> None:
        self.limits = limits
        self.uid = uid
        self.nproc = nproc
        self.address_space_mb = address_space_mb or limits.memory_mb
        self.cgroup = cgroup
        self.file_size_bytes = file_size_bytes or limits.file_size_mb << 20

    def __call__(self) -> None:
        if self.cgroup is not None:
            self.cgroup.join()
        mb = 1 << 20
        limits = self.limits
        cpu = max(1, int(limits.cpu_time_s + 0.999))
        resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
        resource.setrlimit(resource.RLIMIT_AS, (self.address_space_mb * mb, self.address_space_mb * mb))
        resource.setrlimit(resource.RLIMIT_FSIZE, (self.file_size_bytes, self.file_size_bytes))
        resource.setrlimit(resource.RLIMIT_NPROC, (self.nproc, self.nproc))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        if self.uid is not None:
            os.setgroups([])
            os.setresgid(self.uid, self.uid, self.uid)
            os.setresuid(self.uid, self.uid, self.uid)


def processes_of(uid: int) -> int:
    """How many processes ``uid`` owns now (RLIMIT_NPROC counts them all, not only the run's)."""
    count = 0
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                count += entry.stat().st_uid == uid
            except OSError:
                continue
    return count


def write_workdir(workdir: str, files: dict[str, str | bytes], owner: int | None) -> str | None:
    """Write the request's files under ``workdir``; returns an error message for a path that escapes it."""
    root = Path(workdir).resolve()
    for relpath, content in files.items():
        path = Path(root, relpath).resolve()
        if not str(path).startswith(str(root) + os.sep):
            return f"file path escapes workdir: {relpath!r}"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content.encode() if isinstance(content, str) else content)
        path.chmod(0o755)
    if owner is not None:
        for path in [root, *root.rglob("*")]:
            os.chown(path, owner, owner)
    return None


def run_prepared(
    argv: list[str],
    workdir: str,
    request: RunRequest,
    env: dict[str, str],
    preexec: Preexec,
    pass_fds: tuple[int, ...] = (),
    exit_code_encodes_signal: bool = False,
) -> RunResult:
    """Start ``argv`` in its own session, feed stdin, collect capped output, kill the session, classify.

    ``exit_code_encodes_signal``: the direct child is a wrapper (bwrap) that reports a signal death of the
    program as exit code ``128 + signal``.
    """
    started = time.monotonic()
    try:
        process = subprocess.Popen(
            argv,
            cwd=workdir,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
            preexec_fn=preexec,
            pass_fds=pass_fds,
        )
    except (OSError, subprocess.SubprocessError) as exc:
        return RunResult(status=RunStatus.SANDBOX_ERROR, message=f"could not start {argv[0]!r}: {exc}")
    stdin = request.stdin.encode() if isinstance(request.stdin, str) else request.stdin
    stdout, stderr, killed = _pump(process, stdin, started + request.limits.wall_time_s, request.limits)
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    memory_killed = False
    if preexec.cgroup is not None:
        preexec.cgroup.kill_all()  # also the orphans that left the process group
        memory_killed = preexec.cgroup.memory_killed()
    _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    if exit_code_encodes_signal and 128 < process.returncode < 128 + 65:
        status = process.returncode - 128  # a wait status "killed by signal N"
    for stream in (process.stdout, process.stderr):
        if stream is not None:
            stream.close()
    files = {}
    for relpath in request.fetch_files:
        path = Path(workdir, relpath)
        if path.is_file() and not path.is_symlink():
            files[relpath] = path.read_bytes()
    common = {
        "stdout": stdout,
        "stderr": stderr,
        "wall_time_s": time.monotonic() - started,
        "cpu_time_s": usage.ru_utime + usage.ru_stime,
        "files": files,
    }
    return classify_exit(status, killed, request.limits, common, memory_killed)


def create_cgroup(cgroups: CgroupManager | None, request: RunRequest, extra_tasks: int = 0) -> RunCgroup | None:
    """The run's cgroup (``None`` without cgroup support); raises ``OSError`` when it cannot be created."""
    if cgroups is None:
        return None
    return cgroups.create(request.limits.memory_mb, request.limits.max_processes + extra_tasks)


def run_in_subprocess(request: RunRequest, env: dict[str, str], cgroups: CgroupManager | None = None) -> RunResult:
    """Run ``request`` in a bare subprocess with rlimits; the whole process group is killed at the end."""
    uid = 100_000 + secrets.randbelow(1 << 30) if os.geteuid() == 0 else None
    nproc = request.limits.max_processes
    if uid is None:
        nproc += processes_of(os.getuid())
    with tempfile.TemporaryDirectory(prefix="rewardsmith-run-") as workdir:
        error = write_workdir(workdir, request.files, uid)
        if error:
            return RunResult(status=RunStatus.SANDBOX_ERROR, message=error)
        env = {**env, "HOME": workdir, "TMPDIR": workdir}
        try:
            cgroup = create_cgroup(cgroups, request)
        except OSError as exc:
            return RunResult(status=RunStatus.SANDBOX_ERROR, message=f"cannot create the run's cgroup: {exc}")
        try:
            preexec = Preexec(request.limits, uid, nproc, cgroup=cgroup)
            return run_prepared(list(request.argv), workdir, request, env, preexec)
        finally:
            if cgroup is not None:
                cgroup.close()


def _pump(process: subprocess.Popen, stdin: bytes, deadline: float, limits: Limits) -> tuple[bytes, bytes, str | None]:
    buffers = {piped(process.stdout).fileno(): bytearray(), piped(process.stderr).fileno(): bytearray()}
    readers = list(buffers)
    pending = memoryview(stdin)
    writers = [piped(process.stdin).fileno()]
    for fd in readers + writers:
        os.set_blocking(fd, False)
    killed = None
    while readers:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            killed = "wall_time"
            break
        ready_r, ready_w, _ = select.select(readers, writers, [], min(remaining, 1.0))
        for fd in ready_w:
            try:
                pending = pending[os.write(fd, pending[:65536]) :]
            except BlockingIOError:
                continue
            except BrokenPipeError:
                pending = pending[:0]
            if not pending:
                piped(process.stdin).close()
                writers = []
        for fd in ready_r:
            chunk = os.read(fd, 65536)
            if not chunk:
                readers.remove(fd)
                continue
            room = limits.output_bytes - len(buffers[fd])
            buffers[fd] += chunk[: max(room, 0)]
            if len(chunk) > room:
                killed = "output_limit"
        if killed:
            break
    stdout, stderr = (bytes(b) for b in buffers.values())
    return stdout, stderr, killed
