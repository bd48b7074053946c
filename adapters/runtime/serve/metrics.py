"""Prometheus metrics of one server, in a registry of its own (several apps in one process stay apart).

Unscorable samples are counted by the *kind* of reason: the reason with quoted values and numbers
replaced, cut at its first ``:``, so ``timeout: symbolic comparison exceeded 5 s`` counts as ``timeout``
and label cardinality stays bounded (past ``MAX_REASON_KINDS`` kinds per reward, the rest count as ``other``).
"""

from __future__ import annotations

import re

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.exposition import CONTENT_TYPE_LATEST

from rewardsmith.types import RewardResult

MAX_REASON_KINDS = 50
LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0)
BATCH_BUCKETS = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 4096, 16384)
CONTENT_TYPE = CONTENT_TYPE_LATEST

_QUOTED = re.compile(r"'[^']*'|\"[^\"]*\"")
_NUMBER = re.compile(r"\d+(?:\.\d+)?(?:e[-+]?\d+)?")


def reason_kind(reason: str) -> str:
    """A low-cardinality label for an unscorable reason."""
    text = _NUMBER.sub("N", _QUOTED.sub("'…'", reason or "no reason"))
    head = re.split(r"[:;(]", text, maxsplit=1)[0].strip().lower()
    return head[:60] or "no reason"


class ServeMetrics:
    def __init__(self) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        self.requests = Counter(
            "rewardsmith_requests", "HTTP requests answered", ["endpoint", "status"], registry=self.registry
        )
        self.in_flight = Gauge("rewardsmith_requests_in_flight", "requests being handled", registry=self.registry)
        self.queue_depth = Gauge("rewardsmith_queue_depth", "requests waiting for a worker", registry=self.registry)
        self.busy_workers = Gauge(
            "rewardsmith_busy_workers", "worker slots held by scoring work", registry=self.registry
        )
        self.latency = Histogram(
            "rewardsmith_request_latency_seconds",
            "request latency",
            ["endpoint"],
            buckets=LATENCY_BUCKETS,
            registry=self.registry,
        )
        self.sample_latency = Histogram(
            "rewardsmith_sample_latency_seconds",
            "seconds per scored sample (its chunk's time)",
            ["reward"],
            buckets=LATENCY_BUCKETS,
            registry=self.registry,
        )
        self.samples = Counter("rewardsmith_samples", "samples answered", ["reward", "outcome"], registry=self.registry)
        self.unscorable = Counter(
            "rewardsmith_unscorable",
            "unscorable samples by kind of reason",
            ["reward", "reason"],
            registry=self.registry,
        )
        self.rejected = Counter("rewardsmith_rejected", "requests refused", ["why"], registry=self.registry)
        self.batch_samples = Histogram(
            "rewardsmith_batch_samples",
            "samples per scored batch (concurrent requests coalesced)",
            ["reward"],
            buckets=BATCH_BUCKETS,
            registry=self.registry,
        )
        self._kinds: dict[str, set[str]] = {}

    def observe_samples(self, reward: str, results: list[RewardResult], timings: list[float]) -> None:
        kinds = self._kinds.setdefault(reward, set())
        for result, seconds in zip(results, timings, strict=False):
            self.sample_latency.labels(reward).observe(seconds)
            if result.score is not None:
                self.samples.labels(reward, "scored").inc()
                continue
            self.samples.labels(reward, "unscorable").inc()
            kind = reason_kind(result.reason)
            if kind not in kinds:
                if len(kinds) >= MAX_REASON_KINDS:
                    kind = "other"
                else:
                    kinds.add(kind)
            self.unscorable.labels(reward, kind).inc()

    def render(self) -> bytes:
        return generate_latest(self.registry)
