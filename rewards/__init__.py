"""Built-in reward families; importing this package registers them."""

import importlib
import logging

logger = logging.getLogger(__name__)

# Each family registers itself on import. A family whose optional dependency is missing is skipped
# with a debug message, so `pip install rewardkit` stays light.
_FAMILIES = ("format", "length", "math", "code", "judge")

for _family in _FAMILIES:
    try:
        importlib.import_module(f"{__name__}.{_family}")
    except ModuleNotFoundError as exc:
        if exc.name and exc.name.startswith(f"{__name__}."):
            continue  # family not present in this build
        logger.debug("reward family %s unavailable: %s", _family, exc)
