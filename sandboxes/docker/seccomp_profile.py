"""The seccomp profile of every sandbox container: the local tier's deny-list in Docker's JSON form.

Passed inline (``security_opt=["seccomp=<json>"]``), it replaces the engine's default profile, so it carries the
whole list the local tier loads (:data:`rewardsmith.sandboxes.local.seccomp.DENIED_SYSCALLS`: ptrace, namespaces,
mounts, keyrings, BPF, ``io_uring_*``, ...) plus the old syscalls Docker's default also refuses, and the same
argument rules: no ``clone`` with a namespace flag, ``clone3`` answered ``ENOSYS`` (libc falls back to
``clone``), no ``TIOCSTI`` and no socket other than ``AF_UNIX`` (``AF_NETLINK`` included: even without a network
it reaches the kernel's routing and audit code). A pure function, so the profile can be read and tested here.
"""

from __future__ import annotations

import errno
import json

from rewardsmith.sandboxes.local.seccomp import DENIED_SYSCALLS

#: Refused by Docker's default profile as well; harmless to programs, kept closed when the default is replaced.
DOCKER_ALSO_DENIED = (
    "create_module",
    "get_kernel_syms",
    "query_module",
    "nfsservctl",
    "uselib",
    "ustat",
    "sysfs",
    "_sysctl",
    "ioperm",
    "iopl",
    "vm86",
    "vm86old",
    "stime",
    "move_pages",
    "mbind",
    "set_mempolicy",
    "get_mempolicy",
)
_CLONE_NAMESPACE_FLAGS = (0x00020000, 0x02000000, 0x04000000, 0x08000000, 0x10000000, 0x20000000, 0x40000000)
_TIOCSTI = 0x5412
_AF_UNIX = 1


def _deny(names: list[str], errno_value: int = errno.EPERM, args: list[dict] | None = None) -> dict:
    rule = {"names": names, "action": "SCMP_ACT_ERRNO", "errnoRet": errno_value}
    if args:
        rule["args"] = args
    return rule


def _masked(index: int, mask: int, value: int) -> dict:
    return {"index": index, "value": mask, "valueTwo": value, "op": "SCMP_CMP_MASKED_EQ"}


def seccomp_profile() -> dict:
    """Everything allowed except the deny-list. No ``architectures``: only the native ABI is let through (an
    i386 or x32 syscall made to slip past the rules is refused by the kernel filter's architecture check)."""
    rules = [_deny(sorted(set(DENIED_SYSCALLS) | set(DOCKER_ALSO_DENIED)))]
    rules.append(_deny(["clone3"], errno.ENOSYS))
    rules += [_deny(["clone"], args=[_masked(0, flag, flag)]) for flag in _CLONE_NAMESPACE_FLAGS]
    rules.append(_deny(["ioctl"], args=[_masked(1, 0xFFFFFFFF, _TIOCSTI)]))
    not_unix = [{"index": 0, "value": _AF_UNIX, "op": "SCMP_CMP_NE"}]
    rules.append(_deny(["socket", "socketpair"], errno.EACCES, not_unix))
    return {"defaultAction": "SCMP_ACT_ALLOW", "syscalls": rules}


def seccomp_security_opt() -> str:
    """The ``security_opt`` entry that loads :func:`seccomp_profile` into a container."""
    return "seccomp=" + json.dumps(seccomp_profile(), separators=(",", ":"))
