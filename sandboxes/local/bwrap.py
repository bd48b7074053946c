"""The middle tier: one bubblewrap sandbox per run (no forkserver), usable without root via a user namespace.

Same isolation as the forkserver tier (no network, private PID/IPC/UTS/mount namespaces, read-only system,
empty environment, uid 65534, seccomp via ``bwrap --seccomp``, rlimits) and the same writable areas: ``/work``,
``/tmp`` and ``/dev/shm`` are fresh size-capped tmpfs that vanish with the run, and the sandbox's own root and
``/dev`` are remounted read-only, so nothing a run writes lands on the host's disk or outlives it. The request's
files are copied in by bwrap from memory file descriptors (``--file``); ``fetch_files`` are read back by a small
in-sandbox parent (``fetch_after_run_inside.py``) after the program ends. ``RLIMIT_NPROC`` counts every process
of the invoking user, so the cap is "current count + max_processes". Each run pays for a fresh interpreter.
"""

from __future__ import annotations

import base64
import binascii
import functools
import json
import os
import sys
from collections.abc import Sequence
from importlib.resources import files as package_files
from pathlib import Path

from rewardsmith.sandboxes.base import RunRequest, RunResult, RunStatus
from rewardsmith.sandboxes.local.cgroups import CgroupManager
from rewardsmith.sandboxes.local.fallback import Preexec, create_cgroup, processes_of, run_prepared
from rewardsmith.sandboxes.local.forkserver_host import FETCH_BUDGET_BYTES, readonly_system_args

SANDBOX_UID = 65534
V8_EXECUTABLES = frozenset({"node", "nodejs"})  # V8 reserves address space far beyond what it uses


#: The in-sandbox parent that reads ``fetch_files`` back after the program (package data).
FETCH_SCRIPT = Path(str(package_files("rewardsmith.sandboxes.local").joinpath("fetch_after_run_inside.py")))


@functools.cache
def _fetch_source() -> str:
    return FETCH_SCRIPT.read_text(encoding="utf-8")


def tmpfs_bytes(request: RunRequest) -> int:
    """Size cap of each writable tmpfs: the request's files plus room to write (as the forkserver tier gives)."""
    given = sum(len(c.encode() if isinstance(c, str) else c) for c in request.files.values())
    return given + (max(16, 4 * request.limits.file_size_mb) << 20)


def work_paths(files: dict[str, str | bytes]) -> list[tuple[str, str]]:
    """(relative path, sandbox path) of each request file; raises ``ValueError`` for a path that escapes /work."""
    paths = []
    for relpath in files:
        target = os.path.normpath(os.path.join("/work", relpath))
        if not target.startswith("/work/"):
            raise ValueError(f"file path escapes workdir: {relpath!r}")
        paths.append((relpath, target))
    return paths


def bwrap_exec_command(
    bwrap: str,
    argv: list[str],
    env: dict[str, str],
    seccomp_fd: int | None,
    size: int,
    file_fds: Sequence[tuple[int, str]] = (),
) -> list[str]:
    """One run's bwrap: its writable areas are tmpfs of ``size`` bytes each; ``file_fds``: (fd, sandbox path)
    of every request file, copied in by bwrap. Root and ``/dev`` are remounted read-only at the end."""
    cmd = [bwrap, "--unshare-all", "--unshare-user", "--die-with-parent", "--new-session", "--cap-drop", "ALL"]
    cmd += ["--uid", str(SANDBOX_UID), "--gid", str(SANDBOX_UID)]
    cmd += readonly_system_args(tmpfs_size=size)
    cmd += ["--size", str(size), "--perms", "1777", "--tmpfs", "/dev/shm"]
    cmd += ["--size", str(size), "--tmpfs", "/work"]
    made = {"/work"}
    for fd, target in file_fds:
        for parent in reversed(Path(target).parents):
            if str(parent) not in made and str(parent).startswith("/work/"):
                made.add(str(parent))
                cmd += ["--dir", str(parent)]
        cmd += ["--perms", "0755", "--file", str(fd), target]
    cmd += ["--remount-ro", "/dev", "--remount-ro", "/", "--chdir", "/work", "--clearenv"]
    for key, value in env.items():
        cmd += ["--setenv", key, value]
    if seccomp_fd is not None:
        cmd += ["--seccomp", str(seccomp_fd)]
    return [*cmd, "--", *argv]


