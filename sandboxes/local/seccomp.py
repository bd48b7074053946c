"""A seccomp deny-list for untrusted programs, compiled to raw BPF on the host.

The filter is built here with ``pyseccomp`` (ctypes over ``libseccomp.so.2``) and shipped as bytes to the
forkserver inside the sandbox, which loads it with ``prctl`` just before the untrusted program starts: the
sandbox image then needs neither libseccomp nor any Python package. Everything not listed stays allowed;
the namespaces, the dropped uid and the empty capability set already do the heavy lifting, the filter
closes the kernel interfaces an unprivileged process could still reach (ptrace, new namespaces, keyrings,
BPF, io_uring, TIOCSTI, sockets other than AF_UNIX).
"""

from __future__ import annotations

import errno
import logging
import tempfile

logger = logging.getLogger(__name__)

#: Syscalls answered with EPERM: process inspection, namespace and mount games, kernel attack surface.
DENIED_SYSCALLS = (
    "ptrace",
    "process_vm_readv",
    "process_vm_writev",
    "kcmp",
    "pidfd_getfd",
    "mount",
    "umount2",
    "pivot_root",
    "chroot",
    "unshare",
    "setns",
    "keyctl",
    "add_key",
    "request_key",
    "bpf",
    "perf_event_open",
    "userfaultfd",
    "io_uring_setup",
    "io_uring_enter",
    "io_uring_register",
    "init_module",
    "finit_module",
    "delete_module",
    "kexec_load",
    "kexec_file_load",
    "reboot",
    "swapon",
    "swapoff",
    "syslog",
    "acct",
    "settimeofday",
    "clock_settime",
    "clock_adjtime",
    "adjtimex",
    "quotactl",
    "open_by_handle_at",
    "name_to_handle_at",
    "lookup_dcookie",
    "vhangup",
    "fanotify_init",
    "move_mount",
    "open_tree",
    "fsopen",
    "fsmount",
    "fspick",
)

#: Namespace flags a plain ``clone`` must not carry (clone3 is refused with ENOSYS so libc falls back to clone).
_CLONE_NAMESPACE_FLAGS = (0x00020000, 0x02000000, 0x04000000, 0x08000000, 0x10000000, 0x20000000, 0x40000000)
_TIOCSTI = 0x5412
_AF_UNIX = 1


def build_seccomp_bpf(allow_network: bool = False) -> bytes | None:
    """Raw BPF program (``struct sock_filter`` array) of the deny-list, or ``None`` if libseccomp is missing."""
    try:
        import pyseccomp as seccomp
    except Exception as exc:  # missing package or missing libseccomp.so.2
        logger.debug("pyseccomp unavailable: %s", exc)
        return None
    deny = seccomp.ERRNO(errno.EPERM)
    filt = seccomp.SyscallFilter(seccomp.ALLOW)
    for name in DENIED_SYSCALLS:
        try:
            filt.add_rule(deny, name)
        except Exception:  # syscall unknown on this architecture
            logger.debug("seccomp: no syscall %s here", name)
    filt.add_rule(seccomp.ERRNO(errno.ENOSYS), "clone3")
    for flag in _CLONE_NAMESPACE_FLAGS:
        filt.add_rule(deny, "clone", seccomp.Arg(0, seccomp.MASKED_EQ, flag, flag))
    filt.add_rule(deny, "ioctl", seccomp.Arg(1, seccomp.MASKED_EQ, 0xFFFFFFFF, _TIOCSTI))
    if not allow_network:
        filt.add_rule(seccomp.ERRNO(errno.EACCES), "socket", seccomp.Arg(0, seccomp.NE, _AF_UNIX))
        filt.add_rule(seccomp.ERRNO(errno.EACCES), "socketpair", seccomp.Arg(0, seccomp.NE, _AF_UNIX))
    with tempfile.TemporaryFile() as handle:
        filt.export_bpf(handle)
        handle.seek(0)
        program = handle.read()
    if not program or len(program) % 8:
        logger.debug("seccomp: unexpected BPF export of %d bytes", len(program))
        return None
    return program
