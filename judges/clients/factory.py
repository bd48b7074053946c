"""The one entry point for a judge client: ``make_client(backend=...)`` -> a :class:`ChatClient`.

Whatever the backend, the returned client adds the same operations around it: the on-disk cache
(a hit costs nothing and sends nothing), client-side rpm/tpm pacing, bounded concurrency, and token
and cost accounting. Callers cannot tell llama.cpp from OpenAI from transformers except by what they
configured.

>>> client = make_client("openai", model="gpt-4o-mini", cache_dir="~/.cache/rewardkit/judge", rpm=500)
>>> client.complete([{"role": "user", "content": "Say A"}], ChatParams(max_tokens=1)).text  # doctest: +SKIP
'A'
"""

from __future__ import annotations

import inspect
import logging
import os
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

from rewardkit.backends import Backend, BackendTable
from rewardkit.judges.accounting import Accountant, Price, UsageReport
from rewardkit.judges.base import ChatClient, ChatParams, ChatResult, JudgeError, Message
from rewardkit.judges.cache import RequestCache, cache_key
from rewardkit.judges.limits import ConcurrencyLimit, RateLimiter, estimate_tokens

logger = logging.getLogger(__name__)

#: The judge clients: a new one is its transport module plus one line here (or a ``rewardkit.judge_clients`` entry
#: point). A transport's constructor receives ``model`` under ``model_parameter`` and those of ``base_url``,
#: ``api_key``, ``timeout`` and ``max_retries`` it names.
JUDGE_CLIENTS = BackendTable(
    "judge backend",
    "rewardkit.judge_clients",
    [
        Backend(
            "embedded",
            "rewardkit.judges.clients.embedded:embedded_transport",
            extra="judge-local",
            needs=(("openai",), ("transformers", "torch")),
            install="the 'judge-local' extra (or the 'judge' extra with llama-cpp-python): "
            "pip install 'rewardkit[judge-local]'",
        ),
        Backend(
            "openai",
            "rewardkit.judges.clients.openai_compat:OpenAIChatClient",
            extra="judge",
            needs=(("openai",),),
            install="the 'judge' extra (openai missing): pip install 'rewardkit[judge]'",
            model_parameter="model",
            model_help="a model name",
            argument="MODEL",
        ),
        Backend(
            "transformers",
            "rewardkit.judges.clients.transformers_local:TransformersChatClient",
            extra="judge-local",
            needs=(("transformers", "torch"),),
            install="the 'judge-local' extra: pip install 'rewardkit[judge-local]'",
            model_parameter="model_path",
            model_help="a model directory or GGUF path",
            argument="PATH",
        ),
    ],
)

#: the type of a config field naming a judge client
ClientName = JUDGE_CLIENTS.literal()


def missing_backend_packages(backend: str) -> str | None:
    """Why ``backend`` cannot run in this environment (and the install that fixes it), or None.

    Checked when a judge config is built, so a missing extra fails at construction with the fix, not as a
    failed judgment on every sample mid-training.
    """
    return JUDGE_CLIENTS.missing_packages(backend)


