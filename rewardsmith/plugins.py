"""One registry for every plugin kind: rewards, hack-audit attacks, sandbox backends, judge clients, reward models.

Each kind is a :class:`PluginKind`, a ``name -> Plugin`` table built the same way whatever it holds. A name gets in
one of three ways, all alike across kinds:

- a **line**: ``SANDBOXES.declare("docker", "rewardsmith.sandboxes.docker.backend:DockerSandbox", extra="docker")``.
  Nothing is imported until the name is used, so an unused plugin's dependencies are never needed; the line names
  the extra that brings them, and what is missing and the install that fixes it are derived from that extra's
  modules (:data:`rewardsmith.extras.EXTRA_MODULES`, written once);
- a **decorator**: ``@register_reward("exact_match")`` (each kind's own front over :meth:`PluginKind.register`)
  registers a class when its module is imported; a kind's ``builtin_modules`` are imported before its first lookup;
- an **entry point** in the kind's group, always ``rewardsmith.<kind>`` (:data:`KINDS`): ``name = "module:Attr"``
  becomes a line like a built-in's, found without importing it; ``name = "module"`` names a module that registers
  its plugins on import, imported when the group is read. A built-in name is never overridden.

Lookups are thread-safe (trainers look their first rewards up from a thread pool), a table is marked loaded only
once its built-ins and entry points are in, an unknown name fails with close matches and the known names, and a
plugin whose extra is missing fails naming the install. A broken third-party plugin is left out with a warning
where every plugin is loaded (:meth:`PluginKind.load_plugins`); rewardsmith's own failing is a bug and propagates.
"""

from __future__ import annotations

import difflib
import functools
import importlib
import logging
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from importlib.metadata import EntryPoint, entry_points
from typing import Any, Generic, Literal, TypeVar

from rewardsmith.extras import EXTRA_MODULES, importable, needs_text
from rewardsmith.reward_config import ConfigError

logger = logging.getLogger(__name__)

T = TypeVar("T")

#: Every plugin kind: its key (its entry-point group is ``rewardsmith.<key>``) and the module that defines its
#: table, imported by :func:`plugin_kind`. One place, so a kind's group follows the one naming scheme.
KINDS: dict[str, str] = {
    "rewards": "rewardsmith.registry",
    "attacks": "rewardsmith.hackaudit.attacks",
    "sandboxes": "rewardsmith.sandboxes.factory",
    "judge_clients": "rewardsmith.judges.clients.factory",
    "reward_models": "rewardsmith.judges.clients.reward_models",
}

#: rewardsmith's own distribution: a plugin it declares is a built-in (its failure is a bug, never a warning)
OWN_DISTRIBUTION = "rewardsmith"

_PENDING: Any = object()


@dataclass(eq=False)
class Plugin:
    """One name of one kind: where it lives, what it needs, and (once imported) the object itself."""

    name: str
    #: ``"package.module:Attribute"``: imported on first use (a decorated object's own module and name)
    target: str
    #: the extras it runs with, any one of them enough (:data:`~rewardsmith.extras.EXTRA_MODULES` says what each
    #: brings); the first is the one the install hint names. Empty: it needs nothing beyond the core.
    extras: tuple[str, ...] = ()
    #: the kind's own facts about it, read as attributes (a sandbox backend's ``forwards``)
    info: Mapping[str, Any] = field(default_factory=dict)
    #: the distribution that declared it (``rewardsmith`` for built-ins)
    origin: str = OWN_DISTRIBUTION
    #: declared through an entry point (not a table line or a decorator)
    from_entry_point: bool = False
    obj: Any = field(default=_PENDING, repr=False)

    def __getattr__(self, key: str) -> Any:
        if key.startswith("_") or key == "info":
            raise AttributeError(key)
        try:
            return self.info[key]
        except KeyError:
            raise AttributeError(f"plugin {self.name!r} has no {key!r}") from None

    @property
    def module(self) -> str:
        return self.target.partition(":")[0]

    @property
    def extra(self) -> str | None:
        """The extra the install hint names (the first of :attr:`extras`), or None."""
        return self.extras[0] if self.extras else None

    @property
    def loaded(self) -> bool:
        return self.obj is not _PENDING

    def module_groups(self) -> tuple[tuple[str, ...], ...]:
        """The module groups it can run with (one per extra; any one fully importable is enough)."""
        return tuple(EXTRA_MODULES[extra] for extra in self.extras)

    def install_hint(self) -> str:
        """``"the 'docker' extra (docker missing): pip install 'rewardsmith[docker]'"``; empty when it needs none."""
        return needs_text(self.extras) if self.extras else ""

    def missing(self) -> bool:
        """Whether none of the module groups it can run with is importable here."""
        groups = self.module_groups()
        return bool(groups) and not any(all(importable(m) for m in group) for group in groups)


