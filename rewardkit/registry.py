"""The reward registry: names to reward classes, built-ins plus entry-point plugins.

The registry is the one piece of module-level state in rewardkit. Built-in families register
themselves when their module (listed in :data:`BUILTIN_MODULES`) is imported; third-party packages register through the
``rewardkit.rewards`` entry-point group, whose targets are reward classes (or modules that
register on import).
"""

from __future__ import annotations

import difflib
import importlib
import logging
import threading
from collections.abc import Callable, Mapping
from importlib.metadata import entry_points
from typing import Any, TypeVar

from rewardkit.reward import ConfigError, Reward

logger = logging.getLogger(__name__)

ENTRY_POINT_GROUP = "rewardkit.rewards"

#: Modules whose rewards are built in: imported (and so registered) before any lookup, whatever was imported
#: before. An error importing one is a bug and propagates; only third-party plugins are skipped with a warning.
BUILTIN_MODULES = (
    "rewardkit.rewards",
    "rewardkit.adapters.demo.tasks",
    "rewardkit.adapters.remote",
    "rewardkit.adapters.ray.pool",
)

_REGISTRY: dict[str, type[Reward]] = {}
_loaded = False
_loading = False  # True while the loading thread (holder of _load_lock) runs the imports
#: Held while the built-ins and plugins load. Re-entrant so that a lookup made *during* loading by a module being
#: imported (in the loading thread) sees the registry as it stands instead of waiting on itself.
_load_lock = threading.RLock()

R = TypeVar("R", bound=type[Reward])


def register_reward(name: str | None = None) -> Callable[[R], R]:
    """Class decorator: register a :class:`Reward` subclass under ``name`` (default: its ``name``)."""

    def decorate(cls: R) -> R:
        if not (isinstance(cls, type) and issubclass(cls, Reward)):
            raise TypeError(f"register_reward expects a Reward subclass, got {cls!r}")
        key = name or cls.name
        existing = _REGISTRY.get(key)
        if existing is not None and existing is not cls and existing.__qualname__ != cls.__qualname__:
            owner = f"{existing.__module__}.{existing.__qualname__}"
            raise ValueError(f"reward name {key!r} is already registered by {owner}")
        cls.name = key
        _REGISTRY[key] = cls
        return cls

    return decorate


def list_rewards() -> list[str]:
    """Names of every registered reward, built-in and plugin, sorted."""
    _load()
    return sorted(_REGISTRY)


def reward_class(name: str) -> type[Reward]:
    """The class registered under ``name``; a clear error with suggestions when unknown."""
    _load()
    try:
        return _REGISTRY[name]
    except KeyError:
        close = difflib.get_close_matches(name, _REGISTRY, n=3)
        hint = f" Did you mean {', '.join(map(repr, close))}?" if close else ""
        raise ConfigError(f"unknown reward {name!r}.{hint} Known: {', '.join(sorted(_REGISTRY))}") from None


def get_reward(name: str, config: Mapping[str, Any] | None = None, /, **kwargs: Any) -> Reward:
    """Build the reward registered under ``name`` with a validated config.

    >>> fmt = get_reward("think_format")
    >>> fmt(["<think>ok</think> 4"])
    [1.0]
    """
    return reward_class(name)(config, **kwargs)


def _load() -> None:
    """Import the built-ins and plugins once; every thread returns only after loading has finished.

    ``_loaded`` is set after the imports succeed, never before: trainers (verl's reward worker) score their first
    batch from a thread pool, and a thread that saw the flag set too early would look up a half-filled registry
    (``unknown reward 'math_equivalence'``). A failed built-in import propagates and the next call tries again.
    """
    global _loaded, _loading
    if _loaded:  # fast path: set only once the registry is complete
        return
    with _load_lock:
        if _loaded or _loading:  # loaded meanwhile, or a re-entrant call from the loading thread
            return
        _loading = True
        try:
            _import_all()
        finally:
            _loading = False
        _loaded = True


def _import_all() -> None:
    for module in BUILTIN_MODULES:
        importlib.import_module(module)
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        try:
            target = ep.load()
        except Exception:
            logger.warning("could not load reward plugin %s (%s)", ep.name, ep.value, exc_info=True)
            continue
        if isinstance(target, type) and issubclass(target, Reward) and ep.name not in _REGISTRY:
            register_reward(ep.name)(target)
