"""A named registry of plugins: built-ins that register on import plus an entry-point group.

The shape of the reward registry (:mod:`rewardsmith.registry`), for any kind of plugin: a decorator registers a
class under a name (a second class under the same name is an error), lookups import the built-in modules and the
entry-point plugins once (thread-safe; a broken third-party plugin is skipped with a warning, a broken built-in
propagates), and an unknown name fails with close matches.
"""

from __future__ import annotations

import difflib
import importlib
import logging
import threading
from collections.abc import Callable, Iterator
from importlib.metadata import entry_points
from typing import Generic, TypeVar

from rewardsmith.reward import ConfigError

logger = logging.getLogger(__name__)

T = TypeVar("T")


class PluginRegistry(Generic[T]):
    """``name -> class`` for one plugin kind; ``accepts`` says which entry-point targets belong to it."""

    def __init__(
        self,
        kind: str,
        group: str,
        builtin_modules: tuple[str, ...],
        accepts: Callable[[object], bool],
        adopt: Callable[[str, T], object] | None = None,
        log: logging.Logger | None = None,
    ) -> None:
        self.kind, self.group, self.builtin_modules, self._accepts = kind, group, builtin_modules, accepts
        #: registers an entry-point target under its entry-point name (default: :meth:`register`)
        self._adopt = adopt or self.register
        self._log = log or logger
        #: the live ``name -> target`` table (read it after a lookup: lookups load the plugins)
        self.entries: dict[str, T] = {}
        self._loaded = False
        self._loading = False
        self._lock = threading.RLock()  # re-entrant: a module imported while loading may look names up

    def register(self, name: str, target: T) -> T:
        existing = self.entries.get(name)
        if existing is not None and existing is not target and _qualname(existing) != _qualname(target):
            raise ValueError(f"{self.kind} name {name!r} is already registered by {_owner(existing)}")
        self.entries[name] = target
        return target

    def names(self) -> list[str]:
        self._load()
        return sorted(self.entries)

    def get(self, name: str) -> T:
        self._load()
        try:
            return self.entries[name]
        except KeyError:
            close = difflib.get_close_matches(name, self.entries, n=3)
            hint = f" Did you mean {', '.join(map(repr, close))}?" if close else ""
            known = ", ".join(sorted(self.entries))
            raise ConfigError(f"unknown {self.kind} {name!r}.{hint} Known: {known}") from None

    def items(self) -> Iterator[tuple[str, T]]:
        self._load()
        return iter(sorted(self.entries.items()))

    def _load(self) -> None:
        if self._loaded:
            return
        with self._lock:
            if self._loaded or self._loading:
                return
            self._loading = True
            try:
                for module in self.builtin_modules:
                    importlib.import_module(module)
                for ep in entry_points(group=self.group):
                    try:
                        target = ep.load()
                    except Exception:
                        if _ours(ep):  # rewardsmith's own entry point is a built-in: its failure is a bug
                            raise
                        self._log.warning(
                            "could not load %s plugin %s (%s)", self.kind, ep.name, ep.value, exc_info=True
                        )
                        continue
                    if self._accepts(target) and ep.name not in self.entries:
                        self._adopt(ep.name, target)
            finally:
                self._loading = False
            self._loaded = True


def _ours(ep: object) -> bool:
    dist = getattr(ep, "dist", None)
    return getattr(dist, "name", None) == "rewardsmith"


def _qualname(target: object) -> str:
    return getattr(target, "__qualname__", repr(target))


def _owner(target: object) -> str:
    return f"{getattr(target, '__module__', '?')}.{_qualname(target)}"