class PluginKind(Generic[T]):
    """The ``name -> Plugin`` table of one kind (:data:`KINDS`); ``accepts`` says what an entry may resolve to."""

    def __init__(
        self,
        key: str,
        label: str,
        *,
        builtin_modules: tuple[str, ...] = (),
        accepts: Callable[[object], bool] = callable,
        adopt: Callable[[str, T], object] | None = None,
        info_defaults: Mapping[str, Any] | None = None,
        log: logging.Logger | None = None,
    ) -> None:
        if key not in KINDS:
            raise ValueError(f"unknown plugin kind {key!r}: add it to rewardsmith.plugins.KINDS")
        self.key = key
        #: what one of them is called in messages ("sandbox backend")
        self.kind = label
        self.group = f"rewardsmith.{key}"
        self.builtin_modules = builtin_modules
        self._accepts = accepts
        #: called with an entry point's name and object once it is imported (the reward kind renames the class)
        self._adopt = adopt
        #: the kind's own facts every entry has, unless its line says otherwise (a sandbox backend's ``forwards``)
        self.info_defaults = dict(info_defaults or {})
        self._log = log or logger
        #: the live table, in registration order (built-ins first, then entry points sorted by name)
        self.entries: dict[str, Plugin] = {}
        self._loaded = False
        self._loading = False
        self._lock = threading.RLock()  # re-entrant: a module imported while loading may look names up
        _TABLES.setdefault(key, self)  # the first table of a key is the kind's (a scratch one in a test is not)

    # -- registration ------------------------------------------------------------------------------------------
    def declare(self, name: str, target: str, *, extra: str | tuple[str, ...] = (), **info: Any) -> Plugin:
        """A lazy line: ``name`` is ``target`` (``"module:Attribute"``), imported on first use; ``extra`` is the
        extra it needs (or a tuple of extras, any one enough)."""
        extras = self._extras(name, extra)
        if ":" not in target:
            raise ValueError(f"{self.kind} {name!r}: target {target!r} is not 'module:Attribute'")
        existing = self.entries.get(name)
        if existing is not None and existing.target != target:
            raise ValueError(f"{self.kind} name {name!r} is already registered by {existing.target}")
        plugin = Plugin(name, target, extras, {**self.info_defaults, **info})
        self.entries[name] = plugin
        return plugin

    def register(self, name: str, obj: T, *, extra: str | tuple[str, ...] = (), **info: Any) -> T:
        """Register ``obj`` itself under ``name`` (a second object under the same name is an error); ``extra`` as
        for :meth:`declare` (what it needs to run, though its module imports without it)."""
        extras = self._extras(name, extra)
        existing = self.entries.get(name)
        if existing is None:
            self.entries[name] = Plugin(name, _target_of(obj), extras, {**self.info_defaults, **info}, obj=obj)
            return obj
        if existing.loaded:
            same = existing.obj is obj or _qualname(existing.obj) == _qualname(obj)  # a reloaded module's class
        else:  # a line (or entry point) naming this very object: importing it filled the line in
            same = existing.target == _target_of(obj) or existing.target.partition(":")[2] == _qualname(obj)
        if not same:
            owner = _target_of(existing.obj) if existing.loaded else existing.target
            raise ValueError(f"{self.kind} name {name!r} is already registered by {owner}")
        existing.obj = obj
        return obj

    def decorator(self, name: str | None = None, *, extra: str | tuple[str, ...] = (), **info: Any) -> Callable[[T], T]:
        """``@KIND.decorator("name", extra="docker")``: register the decorated object (default name: its ``name``)."""

        def decorate(obj: T) -> T:
            key = name or getattr(obj, "name", None)
            if not isinstance(key, str) or not key:
                raise TypeError(f"{self.kind} {obj!r} needs a name: pass one to the decorator")
            return self.register(key, obj, extra=extra, **info)

        return decorate

    def _extras(self, name: str, extra: str | tuple[str, ...]) -> tuple[str, ...]:
        extras = (extra,) if isinstance(extra, str) else tuple(extra)
        unknown = [e for e in extras if e not in EXTRA_MODULES]
        if unknown:
            raise ValueError(f"{self.kind} {name!r}: unknown extra {unknown[0]!r} (known: {', '.join(EXTRA_MODULES)})")
        return extras

    # -- lookup ------------------------------------------------------------------------------------------------
    def names(self) -> list[str]:
        """Every name, nothing imported: built-ins in registration order, then entry points sorted."""
        self._load()
        return list(self.entries)

    def literal(self) -> Any:
        """``Literal[...]`` of :meth:`names`: the type of a config field naming one of this kind."""
        return Literal[tuple(self.names())]

    def get(self, name: str) -> Plugin:
        """The entry of ``name`` (not imported); unknown: a :class:`ConfigError` with close names and the known ones."""
        self._load()
        plugin = self.entries.get(name)
        if plugin is None and self._pending():
            self.load_plugins()  # a plugin module may register more names than its entry point's
            plugin = self.entries.get(name)
        if plugin is None:
            close = difflib.get_close_matches(name, self.entries, n=3)
            hint = f" Did you mean {', '.join(map(repr, close))}?" if close else ""
            raise ConfigError(f"unknown {self.kind} {name!r}.{hint} Known: {', '.join(self.entries)}")
        return plugin

    def load(self, name: str) -> T:
        """The object registered as ``name``, imported now (a missing extra fails naming its install)."""
        return self._resolve(self.get(name))

    def load_plugins(self) -> None:
        """Import every third-party entry-point plugin not imported yet; one that fails is dropped with a warning
        (listing rewards shows what can be built, and a broken package never stops the others)."""
        self._load()
        for plugin in self._pending():
            try:
                self._resolve(plugin)
            except Exception:
                self._log.warning(
                    "could not load %s plugin %s (%s)", self.kind, plugin.name, plugin.target, exc_info=True
                )
                if self.entries.get(plugin.name) is plugin:
                    del self.entries[plugin.name]

    def missing_packages(self, name: str) -> str | None:
        """Why ``name`` cannot run here and the install that fixes it, or None (also for an unknown name)."""
        self._load()
        plugin = self.entries.get(name)
        if plugin is None or not plugin.missing():
            return None
        return f"{self.kind} {name!r} needs {plugin.install_hint()}"

    # -- loading -----------------------------------------------------------------------------------------------
    def _pending(self) -> list[Plugin]:
        """Third-party entry points not imported yet (rewardsmith's own register only the names they declare)."""
        entries = list(self.entries.values())
        return [p for p in entries if p.from_entry_point and not p.loaded and p.origin != OWN_DISTRIBUTION]

    def _resolve(self, plugin: Plugin) -> T:
        if plugin.loaded:
            return plugin.obj
        with self._lock:
            if plugin.loaded:
                return plugin.obj
            module_name, _, attribute = plugin.target.partition(":")
            try:
                module = importlib.import_module(module_name)
            except ModuleNotFoundError as exc:
                hint = f" ({self.kind} {plugin.name!r} needs {plugin.install_hint()})" if plugin.extras else ""
                raise ConfigError(f"{self.kind} {plugin.name!r} is unavailable: {exc}{hint}") from exc
            obj: Any = functools.reduce(getattr, attribute.split("."), module) if attribute else module
            if not self._accepts(obj):
                raise ConfigError(f"{self.kind} {plugin.name!r}: {plugin.target} is not a {self.kind} ({obj!r})")
            plugin.obj = obj
            if self._adopt is not None:
                self._adopt(plugin.name, obj)
            return obj

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
                for ep in sorted(entry_points(group=self.group), key=lambda ep: ep.name):
                    if ep.name not in self.entries:  # a built-in name is never overridden
                        self._add_entry_point(ep)
            finally:
                self._loading = False
            self._loaded = True

    def _add_entry_point(self, ep: EntryPoint) -> None:
        origin = getattr(ep.dist, "name", None) or "?"
        if ep.attr:
            target = f"{ep.module}:{ep.attr}"
            plugin = Plugin(ep.name, target, info=dict(self.info_defaults), origin=origin, from_entry_point=True)
            self.entries[ep.name] = plugin
            return
        try:  # a module that registers its plugins on import: its names are known only once imported
            importlib.import_module(ep.module)
        except Exception:
            if origin == OWN_DISTRIBUTION:
                raise
            self._log.warning("could not load %s plugin %s (%s)", self.kind, ep.name, ep.value, exc_info=True)


_TABLES: dict[str, PluginKind[Any]] = {}


def plugin_kind(key: str) -> PluginKind[Any]:
    """The table of kind ``key`` (``"sandboxes"``), its defining module imported now."""
    if key not in KINDS:
        raise ConfigError(f"unknown plugin kind {key!r}; known: {', '.join(KINDS)}")
    importlib.import_module(KINDS[key])
    return _TABLES[key]


def _target_of(obj: object) -> str:
    return f"{getattr(obj, '__module__', '?')}:{_qualname(obj)}"


def _qualname(obj: object) -> str:
    return getattr(obj, "__qualname__", repr(obj))
