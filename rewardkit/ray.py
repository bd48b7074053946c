"""``from rewardkit.ray import RayPool, serve_on_ray``: the Ray scale-out, loaded on first use.

Nothing here imports Ray or the adapter when ``rewardkit`` is imported; the names resolve on first access.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "RayPool": "rewardkit.adapters.ray.pool",
    "RayPoolConfig": "rewardkit.adapters.ray.config",
    "ClusterUnavailable": "rewardkit.adapters.ray.connect",
    "serve_on_ray": "rewardkit.adapters.ray.serve",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'rewardkit.ray' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)


def __dir__() -> list[str]:
    return __all__
