"""Built-in reward families; importing this package registers them.

Each family imports its optional dependencies inside the functions that need them, so a light install still
imports every family; an import error here is a bug and fails loudly.
"""

from rewardkit.rewards import code, format, judge, length, math  # noqa: F401  (each registers on import)
