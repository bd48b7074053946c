"""Host side of the bubblewrap forkserver: start it, talk to it, read its verdict.

One :class:`ForkserverProcess` is one bwrap sandbox holding a warm interpreter (``forkserver_inside.py``) that serves
one run at a time; :class:`LocalSandbox` keeps a small pool of them. The bwrap command line is built by a pure
function so the isolation it asks for can be read (and tested) in one place.
"""

from __future__ import annotations

import base64
import functools
import json
import os
import select
import shutil
import signal
import struct
import subprocess
import sys
import time
from collections.abc import Sequence
from importlib.resources import files
from pathlib import Path
from typing import IO, Any

from rewardsmith.sandboxes.base import Limits, RunRequest, RunResult, RunStatus

#: The in-sandbox program, shipped as package data and bound read-only into every sandbox.
FORKSERVER_SCRIPT = Path(str(files("rewardsmith.sandboxes.local").joinpath("forkserver_inside.py")))
SANDBOX_SCRIPT_PATH = "/opt/rewardsmith/forkserver.py"
#: Capabilities the forkserver keeps to build each run (mounts, uid switch, killing the run); the program has none.
FORKSERVER_CAPS = ("CAP_SYS_ADMIN", "CAP_SETUID", "CAP_SETGID", "CAP_KILL", "CAP_CHOWN")
FETCH_BUDGET_BYTES = 64 << 20
MEMORY_ERROR_MARKERS = (b"MemoryError", b"std::bad_alloc", b"JavaScript heap out of memory", b"Cannot allocate memory")


class ForkserverError(RuntimeError):
    """The sandbox machinery failed (not the program): maps to ``RunStatus.SANDBOX_ERROR``."""


def piped(stream: IO[bytes] | None) -> IO[bytes]:
    """A pipe of a process started with ``subprocess.PIPE`` for it (``Popen`` types every pipe as optional)."""
    if stream is None:
        raise ForkserverError("the process was started without this pipe")
    return stream


def python_roots() -> list[str]:
    """Directories the sandboxed interpreter needs that live outside ``/usr`` (pyenv, venvs, conda)."""
    roots = []
    for prefix in {sys.base_prefix, sys.prefix, str(Path(sys.executable).resolve().parent.parent)}:
        if prefix and not prefix.startswith("/usr/") and prefix != "/usr" and Path(prefix).is_dir():
            roots.append(prefix)
    return sorted(set(roots))


@functools.cache
def sandbox_path_env() -> str:
    python_bin = str(Path(sys.executable).resolve().parent)
    return ":".join(dict.fromkeys([python_bin, "/usr/local/bin", "/usr/bin", "/bin"]))


def readonly_system_args(tmpfs_size: int | None = None) -> list[str]:
    """bwrap mounts of a minimal read-only system: ``/usr`` (+ merged-usr links), loader config, the Python;
    ``tmpfs_size``: the byte cap of the ``/tmp`` tmpfs (none: the forkserver's own, never a run's)."""
    args = ["--ro-bind", "/usr", "/usr"]
    for top in ("bin", "sbin", "lib", "lib32", "lib64", "libx32"):
        host = Path("/") / top
        if host.is_symlink():
            args += ["--symlink", os.readlink(host), f"/{top}"]
        elif host.is_dir():
            args += ["--ro-bind", str(host), f"/{top}"]
    args += ["--perms", "0755", "--dir", "/etc"]
    for etc in ("/etc/alternatives", "/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/localtime"):
        args += ["--ro-bind-try", etc, etc]
    for java in sorted(Path("/etc").glob("java-*")):  # the JDK's conf/ links its security settings here
        args += ["--ro-bind-try", str(java), str(java)]
    made: set[str] = set()
    for root in python_roots():
        for parent in reversed(Path(root).parents[:-1]):  # bwrap would create them 0700: unreadable after setuid
            if str(parent) not in made:
                made.add(str(parent))
                args += ["--perms", "0755", "--dir", str(parent)]
        args += ["--ro-bind", root, root]
    size = ["--size", str(tmpfs_size)] if tmpfs_size else []
    return [*args, "--proc", "/proc", "--dev", "/dev", *size, "--tmpfs", "/tmp"]


