"""The reward registry: names to reward classes, built-ins plus entry-point plugins.

The registry is the one piece of module-level state in rewardsmith. Built-in families register
themselves when their module (listed in :data:`BUILTIN_MODULES`) is imported; everything else registers through the
``rewardsmith.rewards`` entry-point group, whose targets are reward classes (or modules that register on import):
third-party packages, and rewardsmith's own transports (``remote``, ``ray_pool``) and demo rewards, which pyproject.toml
declares there, so the core never imports the adapters above it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from rewardsmith.plugins import PluginRegistry
from rewardsmith.reward import Reward

logger = logging.getLogger(__name__)

ENTRY_POINT_GROUP = "rewardsmith.rewards"

#: Modules whose rewards are built in: imported (and so registered) before any lookup, whatever was imported
#: before. An error importing one is a bug and propagates, as does one importing rewardsmith's own entry points;
#: only third-party plugins are skipped with a warning.
BUILTIN_MODULES = ("rewardsmith.rewards",)


def _is_reward_class(target: object) -> bool:
    return isinstance(target, type) and issubclass(target, Reward)


#: The reward registry is one :class:`~rewardsmith.plugins.PluginRegistry` (the mechanism the attack registry of
#: ``rewardsmith audit reward`` shares). Loading is thread-safe and marks itself done only after the built-ins and
#: plugins have imported: trainers (verl's reward worker) score their first batch from a thread pool, and a thread
#: that saw the registry loaded too early would look up a half-filled table (``unknown reward 'math_equivalence'``).
_REWARDS: PluginRegistry[type[Reward]] = PluginRegistry(
    "reward",
    ENTRY_POINT_GROUP,
    BUILTIN_MODULES,
    accepts=_is_reward_class,
    adopt=lambda name, cls: register_reward(name)(cls),
    log=logger,
)
_REGISTRY: dict[str, type[Reward]] = _REWARDS.entries

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
    """Names of every registered reward, built-in and plugin, sorted."""
    return _REWARDS.names()


def reward_class(name: str) -> type[Reward]:
    """The class registered under ``name``; a clear error with suggestions when unknown."""
    return _REWARDS.get(name)


def get_reward(name: str, config: Mapping[str, Any] | None = None, /, **kwargs: Any) -> Reward:
    """Build the reward registered under ``name`` with a validated config.

    >>> fmt = get_reward("think_format")
    >>> fmt(["<think>ok</think> 4"])
    [1.0]
    """
    return reward_class(name)(config, **kwargs)
