"""The reward registry: names to reward classes, built-ins plus entry-point plugins.

The rewards are one kind of the plugin registry (:mod:`rewardsmith.plugins`), like attacks, sandbox backends and
judge clients. Built-in families register themselves with :func:`register_reward` when their module (listed in
:data:`BUILTIN_MODULES`) is imported; everything else registers through the ``rewardsmith.rewards`` entry-point
group, whose targets are reward classes (imported when first used) or modules that register on import:
third-party packages, and rewardsmith's own transports (``remote``, ``ray_pool``) and demo rewards, which pyproject.toml
declares there, so the core never imports the adapters above it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from rewardsmith.plugins import PluginKind
from rewardsmith.reward import Reward

logger = logging.getLogger(__name__)

#: Modules whose rewards are built in: imported (and so registered) before any lookup, whatever was imported
#: before. An error importing one is a bug and propagates, as does one importing rewardsmith's own entry points;
#: only third-party plugins are skipped with a warning.
BUILTIN_MODULES = ("rewardsmith.rewards",)


def _is_reward_class(target: object) -> bool:
    return isinstance(target, type) and issubclass(target, Reward)


#: The reward kind of the plugin registry. Loading is thread-safe and marks itself done only after the built-ins have
#: imported and the entry points are read: trainers (verl's reward worker) score their first batch from a thread
#: pool, and a thread that saw the registry loaded too early would look up a half-filled table
#: (``unknown reward 'math_equivalence'``).
_REWARDS: PluginKind[type[Reward]] = PluginKind(
    "rewards",
    "reward",
    builtin_modules=BUILTIN_MODULES,
    accepts=_is_reward_class,
    adopt=lambda name, cls: register_reward(name)(cls),  # an entry point's name becomes the class's name
    log=logger,
)
ENTRY_POINT_GROUP = _REWARDS.group  # "rewardsmith.rewards"
_REGISTRY = _REWARDS.entries

R = TypeVar("R", bound=type[Reward])


def register_reward(name: str | None = None) -> Callable[[R], R]:
    """Class decorator: register a :class:`Reward` subclass under ``name`` (default: its ``name``)."""

    def decorate(cls: R) -> R:
        if not (isinstance(cls, type) and issubclass(cls, Reward)):
            raise TypeError(f"register_reward expects a Reward subclass, got {cls!r}")
        key = name or cls.name
        _REWARDS.register(key, cls)  # raises, leaving the class untouched, when another class holds the name
        cls.name = key
        return cls

    return decorate


def list_rewards() -> list[str]:
    """Names of every registered reward, built-in and plugin, sorted (a plugin that cannot load is left out)."""
    _REWARDS.load_plugins()
    return sorted(_REWARDS.names())


def reward_class(name: str) -> type[Reward]:
    """The class registered under ``name``; a clear error with suggestions when unknown."""
    return _REWARDS.load(name)


def get_reward(name: str, config: Mapping[str, Any] | None = None, /, **kwargs: Any) -> Reward:
    """Build the reward registered under ``name`` with a validated config.

    >>> fmt = get_reward("think_format")
    >>> fmt(["<think>ok</think> 4"])
    [1.0]
    """
    return reward_class(name)(config, **kwargs)
