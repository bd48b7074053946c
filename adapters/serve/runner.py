"""Run a reward server with uvicorn, draining on SIGTERM.

On the first SIGTERM (or Ctrl-C) the server stops admitting: new scoring requests get 503 and ``/healthz``
reports ``draining`` so clients fail over, while admitted requests (queued ones included) finish. Once
nothing is in flight, or after ``drain_timeout_s``, uvicorn shuts down as usual. A second signal stops at once.
"""

from __future__ import annotations

import logging
import signal
import sys
import time
from collections.abc import Mapping
from types import FrameType
from typing import Any, TextIO

import uvicorn

from rewardkit.adapters.serve.app import create_app
from rewardkit.adapters.serve.service import RewardService
from rewardkit.adapters.serve.settings import ServeSettings
from rewardkit.adapters.serve.specs import ServedReward
from rewardkit.reward import Reward

logger = logging.getLogger(__name__)


class DrainingServer(uvicorn.Server):
    """uvicorn's server with a drain phase between the signal and the shutdown."""

    def __init__(self, config: uvicorn.Config, service: RewardService) -> None:
        super().__init__(config)
        self.service = service

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        # Not recorded for re-raising: a drained server exits 0, it was not killed.
        if self.service.admission.draining:
            self.force_exit = True
            self.should_exit = True
            return
        logger.warning("signal %s: draining (new requests get 503)", signal.Signals(sig).name)
        self.service.admission.begin_drain()

    async def on_tick(self, counter: int) -> bool:
        admission = self.service.admission
        if admission.draining and not self.should_exit:
            waited = time.monotonic() - admission.drain_started
            if self.service.idle or waited > self.service.settings.drain_timeout_s:
                self.should_exit = True
        return await super().on_tick(counter)


def run_server(
    rewards: Mapping[str, Reward | ServedReward], settings: ServeSettings, announce: TextIO | None = sys.stdout
) -> int:
    """Serve until drained; prints ``rewardkit serve: ready on http://HOST:PORT`` once the port is bound."""
    service = RewardService(rewards, settings)
    app = create_app(service)
    config = uvicorn.Config(
        app,
        host=settings.host,
        port=settings.port,
        log_level=settings.log_level,
        timeout_graceful_shutdown=settings.drain_timeout_s,
        access_log=False,
    )
    sock = config.bind_socket()
    host, port = sock.getsockname()[:2]
    server = DrainingServer(config, service)
    if announce is not None:
        shown = f"[{host}]" if ":" in host else host
        announce.write(f"rewardkit serve: ready on http://{shown}:{port} (rewards: {', '.join(service.rewards)})\n")
        announce.flush()
    try:
        server.run(sockets=[sock])
    finally:
        _close_rewards(service.rewards.values())
    return 0


def _close_rewards(served: Any) -> None:
    for item in served:
        close = getattr(item.reward, "close", None)
        if callable(close):
            try:
                close()
            except Exception:
                logger.debug("closing %s failed", item.reward.name, exc_info=True)