class JudgeClientConfig(BaseModel):
    """Everything needed to build a judge client; lives in reward configs and YAML files."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    backend: ClientName = "embedded"
    model: str | None = Field(None, description="model name (openai), model dir or GGUF path (transformers)")
    base_url: str | None = Field(None, description="OpenAI-compatible endpoint, e.g. http://127.0.0.1:8000/v1")
    api_key: str | None = Field(None, description="default: $OPENAI_API_KEY; any string for local servers")
    cache_dir: str | None = Field(None, description="directory of the on-disk request cache; None = no cache")
    rpm: float | None = Field(None, gt=0, description="client-side requests per minute")
    tpm: float | None = Field(None, gt=0, description="client-side tokens per minute")
    concurrency: int = Field(8, ge=1, description="requests in flight at most")
    prices: dict[str, Price] | None = Field(None, description='USD per 1M tokens: {"model": {"input", "output"}}')
    timeout: float = Field(60.0, gt=0, description="seconds per request")
    max_retries: int = Field(4, ge=0, description="retries on 429/5xx/timeouts")

    @model_validator(mode="after")
    def _backend_needs(self) -> JudgeClientConfig:
        model_help = JUDGE_CLIENTS.get(self.backend).model_help
        if model_help and not self.model:
            raise ValueError(f"backend {self.backend!r} needs {model_help}")
        missing = missing_backend_packages(self.backend)
        if missing:
            raise ValueError(missing)
        return self

    def build(self) -> ManagedChatClient:
        return make_client(**self.model_dump(exclude_none=True))


class ManagedChatClient:
    """A transport wrapped with cache -> pacing -> concurrency -> accounting (itself a :class:`ChatClient`)."""

    def __init__(
        self,
        transport: ChatClient,
        *,
        cache: RequestCache | None = None,
        limiter: RateLimiter | None = None,
        concurrency: int = 8,
        accountant: Accountant | None = None,
    ) -> None:
        self.transport = transport
        self.cache = cache
        self.limiter = limiter or RateLimiter()
        self.concurrency = ConcurrencyLimit(concurrency)
        self.accountant = accountant or Accountant()

    @property
    def model(self) -> str:
        return self.transport.model

    def __repr__(self) -> str:
        return f"ManagedChatClient({self.transport!r}, cache={self.cache and str(self.cache.path)!r})"

    def report(self) -> UsageReport:
        return self.accountant.report()

    async def aclose(self) -> None:
        """Release the running loop's connections, so a loop closed by ``asyncio.run`` leaves nothing behind."""
        aclose = getattr(self.transport, "aclose", None)
        if aclose is not None:
            await aclose()

    def close(self) -> None:
        """Stop what the transport owns (the embedded llama.cpp server)."""
        close = getattr(self.transport, "close", None)
        if close is not None:
            close()

    def _cached(self, messages: list[Message], params: ChatParams) -> tuple[str | None, ChatResult | None]:
        if self.cache is None:
            return None, None
        key = cache_key(self.model, messages, params)
        return key, self.cache.get(key)

    def _finish(self, key: str | None, result: ChatResult, reservation: int | None) -> ChatResult:
        if reservation is not None:
            self.limiter.settle(reservation, result.usage.prompt_tokens + result.usage.completion_tokens)
        self.accountant.record(self.model, result.usage, cached=False, retries=result.retries)
        if key is not None:
            self.cache.put(key, result)
        return result

    def complete(self, messages: list[Message], params: ChatParams) -> ChatResult:
        key, hit = self._cached(messages, params)
        if hit is not None:
            self.accountant.record(self.model, hit.usage, cached=True)
            return hit
        with self.concurrency.sync:
            reservation = self.limiter.wait(estimate_tokens(messages, params)) if self.limiter.active else None
            try:
                result = self.transport.complete(messages, params)
            except JudgeError as exc:
                self.accountant.record_error(self.model, retries=getattr(exc, "retries", 0))
                raise
        return self._finish(key, result, reservation)

    async def acomplete(self, messages: list[Message], params: ChatParams) -> ChatResult:
        key, hit = self._cached(messages, params)
        if hit is not None:
            self.accountant.record(self.model, hit.usage, cached=True)
            return hit
        async with self.concurrency.for_loop():
            reservation = (
                await self.limiter.await_slot(estimate_tokens(messages, params)) if self.limiter.active else None
            )
            try:
                result = await self.transport.acomplete(messages, params)
            except JudgeError as exc:
                self.accountant.record_error(self.model, retries=getattr(exc, "retries", 0))
                raise
        return self._finish(key, result, reservation)


def make_client(
    backend: ClientName = "embedded",
    model: str | None = None,
    base_url: str | None = None,
    api_key: str | None = None,
    cache_dir: str | os.PathLike[str] | None = None,
    rpm: float | None = None,
    tpm: float | None = None,
    concurrency: int = 8,
    prices: dict[str, Any] | None = None,
    *,
    timeout: float = 60.0,
    max_retries: int = 4,
) -> ManagedChatClient:
    """Build a judge client.

    - ``"embedded"``: the packaged SmolLM2-135M-Instruct, through a llama.cpp server that rewardkit
      starts on 127.0.0.1 when ``llama-cpp-python[server]`` is installed, else in-process through
      ``transformers`` (no compile, no key, no hub). With ``base_url`` it uses that server instead.
    - ``"openai"``: any OpenAI-compatible endpoint (``base_url``; default api.openai.com).
    - ``"transformers"``: a local model directory or ``.gguf`` file, in-process.
    """
    plugin = JUDGE_CLIENTS.get(backend)
    if plugin.model_help and not model:
        raise ValueError(f"backend {backend!r} needs model= ({plugin.model_help})")
    build = JUDGE_CLIENTS.load(backend)
    accepted = inspect.signature(build).parameters
    given = {"base_url": base_url, "api_key": api_key, "timeout": timeout, "max_retries": max_retries}
    options = {name: value for name, value in given.items() if name in accepted}
    if plugin.model_parameter:
        options[plugin.model_parameter] = model
    transport: ChatClient = build(**options)
    return ManagedChatClient(
        transport,
        cache=RequestCache(cache_dir) if cache_dir else None,
        limiter=RateLimiter(rpm, tpm),
        concurrency=concurrency,
        accountant=Accountant(prices),
    )
