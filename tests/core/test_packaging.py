"""The distribution: card folders become `rewardkit.*` subpackages in both editable and wheel installs."""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
#: Card folder -> the subpackage it becomes (pyproject's package-dir).
CARD_FOLDERS = {
    "rewards": "rewardkit.rewards",
    "judges": "rewardkit.judges",
    "sandboxes": "rewardkit.sandboxes",
    "adapters": "rewardkit.adapters",
    "constitutions": "rewardkit.constitutions",
}
SUBPACKAGES = list(CARD_FOLDERS.values())


def _packages_in_tree() -> set[str]:
    """Every package the source tree holds: folders with an ``__init__.py`` under rewardkit/ and the card folders."""
    found = set()
    for root, package in [("rewardkit", "rewardkit"), *CARD_FOLDERS.items()]:
        for init in (ROOT / root).rglob("__init__.py"):
            parts = init.parent.relative_to(ROOT / root).parts
            found.add(".".join((package, *parts)))
    return found


def _declared_packages() -> set[str]:
    import tomllib

    return set(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])


PROBE = """
import importlib, json, sys
import rewardkit
mods = {name: importlib.import_module(name).__file__ for name in sys.argv[1:]}
print(json.dumps({"rewardkit": rewardkit.__file__, "mods": mods, "rewards": rewardkit.list_rewards()}))
"""


def _probe(env: dict[str, str] | None = None) -> dict:
    import json

    out = subprocess.run(
        [sys.executable, "-c", PROBE, *SUBPACKAGES], capture_output=True, text=True, timeout=300, env=env, cwd="/"
    )
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_installed_package_maps_card_folders() -> None:
    info = _probe()
    for folder, name in CARD_FOLDERS.items():
        assert Path(info["mods"][name]).parent == ROOT / folder, (name, info["mods"][name])
    assert Path(info["rewardkit"]).parent == ROOT / "rewardkit"
    assert {"weighted_sum", "math_equivalence", "code_tests", "character_share"} <= set(info["rewards"])


def test_every_package_in_the_tree_is_declared() -> None:
    """A subpackage missing from pyproject's list would be absent from a wheel (editable installs hide it)."""
    missing = _packages_in_tree() - _declared_packages()
    assert not missing, f"add to [tool.setuptools] packages in pyproject.toml: {sorted(missing)}"
    stale = _declared_packages() - _packages_in_tree()
    assert not stale, f"declared but not in the tree: {sorted(stale)}"


@pytest.mark.slow
def test_wheel_install_has_subpackages_and_data(tmp_path: Path) -> None:
    wheel_dir = tmp_path / "wheel"
    build = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-w", str(wheel_dir), str(ROOT)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert build.returncode == 0, build.stderr[-2000:]
    (wheel,) = wheel_dir.glob("rewardkit-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    for sub in _packages_in_tree():
        assert f"{sub.replace('.', '/')}/__init__.py" in names, sub
    # Non-Python files of the card folders ship as package data.
    data_files = [n for n in names if n.startswith("rewardkit/") and not n.endswith(".py") and "dist-info" not in n]
    shipped_sources = [p for p in ROOT.glob("constitutions/**/*.yaml")]
    for source in shipped_sources:
        assert f"rewardkit/constitutions/{source.relative_to(ROOT / 'constitutions')}" in names, source
    target = tmp_path / "site"
    install = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--no-deps", "--target", str(target), str(wheel)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert install.returncode == 0, install.stderr[-2000:]
    env = {**os.environ, "PYTHONPATH": str(target)}
    info = _probe(env)
    assert info["rewardkit"].startswith(str(target)), info["rewardkit"]
    for path in info["mods"].values():
        assert path.startswith(str(target)), path
    assert data_files or not shipped_sources
