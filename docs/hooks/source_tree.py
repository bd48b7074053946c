"""MkDocs hook: a link tree of the ``rewardsmith`` import package for the API reference.

setuptools ``package-dir`` maps ``rewardsmith.rewards`` to ``rewards/`` (and ``judges/``, ``sandboxes/``, ...), a
layout that static analysis cannot follow from the source folders. Before the build this hook links the folders into
``build/docs-src/rewardsmith/`` exactly as the wheel lays them out, and mkdocstrings reads the docstrings from there
without importing anything (no torch, no side effects at import).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TREE = ROOT / "build" / "docs-src"
#: The ``package-dir`` entries of pyproject.toml beyond ``rewardsmith`` itself.
MAPPED = ("rewards", "judges", "sandboxes", "adapters", "constitutions")


def build_tree() -> Path:
    package = TREE / "rewardsmith"
    if TREE.exists():
        shutil.rmtree(TREE)
    package.mkdir(parents=True)
    for entry in (ROOT / "rewardsmith").iterdir():
        if entry.name not in MAPPED and entry.name != "__pycache__":
            os.symlink(entry, package / entry.name)
    for name in MAPPED:
        os.symlink(ROOT / name, package / name)
    return TREE


def on_startup(command: str, dirty: bool) -> None:
    build_tree()


def on_pre_build(config) -> None:
    build_tree()
