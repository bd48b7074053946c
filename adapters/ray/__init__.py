"""Ray scale-out: a reward whose batches fan out over Ray actors, and the reward server on Ray Serve.

- :class:`RayPool` (registered as ``ray_pool``): any reward spec, scored by a pool of actors that each build the
  reward once, placed across nodes, with bounded in-flight chunks and reruns when an actor or node dies;
- :func:`serve_on_ray`: ``rewardkit serve`` as a Ray Serve deployment with N (or autoscaled) replicas.

Importing this package does not import Ray; the first batch (or deployment) does, so the reward pickles and
registers anywhere and reports a missing Ray as the reason of an unscorable sample.
"""

from rewardkit.adapters.ray.config import RayPoolConfig
from rewardkit.adapters.ray.connect import ClusterUnavailable
from rewardkit.adapters.ray.pool import RayPool
from rewardkit.adapters.ray.serve import serve_on_ray

__all__ = ["ClusterUnavailable", "RayPool", "RayPoolConfig", "serve_on_ray"]
