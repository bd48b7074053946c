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

from rewardsmith.adapters.runtime.serve.app import create_app
from rewardsmith.adapters.runtime.serve.service import RewardService
from rewardsmith.adapters.runtime.serve.settings import ServeSettings
from rewardsmith.adapters.runtime.serve.specs import ServedReward
from rewardsmith.reward import Reward

logger = logging.getLogger(__name__)


class DrainingServer(uvicorn.Server):
    """uvicorn's server with a drain phase between the signal and the shutdown."""

    def __init__(
        self,
        config: uvicorn.Config,
        service: RewardService,
        ready_line: str | None = None,
        announce: TextIO | None = None,
    ) -> None:
        super().__init__(config)
        self.service = service
        self.ready_line = ready_line
        self.announce = announce

    async def startup(self, sockets: list[Any] | None = None) -> None:
        # The ready line is a promise that a connection succeeds: print it only once uvicorn listens.
        await super().startup(sockets=sockets)
        if self.started and self.announce is not None and self.ready_line is not None:
            self.announce.write(self.ready_line)
            self.announce.flush()

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
    """Serve until drained; prints ``rewardsmith serve: ready on http://HOST:PORT`` once the server listens."""
    service = RewardService(rewards, settings)
    app = create_app(service)
    config = uvicorn.Config(
        app,
        host=settings.host,
        port=settings.port,
        log_level=settings.log_level,
        timeout_graceful_shutdown=settings.drain_timeout_s,  # type: ignore[arg-type]  # float works; uvicorn says int
        access_log=False,
    )
    sock = config.bind_socket()
    host, port = sock.getsockname()[:2]
    shown = f"[{host}]" if ":" in host else host
    ready_line = f"rewardsmith serve: ready on http://{shown}:{port} (rewards: {', '.join(service.rewards)})\n"
    server = DrainingServer(config, service, ready_line, announce)
    try:
        server.run(sockets=[sock])
    finally:
        _close_rewards(service.rewards.values())
        if service.monitor is not None:
            service.monitor.close()
    return 0


def _close_rewards(served: Any) -> None:
    for item in served:
        close = getattr(item.reward, "close", None)
        if callable(close):
            try:
                close()
            except Exception:
                logger.debug("closing %s failed", item.reward.name, exc_info=True)
