"""rewardsmith's transport and demo rewards (``remote``, ``ray_pool``, ``character_share``) register through the
``rewardsmith.rewards`` entry-point group pyproject.toml declares, like any plugin: the core registry names no adapter,
and Ray has one front door (:mod:`rewardsmith.ray`)."""

from __future__ import annotations

import ast
import importlib
from importlib.metadata import entry_points
from inspect import ismodule
from pathlib import Path

import rewardsmith.adapters.runtime.ray
from rewardsmith import registry, reward_class

REPO = Path(__file__).parents[2]


def _declared() -> dict[str, str]:
    import tomllib  # Python 3.11+, like tests/core/test_packaging.py

    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    return dict(project["entry-points"][registry.ENTRY_POINT_GROUP])


def test_transport_rewards_are_declared_entry_points_and_registered_from_them():
    declared = _declared()
    assert {"remote", "ray_pool", "character_share"} <= set(declared)
    installed = {ep.name: ep for ep in entry_points(group=registry.ENTRY_POINT_GROUP) if ep.dist.name == "rewardsmith"}
    # stale metadata (an install older than pyproject.toml) fails here: reinstall with `pip install -e .`
    assert {name: ep.value for name, ep in installed.items()} == declared
    for name, ep in installed.items():
        assert reward_class(name) is ep.load()


def test_the_core_registry_names_no_adapter():
    tree = ast.parse(Path(registry.__file__).read_text())
    strings = [n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)]
    assert not [s for s in strings if "rewardsmith.adapters" in s]
    assert all(module.startswith("rewardsmith.rewards") for module in registry.BUILTIN_MODULES)


def test_ray_has_one_front_door():
    door = importlib.import_module("rewardsmith.ray")
    assert sorted(door.__all__) == ["ClusterUnavailable", "RayPool", "RayPoolConfig", "serve_on_ray"]
    assert door.RayPool is reward_class("ray_pool")
    exported = [
        n for n, v in vars(rewardsmith.adapters.runtime.ray).items() if not n.startswith("_") and not ismodule(v)
    ]
    assert exported == []  # the implementation package exports nothing (its submodules are its parts)
