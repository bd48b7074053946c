"""The weak tier: a plain subprocess under rlimits, a fresh temp directory, an empty environment and (as root)
an unprivileged uid. No namespaces: the host filesystem stays readable and the network reachable, and an
orphan that calls ``setsid`` escapes the process-group kill. Used only when bubblewrap cannot run;
:class:`~rewardkit.sandboxes.local.LocalSandbox` logs a warning once when it falls back to it.
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

from rewardkit.sandboxes.base import Limits, RunRequest, RunResult, RunStatus
from rewardkit.sandboxes.local_forkserver import classify_exit


class _Preexec:
    """Runs in the child between fork and exec (a class, so the limits travel without a closure)."""

    def __init__(self, limits: Limits, uid: int | None) -> None:
        self.limits = limits
        self.uid = uid

    def __call__(self) -> None:
        mb = 1 << 20
        limits = self.limits
        cpu = max(1, int(limits.cpu_time_s + 0.999))
        resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
        resource.setrlimit(resource.RLIMIT_AS, (limits.memory_mb * mb, limits.memory_mb * mb))
        resource.setrlimit(resource.RLIMIT_FSIZE, (limits.file_size_mb * mb, limits.file_size_mb * mb))
        resource.setrlimit(resource.RLIMIT_NPROC, (limits.max_processes, limits.max_processes))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        if self.uid is not None:
            os.setgroups([])
            os.setresgid(self.uid, self.uid, self.uid)
            os.setresuid(self.uid, self.uid, self.uid)


def run_in_subprocess(request: RunRequest, env: dict[str, str]) -> RunResult:
    """Run ``request`` in a bare subprocess with rlimits; the whole process group is killed at the end."""
    uid = 100_000 + secrets.randbelow(1 << 30) if os.geteuid() == 0 else None
    with tempfile.TemporaryDirectory(prefix="rewardkit-run-") as workdir:
        for relpath, content in request.files.items():
            path = Path(workdir, relpath).resolve()
            if not str(path).startswith(str(Path(workdir).resolve()) + os.sep):
                return RunResult(status=RunStatus.SANDBOX_ERROR, message=f"file path escapes workdir: {relpath!r}")
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(content.encode() if isinstance(content, str) else content)
            path.chmod(0o755)
        if uid is not None:
            for path in [Path(workdir), *Path(workdir).rglob("*")]:
                os.chown(path, uid, uid)
        env = {**env, "HOME": workdir, "TMPDIR": workdir}
        started = time.monotonic()
        try:
            process = subprocess.Popen(
                request.argv,
                cwd=workdir,
                env=env,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                start_new_session=True,
                preexec_fn=_Preexec(request.limits, uid),
            )
        except (OSError, subprocess.SubprocessError) as exc:
            return RunResult(status=RunStatus.SANDBOX_ERROR, message=f"could not start {request.argv[0]!r}: {exc}")
        stdin = request.stdin.encode() if isinstance(request.stdin, str) else request.stdin
        stdout, stderr, killed = _pump(process, stdin, started + request.limits.wall_time_s, request.limits)
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        _, status, usage = os.wait4(process.pid, 0)
        process.returncode = 0
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
        return classify_exit(status, killed, request.limits, common)


def _pump(process: subprocess.Popen, stdin: bytes, deadline: float, limits: Limits) -> tuple[bytes, bytes, str | None]:
    buffers = {process.stdout.fileno(): bytearray(), process.stderr.fileno(): bytearray()}
    readers = list(buffers)
    pending = memoryview(stdin)
    writers = [process.stdin.fileno()]
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
                process.stdin.close()
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
