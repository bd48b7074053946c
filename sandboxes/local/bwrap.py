"""The middle tier: one bubblewrap sandbox per run (no forkserver), usable without root via a user namespace.

Same isolation as the forkserver tier (no network, private PID/IPC/UTS/mount namespaces, read-only system,
empty environment, uid 65534, seccomp via ``bwrap --seccomp``, rlimits) except: the work directory is a fresh
host temp directory bound at ``/work``, and ``RLIMIT_NPROC`` counts every process of the invoking user, so the
cap is "current count + max_processes". Each run pays for a fresh interpreter (no warm fork).
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from rewardkit.sandboxes.base import RunRequest, RunResult, RunStatus
from rewardkit.sandboxes.local.cgroups import CgroupManager
from rewardkit.sandboxes.local.fallback import Preexec, create_cgroup, processes_of, run_prepared, write_workdir
from rewardkit.sandboxes.local.forkserver_host import readonly_system_args

SANDBOX_UID = 65534
V8_EXECUTABLES = frozenset({"node", "nodejs"})  # V8 reserves address space far beyond what it uses


def bwrap_exec_command(
    bwrap: str, workdir: str, argv: list[str], env: dict[str, str], seccomp_fd: int | None
) -> list[str]:
    cmd = [bwrap, "--unshare-all", "--unshare-user", "--die-with-parent", "--new-session", "--cap-drop", "ALL"]
    cmd += ["--uid", str(SANDBOX_UID), "--gid", str(SANDBOX_UID)]
    cmd += readonly_system_args()
    cmd += ["--bind", workdir, "/work", "--chdir", "/work", "--clearenv"]
    for key, value in env.items():
        cmd += ["--setenv", key, value]
    if seccomp_fd is not None:
        cmd += ["--seccomp", str(seccomp_fd)]
    return [*cmd, "--", *argv]


def run_in_bwrap(
    request: RunRequest,
    env: dict[str, str],
    bwrap: str,
    seccomp_bpf: bytes | None,
    cgroups: CgroupManager | None = None,
) -> RunResult:
    """Run ``request`` in a fresh bwrap sandbox; the program's whole PID namespace dies with the run."""
    with tempfile.TemporaryDirectory(prefix="rewardkit-run-") as workdir:
        os.chmod(workdir, 0o755)
        error = write_workdir(workdir, request.files, None)
        if error:
            return RunResult(status=RunStatus.SANDBOX_ERROR, message=error)
        try:
            cgroup = create_cgroup(cgroups, request, extra_tasks=2)  # bwrap and its init join the cgroup too
        except OSError as exc:
            return RunResult(status=RunStatus.SANDBOX_ERROR, message=f"cannot create the run's cgroup: {exc}")
        seccomp_fd = None
        if seccomp_bpf:
            seccomp_fd, writer = os.pipe()
            os.write(writer, seccomp_bpf)
            os.close(writer)
        try:
            limits = request.limits
            memory = limits.memory_mb
            if Path(request.argv[0]).name in V8_EXECUTABLES:
                memory = max(2 * memory, memory + 2048)
            nproc = processes_of(os.getuid()) + limits.max_processes + 2  # + bwrap's own helpers
            argv = bwrap_exec_command(bwrap, workdir, list(request.argv), env, seccomp_fd)
            preexec = Preexec(limits, None, nproc, address_space_mb=memory, cgroup=cgroup)
            fds = (seccomp_fd,) if seccomp_fd is not None else ()
            result = run_prepared(argv, workdir, request, {}, preexec, fds, exit_code_encodes_signal=True)
            # bwrap's rusage does not include the sandboxed program's: report "unknown" rather than a wrong number
            return result.model_copy(update={"cpu_time_s": None})
        finally:
            if seccomp_fd is not None:
                os.close(seccomp_fd)
            if cgroup is not None:
                cgroup.close()
