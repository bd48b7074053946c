"""Type-check the whole ``rewardsmith`` package with mypy, every module under its import name.

The package is assembled by setuptools ``package-dir`` (``rewardsmith.rewards`` <- ``rewards/``, ...), which mypy cannot
map by itself: ``mypy -p rewardsmith`` would check only the files of ``rewardsmith/``. This script builds a link tree of
the installed layout under ``build/typecheck/`` (``rewardsmith/`` with the card folders linked in, read from
``pyproject.toml``), runs mypy there with the ``[tool.mypy]`` settings and prints errors with the real paths.

Usage: ``python3 .ci/typecheck.py [extra mypy arguments]``; exits with mypy's status.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = "rewardsmith"
TREE = ROOT / "build" / "typecheck"


def package_dirs() -> dict[str, str]:
    """Subpackage name (``rewards``) -> folder relative to the root (``rewards``), from setuptools' ``package-dir``."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    mapping = config["tool"]["setuptools"]["package-dir"]
    out = {}
    for name, folder in mapping.items():
        if name == PACKAGE:
            if folder != PACKAGE:
                raise SystemExit(f"typecheck: {PACKAGE} lives in {folder!r}; this script expects ./{PACKAGE}")
            continue
        parent, _, child = name.rpartition(".")
        if parent != PACKAGE:
            raise SystemExit(f"typecheck: {name} is not a direct subpackage of {PACKAGE}; extend the link tree")
        out[child] = folder
    return out


def build_tree() -> Path:
    """``TREE/rewardsmith``: a link per entry of ``rewardsmith/`` and one per card folder, rebuilt every run."""
    target = TREE / PACKAGE
    if target.exists():
        shutil.rmtree(target)
    target.mkdir(parents=True)
    for entry in (ROOT / PACKAGE).iterdir():
        if entry.name != "__pycache__":
            (target / entry.name).symlink_to(entry)
    for child, folder in package_dirs().items():
        if (target / child).exists():
            raise SystemExit(f"typecheck: {PACKAGE}/{child} exists and is also mapped from {folder}/")
        (target / child).symlink_to(ROOT / folder)
    return target


def real_path_rewriter() -> re.Pattern[str]:
    """Matches a tree path at a line's start, so ``rewardsmith/rewards/x.py`` is printed as ``rewards/x.py``."""
    names = "|".join(re.escape(child) for child in package_dirs())
    return re.compile(rf"^{PACKAGE}/({names})/", re.MULTILINE)


def main(argv: list[str]) -> int:
    build_tree()
    mapping = package_dirs()
    command = [
        sys.executable,
        "-m",
        "mypy",
        "--config-file",
        str(ROOT / "pyproject.toml"),
        "--cache-dir",
        str(TREE / ".mypy_cache"),
        "-p",
        PACKAGE,
        *argv,
    ]
    env = {**os.environ, "MYPYPATH": ""}
    done = subprocess.run(command, cwd=TREE, env=env, capture_output=True, text=True)
    pattern = real_path_rewriter()
    for stream, text in ((sys.stdout, done.stdout), (sys.stderr, done.stderr)):
        stream.write(pattern.sub(lambda m: mapping[m.group(1)] + "/", text))
    return done.returncode


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
