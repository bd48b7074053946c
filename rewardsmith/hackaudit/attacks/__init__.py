"""The attack registry: adversarial completion generators by name, built-ins plus ``rewardsmith.attacks`` plugins.

An attack is an :class:`~rewardsmith.hackaudit.attacks.base.Attack` subclass registered with
:func:`register_attack`; a third-party package exposes one through the ``rewardsmith.attacks`` entry-point group
(the target is the class). Attacks are one kind of the plugin registry (:mod:`rewardsmith.plugins`). Built-in
families: :mod:`.math`, :mod:`.code`, :mod:`.format`, :mod:`.judge`, :mod:`.workspace`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from rewardsmith.hackaudit.attacks.base import Attack, AttackContext
from rewardsmith.plugins import PluginKind

BUILTIN_MODULES = (
    "rewardsmith.hackaudit.attacks.math",
    "rewardsmith.hackaudit.attacks.code",
    "rewardsmith.hackaudit.attacks.format",
    "rewardsmith.hackaudit.attacks.judge",
    "rewardsmith.hackaudit.attacks.workspace",
)

ATTACKS: PluginKind[type[Attack]] = PluginKind(
    "attacks",
    "attack",
    builtin_modules=BUILTIN_MODULES,
    accepts=lambda target: isinstance(target, type) and issubclass(target, Attack),
    adopt=lambda name, cls: register_attack(name)(cls),
)
ENTRY_POINT_GROUP = ATTACKS.group  # "rewardsmith.attacks"

A = TypeVar("A", bound=type[Attack])


def register_attack(name: str | None = None) -> Callable[[A], A]:
    """Class decorator: register an :class:`Attack` subclass under ``name`` (default: its ``name``)."""

    def decorate(cls: A) -> A:
        if not (isinstance(cls, type) and issubclass(cls, Attack)):
            raise TypeError(f"register_attack expects an Attack subclass, got {cls!r}")
        cls.name = name or cls.name
        ATTACKS.register(cls.name, cls)
        return cls

    return decorate


def list_attacks() -> list[str]:
    """Every attack's name, sorted (a plugin that cannot load is left out)."""
    ATTACKS.load_plugins()
    return sorted(ATTACKS.names())


def get_attack(name: str) -> Attack:
    """An instance of the attack registered as ``name`` (a plugin's entry-point name becomes its name)."""
    attack = ATTACKS.load(name)()
    attack.name = name
    return attack


def select_attacks(choice: str, kinds: list[str]) -> list[Attack]:
    """``all`` (every attack of the spec's kinds) or a comma list of attack names and families (``math,code``)."""
    every = [get_attack(name) for name in list_attacks()]
    if choice.strip() in ("", "all"):
        return [a for a in every if set(a.kinds) & set(kinds)]
    chosen: list[Attack] = []
    for token in (t.strip() for t in choice.split(",") if t.strip()):
        family = [a for a in every if a.family == token]
        picked = family or [get_attack(token)]
        chosen += [a for a in picked if a.name not in {c.name for c in chosen}]
    return chosen


__all__ = ["ATTACKS", "Attack", "AttackContext", "get_attack", "list_attacks", "register_attack", "select_attacks"]
