"""One rule for pickling objects that hold live resources: keep the configuration, rebuild the runtime.

Rewards and the clients inside them cross process boundaries (TRL's async GRPO scores in a spawned process, Ray
ships rewards to actors, verl pickles its reward function): locks, sockets, SDK clients, worker pools and caches of
loaded models cannot travel, and copying one that happens to pickle (a connection pool, a half-started server)
gives two processes one resource. A class lists the attributes that travel; everything else is rebuilt on the other
side by :meth:`KeepsConfig._rebuild`, which is also the one place that says what the runtime consists of.
"""

from __future__ import annotations

from typing import Any, ClassVar


class KeepsConfig:
    """Pickles only the attributes named in :attr:`_PICKLED`, then calls :meth:`_rebuild` after unpickling.

    An allow-list rather than a list of exclusions: a runtime attribute added later stays out of the pickle by
    default instead of travelling until someone notices.
    """

    #: the attributes that travel (configuration and counters); every other attribute is runtime
    _PICKLED: ClassVar[tuple[str, ...]] = ()

    def __getstate__(self) -> dict[str, Any]:
        return {name: self.__dict__[name] for name in self._PICKLED if name in self.__dict__}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._rebuild()

    def _rebuild(self) -> None:
        """Recreate the runtime (locks, connections, pools, lazily built clients) from the kept attributes."""
