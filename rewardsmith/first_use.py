"""Lazy starts that happen once: two threads arriving together get the same object, and only one is ever built.

A reward builds its judge client (for the embedded judge: a llama.cpp server) on first use, and trainers reach the
first use from thread pools. A bare ``if self._client is None: self._client = build()`` lets two threads each build
one, and the loser is never closed. :func:`build_once` checks, locks, checks again.

The lock lives on the owner and pickles as a fresh lock, so an owner still ships to spawned workers.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")

#: the attribute of an owner holding its build lock
LOCK_ATTRIBUTE = "_first_use_lock"


class BuildLock:
    """A re-entrant lock that pickles (and copies) as a new, unheld one."""

    def __init__(self) -> None:
        self._lock = threading.RLock()

    def __enter__(self) -> bool:
        return self._lock.acquire()

    def __exit__(self, *exc: object) -> None:
        self._lock.release()

    def __reduce__(self) -> tuple[type[BuildLock], tuple[()]]:
        return (BuildLock, ())


def build_once(owner: Any, attribute: str, build: Callable[[], T]) -> T:
    """``owner.<attribute>``, set to ``build()`` on first use: exactly one build however many threads arrive.

    Re-entrant: a build may itself call :func:`build_once` on the same owner (a strategy that needs the client).
    """
    value = getattr(owner, attribute, None)
    if value is not None:
        return value
    # dict.setdefault is atomic: threads racing here all get the one lock that landed in the owner's __dict__.
    lock = vars(owner).setdefault(LOCK_ATTRIBUTE, BuildLock())
    with lock:
        value = getattr(owner, attribute, None)
        if value is None:
            value = build()
            setattr(owner, attribute, value)
    return value
