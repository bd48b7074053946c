"""A host-wide budget of worker processes, shared by every process of one user on the machine.

Why: a node runs many reward instances at once (verl's 8 reward-loop workers, ``rewardsmith serve`` replicas, Ray
actors), and each one sizing its pool to the CPUs it sees would start instances × cores processes, each with its
own sympy heap, all fighting for the same cores. Here the processes of every pool that uses one budget, on the
whole host, never number more than ``total``.

How: the budget is ``total`` slot files in a runtime folder. A worker process holds an exclusive ``flock`` on one
slot for its whole life (the locked descriptor is handed to it at start and its starter closes its own copy), so
the kernel returns the slot when the process ends, however it ends: a pool closed, a reward garbage-collected, a
worker killed on overrun, its parent killed. Nothing is counted in memory, so nothing can drift.

Pools on the budget register by holding a lock of their own, and each keeps at most its share, ``total // pools``
(at least one): a pool that starts while others hold every slot gets its share as they hand back what is above
theirs. With more pools than slots, each hands its worker back once it has idled for :data:`LINGER_S`, so every
pool is served in turn (slowly: declare a budget of at least one worker per instance).
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import itertools
import os
import random
import stat
import tempfile
from dataclasses import dataclass

#: Environment variable naming the folder of the budgets' lock files (default: ``$XDG_RUNTIME_DIR/rewardsmith``,
#: else ``rewardsmith-<uid>`` in the temporary folder). Processes share a budget only when they agree on it.
RUNTIME_DIR_ENV = "REWARDSMITH_RUNTIME_DIR"
#: How long an idle worker is kept when the host has more pools than slots, before it is handed back.
LINGER_S = 1.0

_POOL_PREFIX = "pool-"
_registrations = itertools.count()


class BudgetError(RuntimeError):
    """The budget's folder cannot be used (owned by another user, not a folder); the message names the fix."""


def runtime_dir() -> str:
    """The folder of the budgets' lock files, created private to this user (mode 0700) when missing."""
    explicit = os.environ.get(RUNTIME_DIR_ENV, "").strip()
    if explicit:
        base = explicit
    elif os.environ.get("XDG_RUNTIME_DIR"):
        base = os.path.join(os.environ["XDG_RUNTIME_DIR"], "rewardsmith")
    else:
        base = os.path.join(tempfile.gettempdir(), f"rewardsmith-{os.getuid()}")
    with contextlib.suppress(FileExistsError):
        os.makedirs(base, mode=0o700)
    info = os.lstat(base)
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid():  # a squatted path in a shared /tmp
        raise BudgetError(f"worker budget folder {base} is not a folder of this user's: set {RUNTIME_DIR_ENV}")
    return base


@dataclass(frozen=True)
class HostBudget:
    """At most ``total`` worker processes on this host across every pool that uses the budget ``name``.

    ``declared_by`` names where the total comes from, for the messages a starved pool gives. Pickles as these
    fields (no descriptors), so a pool holding one stays picklable.
    """

    name: str
    total: int
    declared_by: str = ""

    def __post_init__(self) -> None:
        if self.total < 1:
            raise ValueError(f"a worker budget needs at least 1 worker, got {self.total}")
        if not self.name.replace("-", "").replace("_", "").isalnum():
            raise ValueError(f"budget name must be letters, digits, '-' or '_', got {self.name!r}")

    def folder(self) -> str:
        path = os.path.join(runtime_dir(), f"{self.name}-workers")
        with contextlib.suppress(FileExistsError):
            os.mkdir(path, 0o700)
        return path

    def take_slot(self) -> int | None:
        """A descriptor holding a free slot's lock (hand it to the worker, then close it here), or None when every
        slot is held. Slots are tried from a random one, so that pools starting together do not all collide."""
        folder = self.folder()
        first = random.randrange(self.total)
        for k in range(self.total):
            fd = os.open(os.path.join(folder, f"slot-{(first + k) % self.total}"), os.O_RDWR | os.O_CREAT, 0o600)
            if _try_lock(fd, fcntl.LOCK_EX):
                return fd
            os.close(fd)
        return None

    def held(self) -> int:
        """Slots held right now (by any process on the host)."""
        folder = self.folder()
        return sum(_is_locked(os.path.join(folder, f"slot-{k}")) for k in range(self.total))

    def register(self) -> int:
        """Count a pool in this budget's shares for as long as the returned descriptor stays open."""
        folder = self.folder()
        name = f"{_POOL_PREFIX}{os.getpid()}-{next(_registrations)}"
        hidden = os.path.join(folder, f".{name}")
        fd = os.open(hidden, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o600)
        fcntl.flock(fd, fcntl.LOCK_EX)  # locked before it is visible: a counter never takes it for a dead pool's
        os.rename(hidden, os.path.join(folder, name))
        return fd

    def pools(self) -> int:
        """Pools registered now; files left by pools that died are removed on the way."""
        folder = self.folder()
        live = 0
        for entry in os.listdir(folder):
            if not entry.startswith(_POOL_PREFIX):
                continue
            path = os.path.join(folder, entry)
            if _is_locked(path):
                live += 1
            else:
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(path)
        return live

    def share(self) -> tuple[int, bool]:
        """The processes one pool may keep now (``total // pools``, at least 1) and whether the host has more pools
        than slots (each then hands back an idle worker after :data:`LINGER_S`)."""
        pools = max(1, self.pools())
        return max(1, self.total // pools), pools > self.total

    def starved(self) -> str:
        """Why a pool found no slot, for the reason of a call that got no worker."""
        source = f" ({self.declared_by})" if self.declared_by else ""
        return f"every one of this host's {self.total} {self.name} worker slots{source} is held by other processes"


def _try_lock(fd: int, kind: int) -> bool:
    try:
        fcntl.flock(fd, kind | fcntl.LOCK_NB)
    except OSError as exc:
        if exc.errno in (errno.EAGAIN, errno.EACCES, errno.EWOULDBLOCK):
            return False
        raise
    return True


def _is_locked(path: str) -> bool:
    """Whether some open descriptor (of any process, this one included) holds a lock on ``path``."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        return False
    try:
        return not _try_lock(fd, fcntl.LOCK_SH)
    finally:
        os.close(fd)  # closing drops the probe's own lock, if it got one
