"""Reward-hacking signals for trainers that score over HTTP (verl, OpenRLHF): :mod:`rewardsmith.monitor` in the server.

The server cuts the stream of samples it scores for a monitored reward into batches of ``sample`` completions (a
larger request is one batch) and feeds each batch, with its scores and columns, to one
:class:`~rewardsmith.monitor.HackMonitor` per reward; the monitor shadow-scores every ``every``-th batch and tests its
signals. That work runs on one thread of its own, never on the event loop nor in the scoring pool; when the shadow
falls behind, a batch is dropped (counted) rather than queued without bound, so monitoring never slows scoring.

Each signal is a gauge ``rewardsmith_monitor_<signal>{reward=...}`` on ``/metrics``; ``GET /monitor`` shows the same
as JSON, and the alarm is logged once each time it turns on.
"""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Gauge

from rewardsmith.monitor import HackMonitor, MonitorConfig
from rewardsmith.types import RewardResult

logger = logging.getLogger(__name__)

#: flushed batches that may wait for the monitor thread before new ones are dropped
MAX_PENDING = 4
_UNSAFE = re.compile(r"[^a-zA-Z0-9_]")


class _ServerSaysIt(logging.Filter):
    """Drops the monitor's own alarm line on the server's monitor thread: the server logs it, naming the reward."""

    def filter(self, record: logging.LogRecord) -> bool:
        ours = (record.threadName or "").startswith(THREAD_PREFIX)
        return not (ours and str(record.msg).startswith("reward hacking alarm"))


THREAD_PREFIX = "rewardsmith-monitor"
_QUIET = _ServerSaysIt()
logging.getLogger("rewardsmith.monitor.monitor").addFilter(_QUIET)  # idempotent: a filter is added once


def gauge_name(metric: str) -> str:
    """``monitor/precision_low`` → ``rewardsmith_monitor_precision_low``."""
    return "rewardsmith_" + _UNSAFE.sub("_", metric)


class _Stream:
    """One monitored reward: its monitor, the batch being filled and the alarm state last seen."""

    def __init__(self, name: str, config: MonitorConfig) -> None:
        self.name = name
        self.monitor = HackMonitor(config)
        self.completions: list[Any] = []
        self.scores: list[float | None] = []
        self.columns: dict[str, list[Any]] = {}
        self.alarm_on = False
        self.batches = 0

    def add(self, completions: Sequence[Any], scores: Sequence[float | None], columns: Mapping[str, Sequence[Any]]):
        """Append a request's samples; a column missing on one side is padded with None so rows stay aligned."""
        before = len(self.completions)
        for key in set(self.columns) | set(columns):
            values = list(columns.get(key) or [None] * len(completions))
            self.columns.setdefault(key, [None] * before).extend(values)
        self.completions += list(completions)
        self.scores += list(scores)

    def take(self) -> tuple[list[Any], list[float | None], dict[str, list[Any]]]:
        batch = self.completions, self.scores, self.columns
        self.completions, self.scores, self.columns = [], [], {}
        return batch


