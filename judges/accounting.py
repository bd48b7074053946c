"""Token and cost accounting for judge calls, with prices the user configures.

Every call a managed client makes is recorded once: served from the cache (free) or sent to the
endpoint, where it either answered (prompt and completion tokens, priced per million) or failed after
its retries. So ``calls = sent + cached`` and ``failed`` is part of ``sent``; ``retries`` counts the
requests the transport repeated and is not a call of its own. ``report()`` is what a run prints at the end.
"""

from __future__ import annotations

import threading
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from rewardsmith.judges.base import Usage
from rewardsmith.transient import KeepsConfig


class Price(BaseModel):
    """USD per million tokens."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    input: float = Field(0.0, ge=0.0)
    output: float = Field(0.0, ge=0.0)


def parse_prices(prices: dict[str, Any] | None) -> dict[str, Price]:
    """``{"gpt-4o-mini": {"input": 0.15, "output": 0.6}, "*": ...}`` -> validated prices (``"*"`` = any model)."""
    return {
        model: value if isinstance(value, Price) else Price.model_validate(value)
        for model, value in (prices or {}).items()
    }


class UsageReport(BaseModel):
    requests: int = Field(0, description="calls sent to the endpoint, answered or failed")
    cache_hits: int = 0
    errors: int = Field(0, description="sent calls that failed after their retries (part of requests)")
    retries: int = Field(0, description="requests repeated by the transport (429/5xx/timeouts/refusals)")
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0
    by_model: dict[str, dict[str, float]] = Field(default_factory=dict)

    @property
    def calls(self) -> int:
        return self.requests + self.cache_hits

    def summary(self) -> str:
        calls = self.calls
        hit_rate = self.cache_hits / calls if calls else 0.0
        return (
            f"judge calls: {calls} ({self.requests} sent, {self.cache_hits} cached = {hit_rate:.0%}; "
            f"{self.errors} of the sent failed); retries: {self.retries}; "
            f"tokens: {self.prompt_tokens} prompt + {self.completion_tokens} completion; cost: ${self.cost_usd:.4f}"
        )


class Accountant(KeepsConfig):
    """Thread-safe counters of calls (sent, cached, failed), retries, tokens and cost."""

    def __init__(self, prices: dict[str, Any] | None = None) -> None:
        self.prices = parse_prices(prices)
        self._lock = threading.Lock()
        self._report = UsageReport()

    _PICKLED = ("prices", "_report")

    def _rebuild(self) -> None:
        self._lock = threading.Lock()

    def price_of(self, model: str) -> Price:
        return self.prices.get(model) or self.prices.get("*") or Price()

    def cost(self, model: str, usage: Usage) -> float:
        price = self.price_of(model)
        return (usage.prompt_tokens * price.input + usage.completion_tokens * price.output) / 1_000_000

    def _row(self, model: str) -> dict[str, float]:
        return self._report.by_model.setdefault(
            model,
            {"requests": 0, "errors": 0, "retries": 0, "prompt_tokens": 0, "completion_tokens": 0, "cost_usd": 0.0},
        )

    def record(self, model: str, usage: Usage, *, cached: bool, retries: int = 0) -> None:
        """One call: a cache hit, or a sent call that answered after ``retries`` repeated requests."""
        with self._lock:
            report = self._report
            if cached:
                report.cache_hits += 1
                return
            cost = self.cost(model, usage)
            report.requests += 1
            report.retries += retries
            report.prompt_tokens += usage.prompt_tokens
            report.completion_tokens += usage.completion_tokens
            report.cost_usd += cost
            row = self._row(model)
            row["requests"] += 1
            row["retries"] = row.get("retries", 0) + retries
            row["prompt_tokens"] += usage.prompt_tokens
            row["completion_tokens"] += usage.completion_tokens
            row["cost_usd"] += cost

    def record_error(self, model: str = "", *, retries: int = 0) -> None:
        """One sent call that failed after ``retries`` repeated requests (it counts as sent and as failed)."""
        with self._lock:
            report = self._report
            report.requests += 1
            report.errors += 1
            report.retries += retries
            row = self._row(model)
            row["requests"] += 1
            row["errors"] = row.get("errors", 0) + 1
            row["retries"] = row.get("retries", 0) + retries

    def report(self) -> UsageReport:
        with self._lock:
            return self._report.model_copy(deep=True)
