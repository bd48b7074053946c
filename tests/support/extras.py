"""Skip tests, with the reason and the fix, when an optional extra they need is not installed.

A user who installs ``rewardsmith[dev]`` without one extra gets skips that name the extra, not errors: a module that
imports an extra at the top calls :func:`require_extras`; a test that reaches a missing extra's module while it runs
is turned into a skip by ``tests/conftest.py`` (:func:`extra_of_missing_module`).
"""

from __future__ import annotations

import importlib.util
import re

import pytest

# The modules each extra brings: the table the CLI checks commands against (one source for both).
from rewardsmith.cli.extras import EXTRA_MODULES


def missing_extra(extra: str) -> str | None:
    """The skip reason when a module of ``extra`` cannot be found, else None."""
    absent = [name for name in EXTRA_MODULES[extra] if not _importable(name)]
    if not absent:
        return None
    return f"needs the '{extra}' extra ({', '.join(absent)} missing): pip install 'rewardsmith[{extra}]'"


def extra_of_missing_module(exc: BaseException | None) -> str | None:
    """The skip reason when ``exc`` (or an exception it was raised from) is a missing optional-extra module."""
    seen = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        if isinstance(exc, ModuleNotFoundError) and exc.name:
            top = exc.name.split(".")[0]
            for extra, modules in EXTRA_MODULES.items():
                if top in modules:
                    return f"needs the '{extra}' extra ({top} missing): pip install 'rewardsmith[{extra}]'"
        # rewardsmith's own refusal names the install that fixes it; a skip only when that extra is really absent
        for extra in re.findall(r"pip install 'rewardsmith\[([a-z-]+)\]'", str(exc)):
            if extra in EXTRA_MODULES and missing_extra(extra):
                return missing_extra(extra)
        exc = exc.__cause__ or exc.__context__
    return None


def _importable(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except ImportError:
        return False


def require_extras(*extras: str) -> None:
    """Call at the top of a test module, before importing what the extras provide."""
    for extra in extras:
        reason = missing_extra(extra)
        if reason:
            pytest.skip(reason, allow_module_level=True)