def fetching_argv(argv: list[str], out_fd: int, paths: list[str]) -> list[str]:
    """``argv`` run under the in-sandbox parent that writes ``paths`` back to ``out_fd`` after the program."""
    python = str(Path(sys.executable).resolve())
    source = _fetch_source()
    return [python, "-I", "-S", "-c", source, str(out_fd), str(FETCH_BUDGET_BYTES), json.dumps(paths), "--", *argv]


def _memfd(name: str, content: bytes) -> int:
    fd = os.memfd_create(name, 0)
    view = memoryview(content)
    while view:
        view = view[os.write(fd, view) :]
    os.lseek(fd, 0, os.SEEK_SET)
    return fd


def _read_fetched(fd: int) -> dict[str, bytes]:
    """The files the in-sandbox parent wrote back; anything malformed or oversized reads as no files."""
    size = os.fstat(fd).st_size
    if not size or size > 2 * FETCH_BUDGET_BYTES:
        return {}
    os.lseek(fd, 0, os.SEEK_SET)
    chunks = []
    while chunk := os.read(fd, 1 << 20):
        chunks.append(chunk)
    try:
        listed = json.loads(b"".join(chunks))
        return {str(path): base64.b64decode(data, validate=True) for path, data in listed.items()}
    except (ValueError, AttributeError, TypeError, binascii.Error):
        return {}


def run_in_bwrap(
    request: RunRequest,
    env: dict[str, str],
    bwrap: str,
    seccomp_bpf: bytes | None,
    cgroups: CgroupManager | None = None,
) -> RunResult:
    """Run ``request`` in a fresh bwrap sandbox; the program's whole PID namespace dies with the run."""
    try:
        paths = work_paths(request.files)
    except ValueError as exc:
        return RunResult(status=RunStatus.SANDBOX_ERROR, message=str(exc))
    fds: list[int] = []
    cgroup = None
    try:
        file_fds = []
        for relpath, target in paths:
            content = request.files[relpath]
            fds.append(_memfd("rk-file", content.encode() if isinstance(content, str) else content))
            file_fds.append((fds[-1], target))
        seccomp_fd = None
        if seccomp_bpf:
            seccomp_fd = _memfd("rk-seccomp", seccomp_bpf)
            fds.append(seccomp_fd)
        argv = list(request.argv)
        fetch_fd = None
        if request.fetch_files:
            fetch_fd = os.memfd_create("rk-fetch", 0)
            fds.append(fetch_fd)
            argv = fetching_argv(argv, fetch_fd, list(request.fetch_files))
        try:
            cgroup = create_cgroup(cgroups, request, extra_tasks=3)  # bwrap, its init (and the fetch parent)
        except OSError as exc:
            return RunResult(status=RunStatus.SANDBOX_ERROR, message=f"cannot create the run's cgroup: {exc}")
        limits = request.limits
        memory = limits.memory_mb
        if Path(request.argv[0]).name in V8_EXECUTABLES:
            memory = max(2 * memory, memory + 2048)
        nproc = processes_of(os.getuid()) + limits.max_processes + 3  # + bwrap's own helpers
        command = bwrap_exec_command(bwrap, argv, env, seccomp_fd, tmpfs_bytes(request), file_fds)
        # bwrap copies the request's files in under this limit too: a shipped file (a compiled binary) may be larger
        largest = max((os.fstat(fd).st_size for fd, _ in file_fds), default=0)
        fsize = max(limits.file_size_mb << 20, largest + 1)
        preexec = Preexec(limits, None, nproc, address_space_mb=memory, cgroup=cgroup, file_size_bytes=fsize)
        plain = request.model_copy(update={"fetch_files": []})  # read back from the sandbox, never from a host dir
        result = run_prepared(command, "/", plain, {}, preexec, tuple(fds), exit_code_encodes_signal=True)
        fetched = _read_fetched(fetch_fd) if fetch_fd is not None else {}
        # bwrap's rusage does not include the sandboxed program's: report "unknown" rather than a wrong number
        return result.model_copy(update={"cpu_time_s": None, "files": fetched})
    finally:
        for fd in fds:
            os.close(fd)
        if cgroup is not None:
            cgroup.close()