class ServeMonitor:
    """Feeds served rewards' scored samples to their monitors and exports the signals as Prometheus gauges."""

    def __init__(self, config: MonitorConfig, rewards: Iterable[str], registry: CollectorRegistry) -> None:
        self.config = config
        self.streams = {name: _Stream(name, config) for name in rewards}
        self.registry = registry
        self._gauges: dict[str, Gauge] = {}
        self._gauge_lock = threading.Lock()
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix=THREAD_PREFIX)
        self._pending = 0
        self._pending_lock = threading.Lock()
        self.batches = Counter(
            "rewardsmith_monitor_batches", "scored batches handed to the monitor", ["reward"], registry=registry
        )
        self.dropped = Counter(
            "rewardsmith_monitor_dropped",
            "batches dropped because the shadow fell behind",
            ["reward"],
            registry=registry,
        )
        for name in self.streams:
            self._gauge("monitor/alarm").labels(name).set(0.0)

    @property
    def shadows(self) -> list[Any]:
        return [stream.monitor.shadow for stream in self.streams.values()]

    @property
    def alarm(self) -> bool:
        return any(stream.alarm_on for stream in self.streams.values())

    # -- the event loop's side: cheap appends --------------------------------------------------------------------
    def record(
        self, reward: str, completions: Sequence[Any], results: Sequence[RewardResult], columns: Mapping[str, Any]
    ) -> None:
        """Buffer one answered request; hand a full batch to the monitor thread. Never raises, never blocks."""
        stream = self.streams.get(reward)
        if stream is None or not completions:
            return
        try:
            stream.add(completions, [r.score for r in results], columns)
            if len(stream.completions) >= self.config.sample:
                self._hand_over(stream, *stream.take())
        except Exception:
            logger.warning("reward monitor: batch of %r skipped after an error", reward, exc_info=True)

    def _hand_over(self, stream: _Stream, completions: list[Any], scores: list[float | None], columns: dict) -> None:
        with self._pending_lock:
            if self._pending >= MAX_PENDING:
                self.dropped.labels(stream.name).inc()
                return
            self._pending += 1
        self._executor.submit(self._observe, stream, completions, scores, columns)

    # -- the monitor thread ------------------------------------------------------------------------------------
    def _observe(self, stream: _Stream, completions: list[Any], scores: list[float | None], columns: dict) -> None:
        try:
            # The monitor groups completions by the ``prompts`` column, as TRL names it.
            kwargs = {("prompts" if k == "prompt" else k): v for k, v in columns.items()}
            checks = len(stream.monitor.history)
            stream.monitor.observe(completions, scores, kwargs)
            stream.batches += 1
            self.batches.labels(stream.name).inc()
            if len(stream.monitor.history) > checks:
                self._publish(stream)
        except Exception:
            logger.warning("reward monitor: check of %r failed", stream.name, exc_info=True)
        finally:
            with self._pending_lock:
                self._pending -= 1

    def _publish(self, stream: _Stream) -> None:
        latest = dict(stream.monitor.latest)
        for metric, value in latest.items():
            self._gauge(metric).labels(stream.name).set(value)
        on = latest.get("monitor/alarm", 0.0) >= 1.0
        if on and not stream.alarm_on:
            check = len(stream.monitor.history) - 1
            raised = [a for a in stream.monitor.alarms if a.check == check]
            logger.warning(
                "rewardsmith serve: reward hacking alarm on reward %r (%s): %s",
                stream.name,
                ", ".join(a.signal for a in raised),
                "; ".join(a.message for a in raised),
            )
        stream.alarm_on = on

    def _gauge(self, metric: str) -> Gauge:
        with self._gauge_lock:
            gauge = self._gauges.get(metric)
            if gauge is None:
                gauge = Gauge(
                    gauge_name(metric), f"rewardsmith.monitor signal {metric}", ["reward"], registry=self.registry
                )
                self._gauges[metric] = gauge
            return gauge

    # -- reading -----------------------------------------------------------------------------------------------
    def describe(self) -> dict[str, Any]:
        """What ``GET /monitor`` shows."""
        return {
            "alarm": self.alarm,
            "shadow": self.config.shadow,
            "every": self.config.every,
            "sample": self.config.sample,
            "rewards": {
                name: {
                    "alarm": stream.alarm_on,
                    "batches": stream.batches,
                    "checks": len(stream.monitor.history),
                    "signals": {k.removeprefix("monitor/"): v for k, v in stream.monitor.latest.items()},
                    "alarms": [
                        {"signal": a.signal, "check": a.check, "message": a.message}
                        for a in _first_per_signal(stream.monitor.alarms)
                    ],
                }
                for name, stream in self.streams.items()
            },
        }

    def wait_idle(self, timeout_s: float = 30.0) -> bool:
        """Wait until every handed-over batch is checked (for tests and shutdown)."""
        import time

        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            with self._pending_lock:
                if self._pending == 0:
                    return True
            time.sleep(0.02)
        return False

    def close(self) -> None:
        self._executor.shutdown(wait=False, cancel_futures=True)
        for shadow in self.shadows:
            close = getattr(shadow, "close", None)
            if callable(close):
                try:
                    close()
                except Exception:
                    logger.debug("closing the shadow %s failed", getattr(shadow, "name", shadow), exc_info=True)


def _first_per_signal(alarms: Sequence[Any]) -> list[Any]:
    seen: dict[str, Any] = {}
    for alarm in alarms:
        seen.setdefault(alarm.signal, alarm)
    return list(seen.values())