def bwrap_command(bwrap: str, python: str) -> list[str]:
    """The bwrap invocation of one forkserver: no network, private IPC/UTS/PID, read-only system, empty env."""
    cmd = [bwrap, "--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts", "--unshare-cgroup-try"]
    cmd += ["--new-session", "--cap-drop", "ALL"]
    for cap in FORKSERVER_CAPS:
        cmd += ["--cap-add", cap]
    cmd += readonly_system_args()
    cmd += ["--dir", "/work", "--ro-bind", str(FORKSERVER_SCRIPT), SANDBOX_SCRIPT_PATH]
    cmd += ["--clearenv", "--setenv", "PATH", sandbox_path_env(), "--setenv", "LANG", "C.UTF-8", "--chdir", "/"]
    # every warm fork hashes strings alike, so a test iterating a set sees one order in every run
    cmd += ["--setenv", "PYTHONHASHSEED", "0"]
    # not -I: it would ignore PYTHONHASHSEED; the environment is empty but for the variables set here
    cmd += [python, "-s", *(["-P"] if sys.version_info >= (3, 11) else []), SANDBOX_SCRIPT_PATH]
    return cmd


def find_bwrap() -> str | None:
    return shutil.which("bwrap")


class ForkserverProcess:
    """One bwrap sandbox with a warm forkserver inside; serves one request at a time."""

    def __init__(
        self,
        bwrap: str,
        seccomp_bpf: bytes | None,
        start_timeout_s: float = 20.0,
        cgroup_parents: Sequence[str] = (),
        warm_modules: dict[str, str] | None = None,
        warm_scripts: Sequence[str] = (),
    ) -> None:
        python = str(Path(sys.executable).resolve())
        # The runs join their cgroups through these descriptors: the cgroup tree is never mounted in the sandbox.
        cgroup_fds = [os.open(parent, os.O_RDONLY | os.O_DIRECTORY) for parent in cgroup_parents]
        try:
            self.process = subprocess.Popen(
                bwrap_command(bwrap, python),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                start_new_session=True,
                close_fds=True,
                pass_fds=cgroup_fds,
            )
        finally:
            for fd in cgroup_fds:
                os.close(fd)
        try:
            seccomp = base64.b64encode(seccomp_bpf).decode() if seccomp_bpf else None
            init = {"seccomp": seccomp, "cgroup_fds": cgroup_fds, "warm_modules": dict(warm_modules or {})}
            self._send({**init, "warm_scripts": list(warm_scripts)})
            ready = self._receive(time.monotonic() + start_timeout_s)
        except ForkserverError:
            self.close()
            raise
        if not ready.get("ready"):
            self.close()
            raise ForkserverError(f"forkserver did not start: {ready}")

    def call(self, payload: dict[str, Any], timeout_s: float) -> dict[str, Any]:
        self._send(payload)
        return self._receive(time.monotonic() + timeout_s)

    def alive(self) -> bool:
        return self.process.poll() is None

    def close(self) -> None:
        if self.process.poll() is None:
            try:
                piped(self.process.stdin).close()
            except OSError:
                pass
            try:
                os.killpg(self.process.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        try:
            self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.process.kill()
        for stream in (self.process.stdout, self.process.stderr):
            if stream is not None:
                stream.close()

    def _send(self, obj: dict[str, Any]) -> None:
        body = json.dumps(obj).encode()
        try:
            to_server = piped(self.process.stdin)
            to_server.write(struct.pack(">I", len(body)) + body)
            to_server.flush()
        except (BrokenPipeError, OSError, ValueError) as exc:
            raise ForkserverError(f"forkserver is gone: {exc}; {self._stderr_tail()}") from None

    def _receive(self, deadline: float) -> dict[str, Any]:
        header = self._read_exact(4, deadline)
        return json.loads(self._read_exact(struct.unpack(">I", header)[0], deadline))

    def _read_exact(self, n: int, deadline: float) -> bytes:
        fd = piped(self.process.stdout).fileno()
        chunks: list[bytes] = []
        while n:
            remaining = deadline - time.monotonic()
            if remaining <= 0 or not select.select([fd], [], [], remaining)[0]:
                raise ForkserverError("forkserver did not answer in time")
            chunk = os.read(fd, n)
            if not chunk:
                raise ForkserverError(f"forkserver exited (code {self.process.poll()}); {self._stderr_tail()}")
            chunks.append(chunk)
            n -= len(chunk)
        return b"".join(chunks)

    def _stderr_tail(self) -> str:
        stream = self.process.stderr
        if stream is None or self.process.poll() is None:
            return ""
        try:
            return stream.read()[-500:].decode("utf-8", "replace")
        except (OSError, ValueError):
            return ""


def request_payload(request: RunRequest, uid: int, env: dict[str, str], cgroup: str | None = None) -> dict[str, Any]:
    """What the forkserver needs for one run; bytes travel base64-encoded. ``cgroup``: the run's cgroup name."""
    limits = request.limits
    return {
        "argv": list(request.argv),
        "files": {path: _b64(content) for path, content in request.files.items()},
        "stdin": _b64(request.stdin),
        "limits": limits.model_dump(),
        "uid": uid,
        "env": env,
        "tmpfs_mb": max(16, 4 * limits.file_size_mb),
        "fetch_files": list(request.fetch_files),
        "fetch_bytes": FETCH_BUDGET_BYTES,
        "cgroup": cgroup,
    }


def result_from_report(report: dict[str, Any], limits: Limits, memory_killed: bool = False) -> RunResult:
    """Turn the forkserver's raw facts into a :class:`RunResult`. Pure; the program cannot write these facts.

    ``memory_killed``: the run's cgroup reports an OOM kill (read by the host after the run).
    """
    stdout = base64.b64decode(report.get("stdout") or "")
    stderr = base64.b64decode(report.get("stderr") or "")
    common = {
        "stdout": stdout,
        "stderr": stderr,
        "wall_time_s": float(report.get("wall_time_s") or 0.0),
        "cpu_time_s": report.get("cpu_time_s"),
        "files": {path: base64.b64decode(data) for path, data in (report.get("files") or {}).items()},
    }
    if report.get("supervisor_error"):
        return RunResult(status=RunStatus.SANDBOX_ERROR, message=str(report["supervisor_error"]), **common)
    if report.get("setup_error"):
        return RunResult(status=RunStatus.SANDBOX_ERROR, message=str(report["setup_error"]), **common)
    if report.get("unfinished") or "wait_status" not in report:
        return RunResult(status=RunStatus.SANDBOX_ERROR, message="the run did not report an exit status", **common)
    return classify_exit(int(report["wait_status"]), report.get("killed"), limits, common, memory_killed)


def classify_exit(
    wait_status: int, killed: str | None, limits: Limits, common: dict[str, Any], memory_killed: bool = False
) -> RunResult:
    """The verdict of one finished run. ``memory_killed``: the kernel OOM-killed a process of the run's cgroup
    (a fact from outside the program; without cgroups the stderr markers of an allocation failure are used)."""
    exit_code = os.waitstatus_to_exitcode(wait_status)
    code, sig = (exit_code, None) if exit_code >= 0 else (None, -exit_code)
    cpu = common.get("cpu_time_s") or 0.0
    if killed == "wall_time":
        return RunResult(status=RunStatus.TIMEOUT, exit_code=code, signal=sig, message="wall-clock limit", **common)
    if killed == "output_limit":
        message = f"output over {limits.output_bytes} bytes"
        return RunResult(status=RunStatus.OUTPUT_LIMIT, exit_code=code, signal=sig, message=message, **common)
    if memory_killed:
        message = f"memory limit ({limits.memory_mb} MiB for the whole run)"
        return RunResult(status=RunStatus.MEMORY, exit_code=code, signal=sig, message=message, **common)
    if sig == signal.SIGXCPU or (sig == signal.SIGKILL and cpu >= limits.cpu_time_s):
        return RunResult(status=RunStatus.TIMEOUT, exit_code=code, signal=sig, message="CPU-time limit", **common)
    if code == 0:
        return RunResult(status=RunStatus.OK, exit_code=0, **common)
    tail = common["stderr"][-4096:]
    if any(marker in tail for marker in MEMORY_ERROR_MARKERS):
        return RunResult(status=RunStatus.MEMORY, exit_code=code, signal=sig, message="memory limit", **common)
    message = f"exit code {code}" if sig is None else f"killed by signal {sig}"
    return RunResult(status=RunStatus.RUNTIME_ERROR, exit_code=code, signal=sig, message=message, **common)


def _b64(content: str | bytes) -> str:
    data = content.encode() if isinstance(content, str) else content
    return base64.b64encode(data).decode("ascii")
