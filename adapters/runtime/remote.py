"""``remote``: a reward scored by one or more ``rewardsmith serve`` servers, as an ordinary rewardsmith reward.

TRL, verl and the mini trainer take it like any other reward (sync and async paths; it pickles into spawned
workers). A batch is cut into chunks of ``chunk_size`` samples that are sent, at most ``max_in_flight`` at a
time, to the least busy healthy server.
A chunk whose server fails — refused connection, dropped connection, timeout, 5xx, 503 while draining, 429
when full — is sent to another server at once (the same server only after a backoff); a failed server is
skipped for a cooldown that grows with its consecutive failures and is health-checked (``GET /healthz``)
before it gets work again. A chunk no server could score after ``max_attempts`` tries is unscorable with the
reason, never 0.0: an infrastructure failure must not look like a wrong answer. The requests, their failures,
the backoff and the servers' health are ``rewardsmith.http``'s; the tries of a chunk are counted here, one
request at a time, because a chunk a server finds too large (413) is halved instead of retried.

A served reward whose score depends on the other samples (``batch_dependency`` in ``GET /v1/rewards``, e.g. a
group judge) gets each batch in one request, which the server cuts by whole groups; ``group_size`` overrides
that with chunks of whole groups of that many adjacent samples.

>>> reward = get_reward("remote", {"urls": ["http://10.0.0.5:8000", "http://10.0.0.6:8000"],
...                                "reward": "math_equivalence", "token_env": "REWARDSMITH_TOKEN"})  # doctest: +SKIP
>>> reward([r"\\boxed{4}"], solution=["4"])  # doctest: +SKIP
[1.0]
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import time
from collections.abc import Mapping
from typing import Any

import httpx
from pydantic import Field, field_validator, model_validator

from rewardsmith import http
from rewardsmith.bridge import run_sync
from rewardsmith.groups import BatchDependency
from rewardsmith.registry import register_reward
from rewardsmith.reward import Reward, RewardConfig
from rewardsmith.transient import KeepsConfig
from rewardsmith.types import RewardResult

logger = logging.getLogger(__name__)

#: Statuses after which the same chunk is sent to another server (the server, not the request, is at fault).
RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})
HEALTH_TIMEOUT_S = 3.0
NOT_HEALTH_JSON = "health answer is not the JSON rewardsmith serve sends"


class RemoteConfig(RewardConfig):
    urls: list[str] = Field(min_length=1, description="base URLs of rewardsmith servers, e.g. http://10.0.0.5:8000")
    reward: str = Field(description="served reward name (GET /v1/rewards)")
    token_env: str | None = Field(None, description="environment variable holding the bearer token")
    chunk_size: int = Field(64, ge=1, description="samples per request")
    group_size: int | None = Field(
        None, ge=1, description="keep groups of this many adjacent samples in one chunk (default: as served)"
    )
    max_in_flight: int = Field(8, ge=1, description="chunk requests in flight at once")
    timeout_s: float = Field(300.0, gt=0, description="per request; the server's deadline is set a little shorter")
    connect_timeout_s: float = Field(5.0, gt=0, description="per connection attempt")
    max_attempts: int = Field(4, ge=1, description="tries per chunk, over different servers when possible")
    backoff_s: float = Field(0.5, ge=0, description="first wait before retrying a server that failed this chunk")
    max_backoff_s: float = Field(10.0, ge=0, description="longest wait between tries and longest cooldown")
    name: str | None = Field(None, description="logged name (default: the served reward's name)")

    @field_validator("urls")
    @classmethod
    def _base_urls(cls, urls: list[str]) -> list[str]:
        out = []
        for url in urls:
            if not url.startswith(("http://", "https://")):
                raise ValueError(f"{url!r} is not an http(s) URL")
            out.append(url.rstrip("/").removesuffix("/v1/score"))
        return out

    @model_validator(mode="after")
    def _token_present(self) -> RemoteConfig:
        if self.token_env and not os.environ.get(self.token_env):
            raise ValueError(f"token_env {self.token_env!r} is not set in this process's environment")
        return self


@register_reward("remote")
class RemoteReward(KeepsConfig, Reward[RemoteConfig]):
    """Scores on ``rewardsmith serve`` servers; results equal the served reward's, sample for sample."""

    name = "remote"

    def __init__(self, config: Any = None, **overrides: Any) -> None:
        super().__init__(config, **overrides)
        self.__name__ = self.config.name or self.config.reward
        self._reset_health()

    # Server health is this process's observation (monotonic clock): it is not pickled, and no connection is.
    _PICKLED = ("config", "__name__")

    def _rebuild(self) -> None:
        self._reset_health()

    def _reset_health(self) -> None:
        cfg = self.config
        # A failed server rests backoff_s doubling per consecutive failure (or its Retry-After), up to max_backoff_s.
        self._pool = http.EndpointPool(
            cfg.urls, cooldown_s=cfg.backoff_s, max_cooldown_s=cfg.max_backoff_s, strategy="least_busy"
        )
        self._policy = remote_policy(cfg)
        self._transport = http.Transport(
            timeout=httpx.Timeout(cfg.timeout_s, connect=min(cfg.connect_timeout_s, cfg.timeout_s)),
            limits=httpx.Limits(max_connections=cfg.max_in_flight + len(cfg.urls)),
        )
        #: each probed server's ``batch_dependency`` of the served reward (absent: not declared)
        self._declared: dict[str, str | None] = {}

    # Read-only views of the pool's health (what logs and checks read): failed since their last success...
    @property
    def _down_until(self) -> dict[str, float]:
        now = time.monotonic()
        return {url: now + h.resting_s for url, h in self._pool.health().items() if h.failures}

    @property
    def _failures(self) -> dict[str, int]:
        return {url: h.failures for url, h in self._pool.health().items() if h.failures}

    # ...and answered their last request (or health check).
    @property
    def _known_good(self) -> set[str]:
        return {url for url, h in self._pool.health().items() if h.confirmed}

    # -- the reward ------------------------------------------------------------------------------
    def score_batch(self, completions: list[str | None], rows: list[dict[str, Any]]) -> list[RewardResult]:
        return run_sync(self.ascore_batch(completions, rows), close=self._transport)

    async def ascore_batch(self, completions: list[str | None], rows: list[dict[str, Any]]) -> list[RewardResult]:
        cfg = self.config
        results: list[RewardResult | None] = [None] * len(completions)
        await self._check_health()
        gate = asyncio.Semaphore(cfg.max_in_flight)
        await asyncio.gather(
            *(self._score_chunk(gate, chunk, completions, rows, results) for chunk in self._chunks(rows))
        )
        return [r if r is not None else RewardResult.unscorable("remote: internal error: not scored") for r in results]

    @property
    def batch_dependency(self) -> BatchDependency:
        """``group`` with ``group_size``; ``batch`` when a server declared a dependency (its groups are its own)."""
        if self.config.group_size:
            return "group"
        return "batch" if self._served_dependent() else None

    def groups(self, rows: list[dict[str, Any]]) -> list[list[int]]:
        size = self.config.group_size
        if size:
            return [list(range(start, min(start + size, len(rows)))) for start in range(0, len(rows), size)]
        return super().groups(rows)

    def health(self) -> dict[str, str]:
        """``GET /healthz`` on every server: ``"ok"`` or what went wrong (for a pre-flight check)."""

        async def probe_all() -> dict[str, str]:
            found = await asyncio.gather(*(self._probe(url) for url in self.config.urls))
            return dict(zip(self.config.urls, found, strict=True))

        return run_sync(probe_all(), close=self._transport)

    # -- chunks ----------------------------------------------------------------------------------
    def _chunks(self, rows: list[dict[str, Any]]) -> list[list[int]]:
        cfg = self.config
        size = cfg.chunk_size
        if cfg.group_size:
            size = max(cfg.group_size, size - size % cfg.group_size)
        elif self._served_dependent():
            size = len(rows)  # the server keeps its groups whole; a cut here could split one
        n = len(rows)
        return [list(range(start, min(start + size, n))) for start in range(0, n, size)]

    async def _score_chunk(
        self,
        gate: asyncio.Semaphore,
        chunk: list[int],
        completions: list[str | None],
        rows: list[dict[str, Any]],
        results: list[RewardResult | None],
    ) -> None:
        cfg = self.config
        body = _request_body(cfg, [completions[i] for i in chunk], [rows[i] for i in chunk])
        tried: list[str] = []
        failures: list[str] = []
        for attempt in range(cfg.max_attempts):
            candidate, resting = self._pool.pick(exclude=tried)
            if candidate in tried or resting > 0:  # no fresh healthy server: back off first
                await asyncio.sleep(self._wait_before(attempt, resting))
            async with gate:
                url, _ = self._pool.pick(exclude=tried)  # chosen when it can be sent: the least busy server then
                tried.append(url)
                outcome = await self._post(url, body, len(chunk))
            if isinstance(outcome, list):
                for i, result in zip(chunk, outcome, strict=True):
                    results[i] = result
                return
            kind, detail = outcome
            failures.append(f"{url}: {detail}")
            half = self._split_point(len(chunk)) if kind == "too_large" else 0
            if half:
                await asyncio.gather(
                    self._score_chunk(gate, chunk[:half], completions, rows, results),
                    self._score_chunk(gate, chunk[half:], completions, rows, results),
                )
                return
            if kind in ("rejected", "too_large"):
                reason = f"remote: {detail}"
                break
        else:
            reason = f"remote: infrastructure failure: no server scored this chunk in {cfg.max_attempts} attempts"
            reason += f" (last: {failures[-1]})" if failures else ""
        for i in chunk:
            results[i] = RewardResult.unscorable(reason)

    def _served_dependent(self) -> bool:
        return any(dependency is not None for dependency in self._declared.values())

    def _split_point(self, n: int) -> int:
        """Where a chunk the server found too large may be halved without splitting a group (0: nowhere)."""
        if self.config.group_size:
            return (n // 2) // self.config.group_size * self.config.group_size
        return 0 if self._served_dependent() else n // 2

    async def _post(self, url: str, body: bytes, n: int) -> list[RewardResult] | tuple[str, str]:
        """The chunk's results, or ``(kind, detail)``: ``retry`` (server at fault), ``rejected``, ``too_large``."""
        try:
            with self._pool.using(url):
                parsed = await http.asend_once(
                    self._transport.aclient(), "POST", f"{url}/v1/score", policy=self._policy,
                    parse=lambda response: _parse_results(http.read_json(response), n),
                    content=body, headers=self._headers(),
                )  # fmt: skip
        except http.HTTPFailure as failure:
            detail = f"malformed answer: {failure.__cause__}" if failure.kind == "malformed" else failure.cause
            if failure.retryable:
                self._pool.failed(url, failure.retry_after)
                return "retry", detail
            return ("too_large" if failure.status == 413 else "rejected"), detail
        self._pool.succeeded(url)
        return parsed

    # -- server health -----------------------------------------------------------------------------
    def _headers(self) -> dict[str, str]:
        env = self.config.token_env
        token = os.environ.get(env, "") if env else ""
        return {"authorization": f"Bearer {token}"} if token else {}

    def _wait_before(self, attempt: int, resting_s: float) -> float:
        """The policy's backoff for this try, or longer while the server picked still rests (capped)."""
        backoff = self._policy.delay(max(0, attempt - 1))
        return min(self.config.max_backoff_s, max(backoff, resting_s))

    async def _check_health(self) -> None:
        """Probe the servers not known good (never seen, or back from a cooldown) before giving them work."""
        urls = [u for u in self.config.urls if not self._pool.confirmed(u) and self._pool.is_up(u)]
        if not urls:
            return
        found = await asyncio.gather(*(self._probe(url) for url in urls))
        for url, status in zip(urls, found, strict=True):
            if status == "ok":
                self._pool.succeeded(url)
            else:
                logger.warning("reward server %s unhealthy: %s", url, status)
                self._pool.failed(url)

    async def _get(self, url: str) -> Any:
        """One ``GET`` of a small JSON document (health, descriptions): :class:`rewardsmith.http.HTTPFailure` if not."""
        return await http.asend_once(
            self._transport.aclient(), "GET", url, policy=self._policy, parse=http.read_json,
            headers=self._headers(), timeout=HEALTH_TIMEOUT_S,
        )  # fmt: skip

    async def _probe(self, url: str) -> str:
        try:
            served = list((await self._get(f"{url}/healthz")).get("rewards", []))
        except http.HTTPFailure as failure:
            return (
                "health answer is not the JSON rewardsmith serve sends"
                if failure.kind == "malformed"
                else failure.cause
            )
        except (AttributeError, TypeError):
            return "health answer is not the JSON rewardsmith serve sends"
        if self.config.reward not in served:
            return f"does not serve {self.config.reward!r} (serves {', '.join(served)})"
        await self._read_declaration(url)
        return "ok"

    async def _read_declaration(self, url: str) -> None:
        """The served reward's ``batch_dependency``; a server that does not say is taken at its chunks."""
        try:
            described = {r["name"]: r for r in (await self._get(f"{url}/v1/rewards"))["rewards"]}
            declared = described[self.config.reward]["batch_dependency"]
        except Exception:
            self._declared.pop(url, None)
            return
        self._declared[url] = declared if declared in ("group", "batch") else None


def remote_policy(cfg: RemoteConfig) -> http.RetryPolicy:
    """Which failures send a chunk to another server: any transport failure, a malformed answer, 429, 500, 502,
    503 and 504 (the server, not the request, is at fault); ``Retry-After`` rests the server that sent it."""
    return http.RetryPolicy(
        max_retries=cfg.max_attempts - 1, backoff=cfg.backoff_s, max_backoff=cfg.max_backoff_s,
        retry_statuses=RETRY_STATUSES, retry_server_errors=False,
        retry_on=frozenset({"connect", "timeout", "dropped", "malformed", "transport"}),
    )  # fmt: skip


def _request_body(cfg: RemoteConfig, texts: list[str | None], rows: list[dict[str, Any]]) -> bytes:
    """``/v1/score`` JSON for one chunk; non-text samples travel as ``None`` (the server says why)."""
    keys = list(dict.fromkeys(k for row in rows for k in row))
    columns = {key: [row.get(key) for row in rows] for key in keys}
    payload = {
        "reward": cfg.reward,
        "completions": texts,
        "columns": columns,
        "deadline_s": cfg.timeout_s * 0.9,
    }
    return json.dumps(payload, default=_jsonable).encode()


def _jsonable(value: Any) -> Any:
    tolist = getattr(value, "tolist", None)
    if callable(tolist):
        return tolist()
    if isinstance(value, (bytes, bytearray)):
        return value.decode("utf-8", "replace")
    if isinstance(value, (set, frozenset, tuple)):
        return list(value)
    return str(value)


def _parse_results(body: Mapping[str, Any], n: int) -> list[RewardResult]:
    scores, reasons = body["scores"], body["reasons"]
    if len(scores) != n or len(reasons) != n:
        raise ValueError(f"{len(scores)} scores for {n} samples")
    timings = body.get("timings_s") or [None] * n
    out = []
    for score, reason, seconds in zip(scores, reasons, timings, strict=False):
        if score is not None and (isinstance(score, bool) or not isinstance(score, (int, float))):
            raise TypeError(f"score {score!r} is not a number")
        out.append(RewardResult(score=None if score is None else float(score), reason=str(reason), remote_s=seconds))
    return out
