"""Ray scale-out, the one door: ``from rewardsmith.ray import RayPool, serve_on_ray``.

- :class:`RayPool` (registered as ``ray_pool``): any reward spec, scored by a pool of actors that each build the
  reward once, placed across nodes, with bounded in-flight chunks and reruns when an actor or node dies;
- :func:`serve_on_ray`: ``rewardsmith serve`` as a Ray Serve deployment with N (or autoscaled) replicas.

Nothing here imports Ray or the implementation (``rewardsmith.adapters.runtime.ray``) when ``rewardsmith`` is imported;
the names resolve on first access, and Ray itself on the first batch (or deployment), so the reward pickles and
registers anywhere and reports a missing Ray as the reason of an unscorable sample.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # what IDEs and type checkers resolve; at run time the names load lazily
    from rewardsmith.adapters.runtime.ray.config import RayPoolConfig
    from rewardsmith.adapters.runtime.ray.connect import ClusterUnavailable
    from rewardsmith.adapters.runtime.ray.pool import RayPool
    from rewardsmith.adapters.runtime.ray.serve import serve_on_ray

_EXPORTS = {
    "RayPool": "rewardsmith.adapters.runtime.ray.pool",
    "RayPoolConfig": "rewardsmith.adapters.runtime.ray.config",
    "ClusterUnavailable": "rewardsmith.adapters.runtime.ray.connect",
    "serve_on_ray": "rewardsmith.adapters.runtime.ray.serve",
}

__all__ = ["ClusterUnavailable", "RayPool", "RayPoolConfig", "serve_on_ray"]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'rewardsmith.ray' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)


def __dir__() -> list[str]:
    return __all__
