"""The distribution: card folders become `rewardsmith.*` subpackages in both editable and wheel installs."""

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
    "rewards": "rewardsmith.rewards",
    "judges": "rewardsmith.judges",
    "sandboxes": "rewardsmith.sandboxes",
    "adapters": "rewardsmith.adapters",
    "constitutions": "rewardsmith.constitutions",
}
SUBPACKAGES = list(CARD_FOLDERS.values())


def _packages_in_tree() -> set[str]:
    """Every package the source tree holds: folders with an ``__init__.py`` under rewardsmith/ and the card folders."""
    found = set()
    for root, package in [("rewardsmith", "rewardsmith"), *CARD_FOLDERS.items()]:
        for init in (ROOT / root).rglob("__init__.py"):
            parts = init.parent.relative_to(ROOT / root).parts
            found.add(".".join((package, *parts)))
    return found


def _declared_packages() -> set[str]:
    import tomllib

    return set(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])


PROBE = """
import importlib, json, sys
import rewardsmith
mods = {name: importlib.import_module(name).__file__ for name in sys.argv[1:]}
print(json.dumps({"rewardsmith": rewardsmith.__file__, "mods": mods, "rewards": rewardsmith.list_rewards()}))
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
    assert Path(info["rewardsmith"]).parent == ROOT / "rewardsmith"
    assert {"weighted_sum", "math_equivalence", "code_tests", "character_share"} <= set(info["rewards"])


def test_every_package_in_the_tree_is_declared() -> None:
    """A subpackage missing from pyproject's list would be absent from a wheel (editable installs hide it)."""
    missing = _packages_in_tree() - _declared_packages()
    assert not missing, f"add to [tool.setuptools] packages in pyproject.toml: {sorted(missing)}"
    stale = _declared_packages() - _packages_in_tree()
    assert not stale, f"declared but not in the tree: {sorted(stale)}"


def _build_wheel(wheel_dir: Path) -> Path:
    """This tree built as a wheel into ``wheel_dir`` (no dependencies, no build isolation: offline)."""
    build = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-w", str(wheel_dir), str(ROOT)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert build.returncode == 0, build.stderr[-2000:]
    (wheel,) = wheel_dir.glob("rewardsmith-*.whl")
    return wheel


@pytest.mark.slow
def test_wheel_install_has_subpackages_and_data(tmp_path: Path) -> None:
    wheel = _build_wheel(tmp_path / "wheel")
    names = zipfile.ZipFile(wheel).namelist()
    for sub in _packages_in_tree():
        assert f"{sub.replace('.', '/')}/__init__.py" in names, sub
    # Non-Python files of the card folders ship as package data.
    data_files = [n for n in names if n.startswith("rewardsmith/") and not n.endswith(".py") and "dist-info" not in n]
    shipped_sources = [p for p in ROOT.glob("constitutions/**/*.yaml")]
    for source in shipped_sources:
        assert f"rewardsmith/constitutions/{source.relative_to(ROOT / 'constitutions')}" in names, source
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
    assert info["rewardsmith"].startswith(str(target)), info["rewardsmith"]
    for path in info["mods"].values():
        assert path.startswith(str(target)), path
    assert data_files or not shipped_sources


#: The name the project had before: ``harbor-rewardkit`` (and its fork ``alpen``) install a top-level ``rewardkit``
#: package and command in this same field, so this distribution must install neither.
COLLIDING_NAME = "rewardkit"

VENV_PROBE = """
import importlib.util, json, sys
import rewardsmith
try:
    import rewardkit  # noqa: F401
    old = "importable"
except ModuleNotFoundError as exc:
    old = f"ModuleNotFoundError: {exc}"
print(json.dumps({"file": rewardsmith.__file__, "old": old, "prefix": sys.prefix}))
"""


def _wheel_top_level_names(wheel: Path) -> set[str]:
    """The importable top-level names a wheel installs: its first path parts, less metadata and scripts."""
    tops = set()
    for name in zipfile.ZipFile(wheel).namelist():
        head = name.split("/", 1)[0]
        if head.endswith((".dist-info", ".data")):
            continue
        tops.add(head.removesuffix(".py"))
    return tops


@pytest.mark.slow
def test_fresh_venv_installs_rewardsmith_only(tmp_path: Path) -> None:
    """The built wheel, installed into a fresh virtual environment, brings exactly `rewardsmith` and its command."""
    wheel = _build_wheel(tmp_path / "wheel")
    assert _wheel_top_level_names(wheel) == {"rewardsmith"}, "stray top-level packages in the wheel"
    entry_points = next(n for n in zipfile.ZipFile(wheel).namelist() if n.endswith(".dist-info/entry_points.txt"))
    text = zipfile.ZipFile(wheel).read(entry_points).decode()
    scripts = text.split("[console_scripts]", 1)[1].split("[", 1)[0].split()
    assert scripts[0] == "rewardsmith" and COLLIDING_NAME not in text, text

    # The venv sees the dependencies already installed here (no index needed) but gets its own copy of the package.
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)], check=True, timeout=300)
    python = venv / "bin" / "python"
    install = subprocess.run(
        [str(python), "-m", "pip", "install", "-q", "--no-deps", "--no-index", str(wheel)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert install.returncode == 0, install.stderr[-2000:]
    assert (venv / "bin" / "rewardsmith").exists()
    assert not (venv / "bin" / COLLIDING_NAME).exists()
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    probe = subprocess.run(
        [str(python), "-c", VENV_PROBE], capture_output=True, text=True, timeout=300, env=env, cwd=tmp_path
    )
    assert probe.returncode == 0, probe.stderr[-2000:]
    import json

    info = json.loads(probe.stdout.strip().splitlines()[-1])
    assert info["file"].startswith(str(venv)), info
    assert info["old"].startswith("ModuleNotFoundError"), info
    cli = subprocess.run(
        [str(venv / "bin" / "rewardsmith"), "--help"], capture_output=True, text=True, timeout=300, env=env
    )
    assert cli.returncode == 0 and "rewardsmith" in cli.stdout, cli.stderr[-2000:]
