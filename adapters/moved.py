"""Old import names of the adapter modules, answered by the modules at their new places.

A verl config names its reward function by module (``pkg://rewardsmith.adapters.verl.compute_score``) and a pickled
TRL environment names its class's module, so the names used before the adapters were grouped by kind must keep
resolving. The finder maps an old name (and any submodule of it) to the new module object itself — never a second
copy, so classes and module state stay one — and warns once per name with the name to write instead.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
import warnings
from types import ModuleType

MOVED: dict[str, str] = {
    "rewardsmith.adapters.trl": "rewardsmith.adapters.trainers.trl",
    "rewardsmith.adapters.environments": "rewardsmith.adapters.trainers.environments",
    "rewardsmith.adapters.verl": "rewardsmith.adapters.trainers.verl",
    "rewardsmith.adapters.verl_calls": "rewardsmith.adapters.trainers.verl_calls",
    "rewardsmith.adapters.verifiers": "rewardsmith.adapters.trainers.verifiers",
    "rewardsmith.adapters.serve": "rewardsmith.adapters.runtime.serve",
    "rewardsmith.adapters.ray": "rewardsmith.adapters.runtime.ray",
    "rewardsmith.adapters.remote": "rewardsmith.adapters.runtime.remote",
}


def new_name(old: str) -> str | None:
    """The current name of module ``old``, or ``None`` when ``old`` is not a moved name (or below one)."""
    for before, after in MOVED.items():
        if old == before or old.startswith(before + "."):
            return after + old[len(before) :]
    return None


class _AliasLoader(importlib.abc.Loader):
    def __init__(self, target: str) -> None:
        self.target = target

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        warnings.warn(
            f"{spec.name} is now {self.target}; the old name will be removed in a future release",
            DeprecationWarning,
            stacklevel=2,
        )
        return importlib.import_module(self.target)

    def exec_module(self, module: ModuleType) -> None:
        """Nothing to run: the module was executed once, under its new name."""


class MovedNamesFinder(importlib.abc.MetaPathFinder):
    """Resolves the old adapter module names to the modules at their new names."""

    def find_spec(
        self, fullname: str, path: object = None, target: object = None
    ) -> importlib.machinery.ModuleSpec | None:
        target_name = new_name(fullname)
        if target_name is None:
            return None
        return importlib.machinery.ModuleSpec(fullname, _AliasLoader(target_name))


def install_moved_names() -> None:
    """Put the finder first on ``sys.meta_path`` (once), so an old name never loads a second copy from disk."""
    if not any(isinstance(finder, MovedNamesFinder) for finder in sys.meta_path):
        sys.meta_path.insert(0, MovedNamesFinder())
