"""``rewardsmith score --ray``: the reward of a scoring run as a pool sized to the cluster it runs on."""

from __future__ import annotations

from typing import Any

from rewardsmith.adapters.runtime.ray.connect import connect
from rewardsmith.adapters.runtime.ray.pool import RayPool


def cluster_pool(spec: Any, address: str, num_actors: int | None = None, **options: Any) -> RayPool:
    """A :class:`RayPool` of ``spec`` on the cluster at ``address`` (``auto`` or ``HOST:PORT``).

    ``num_actors=None`` gives one actor per CPU the cluster has, so a file is scored by the whole cluster. Connects
    first, so a missing cluster is an error here (``ClusterUnavailable``), before any row is scored.
    """
    connect(address)
    if num_actors is None:
        import ray

        num_actors = max(1, int(ray.cluster_resources().get("CPU", 1)))
    return RayPool({"reward": spec, "address": address, "num_actors": num_actors, **options})
