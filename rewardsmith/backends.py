"""Backend tables: one per kind (sandboxes, judge clients), ``name -> import path, install hint``, plus an entry-point
group for third-party backends.

A table is the one place a backend's name is written: the factory imports the backend through it (lazily, so an
unused backend's dependencies are never needed), config types accept its names (:meth:`BackendTable.literal`), and
the CLI offers them as choices. Adding a backend is its own module plus one :class:`Backend` line in the table;
a package adds one without touching rewardsmith through the table's entry-point group (``name = "module:Attribute"``).
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable
from dataclasses import dataclass
from importlib.metadata import entry_points
from typing import Any, Literal

from rewardsmith.extras import EXTRA_MODULES, absent_modules, importable, install_command


@dataclass(frozen=True)
class Backend:
    """One backend: where it lives and what it needs to run."""

    name: str
    #: ``"package.module:Attribute"``: the class (or function) that builds it, imported on first use
    target: str
    #: the pyproject extra that brings its dependencies (what ``rewardsmith`` commands check before starting);
    #: unless ``needs``/``install`` say otherwise, its modules (:data:`~rewardsmith.extras.EXTRA_MODULES`) are what
    #: the backend needs and its install command is the hint
    extra: str | None = None
    #: module groups it can run with (any one fully importable is enough); empty: the extra's modules, if any
    needs: tuple[tuple[str, ...], ...] = ()
    #: how to get them, after "<kind> '<name>' needs ..."; empty: derived from ``extra``
    install: str = ""
    #: sandboxes: forwards programs to another server (so it is not a backend to serve the API on)
    forwards: bool = False

    @property
    def module(self) -> str:
        return self.target.partition(":")[0]

    def module_groups(self) -> tuple[tuple[str, ...], ...]:
        """The module groups it can run with: ``needs``, else its extra's modules, else none."""
        if self.needs:
            return self.needs
        return (EXTRA_MODULES[self.extra],) if self.extra else ()

    def install_hint(self) -> str:
        """``"the 'docker' extra (docker missing): pip install 'rewardsmith[docker]'"``, or the line's ``install``."""
        if self.install or not self.extra:
            return self.install
        absent = absent_modules(self.extra)
        missing = f" ({', '.join(absent)} missing)" if absent else ""
        return f"the '{self.extra}' extra{missing}: {install_command(self.extra)}"

    def missing(self) -> bool:
        """Whether none of the module groups this backend can run with is importable here."""
        groups = self.module_groups()
        return bool(groups) and not any(all(importable(m) for m in group) for group in groups)


class BackendTable:
    """The backends of one kind: the built-in lines plus the entry points of ``group``."""

    def __init__(self, kind: str, group: str, builtins: Iterable[Backend]) -> None:
        self.kind, self.group = kind, group
        self.builtins = {b.name: b for b in builtins}
        self._plugins: dict[str, Backend] | None = None

    def plugins(self) -> dict[str, Backend]:
        """Third-party backends from the entry-point group (read once; a built-in name is never overridden)."""
        if self._plugins is None:
            found = {ep.name: Backend(ep.name, ep.value) for ep in entry_points(group=self.group)}
            self._plugins = {name: b for name, b in found.items() if name not in self.builtins}
        return self._plugins

    def names(self) -> tuple[str, ...]:
        """Built-ins in table order, then plugins sorted."""
        return (*self.builtins, *sorted(self.plugins()))

    def literal(self) -> Any:
        """``Literal[...]`` of :meth:`names`: the type of a config field naming a backend of this kind."""
        return Literal[self.names()]

    def get(self, name: str) -> Backend:
        backend = self.builtins.get(name) or self.plugins().get(name)
        if backend is None:
            raise ValueError(f"unknown {self.kind} {name!r}; known: {', '.join(self.names())}")
        return backend

    def missing_packages(self, name: str) -> str | None:
        """Why backend ``name`` cannot run here and the install that fixes it, or None (also for unknown names)."""
        backend = self.builtins.get(name) or self.plugins().get(name)
        if backend is None or not backend.missing():
            return None
        return f"{self.kind} {name!r} needs {backend.install_hint()}"

    def load(self, name: str) -> Any:
        """The class (or function) that builds backend ``name``, imported now."""
        backend = self.get(name)
        module_name, _, attribute = backend.target.partition(":")
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            hint = f" ({self.kind} {name!r} needs {backend.install_hint()})" if backend.install_hint() else ""
            raise ValueError(f"{self.kind} {name!r} is unavailable: {exc}{hint}") from exc
        return getattr(module, attribute) if attribute else module
