"""Ray scale-out's implementation: :mod:`.pool` (``ray_pool``), :mod:`.serve`, and their parts.

The public door is :mod:`rewardsmith.ray` (``from rewardsmith.ray import RayPool, serve_on_ray``); this package exports
nothing, so there is one way in. Importing it does not import Ray.
"""
