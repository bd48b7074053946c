"""Skip a test module, with the reason and the fix, when an optional extra it needs is not installed.

A user who installs ``rewardkit[dev]`` without one extra gets skips that name the extra, not collection errors.
"""

from __future__ import annotations

import importlib.util

import pytest

#: The modules each extra brings (pyproject.toml's optional dependencies), checked without importing them.
EXTRA_MODULES: dict[str, tuple[str, ...]] = {
    "docker": ("docker",),
    "judge": ("openai",),
    "judge-local": ("transformers", "torch"),
    "trl": ("trl", "transformers", "torch"),
    "audit": ("matplotlib",),
    "serve": ("fastapi", "uvicorn", "prometheus_client", "httpx"),
    "ray": ("ray",),
    "instructions": ("langdetect",),
}


def missing_extra(extra: str) -> str | None:
    """The skip reason when a module of ``extra`` cannot be found, else None."""
    absent = [name for name in EXTRA_MODULES[extra] if not _importable(name)]
    if not absent:
        return None
    return f"needs the '{extra}' extra ({', '.join(absent)} missing): pip install 'rewardkit[{extra}]'"


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
