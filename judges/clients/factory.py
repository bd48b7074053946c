"""The one entry point for a judge client: ``make_client(backend=...)`` -> a :class:`ChatClient`.

Whatever the backend, the returned client adds the same operations around it: the on-disk cache
(a hit costs nothing and sends nothing), client-side rpm/tpm pacing, bounded concurrency, and token
and cost accounting. Callers cannot tell llama.cpp from OpenAI from transformers except by what they
configured. What they configure is the client kind's options model (:mod:`.options`), the one declaration of
every option, which ``make_client``'s keywords, YAML (:class:`JudgeClientConfig`) and the command line read.

>>> client = make_client("openai", model="gpt-4o-mini", cache_dir="~/.cache/rewardsmith/judge", rpm=500)
>>> client.complete([{"role": "user", "content": "Say A"}], ChatParams(max_tokens=1)).text  # doctest: +SKIP
'A'
"""

from __future__ import annotations

import functools
import inspect
import logging
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from pydantic import ConfigDict, model_validator

from rewardsmith.judges.accounting import Accountant, UsageReport
from rewardsmith.judges.base import ChatClient, ChatParams, ChatResult, JudgeError, Message
from rewardsmith.judges.cache import RequestCache, cache_key
from rewardsmith.judges.clients.options import ClientOptions
from rewardsmith.judges.limits import ConcurrencyLimit, RateLimiter, estimate_tokens
from rewardsmith.plugins import PluginKind

logger = logging.getLogger(__name__)

#: The judge clients, one kind of the plugin registry (:mod:`rewardsmith.plugins`): a new one is its module (a
#: transport and its :class:`ClientOptions` subclass) plus one line here, or a ``rewardsmith.judge_clients`` entry
#: point. A line's target is the kind's options model (a bare transport callable works too: it takes the common
#: options and receives those its parameters name). ``embedded`` runs with either extra: the llama.cpp server (or a
#: given ``base_url``) through ``openai``, else in-process through ``transformers``.
JUDGE_CLIENTS: PluginKind[Any] = PluginKind("judge_clients", "judge backend")
JUDGE_CLIENTS.declare("embedded", "rewardsmith.judges.clients.embedded:EmbeddedOptions", extra=("judge-local", "judge"))
JUDGE_CLIENTS.declare("openai", "rewardsmith.judges.clients.openai_compat:OpenAIOptions", extra="judge")
JUDGE_CLIENTS.declare(
    "transformers", "rewardsmith.judges.clients.transformers_local:TransformersOptions", extra="judge-local"
)

if TYPE_CHECKING:
    ClientName = str
else:
    #: the type of a config field naming a judge client
    ClientName = JUDGE_CLIENTS.literal()


def missing_backend_packages(backend: str) -> str | None:
    """Why ``backend`` cannot run in this environment (and the install that fixes it), or None.

    Checked when a judge config is built, so a missing extra fails at construction with the fix, not as a
    failed judgment on every sample mid-training.
    """
    return JUDGE_CLIENTS.missing_packages(backend)


def options_class(backend: str) -> type[ClientOptions]:
    """The options model of client kind ``backend`` (imported now; its transport's packages are not needed yet)."""
    target = JUDGE_CLIENTS.load(backend)
    if isinstance(target, type) and issubclass(target, ClientOptions):
        return target
    return _callable_options(target)


@functools.cache
def _callable_options(build: Callable[..., ChatClient]) -> type[ClientOptions]:
    """A third-party transport given as a callable, not an options model: it takes the common options, and its
    constructor receives those of ``model``, ``base_url``, ``api_key``, ``timeout`` and ``max_retries`` it names."""

    class CallableOptions(ClientOptions):
        def transport(self) -> ChatClient:
            accepted = inspect.signature(build).parameters
            given = {name: getattr(self, name) for name in ("base_url", "api_key", "timeout", "max_retries")}
            if self.model is not None:
                given["model"] = self.model
            return build(**{name: value for name, value in given.items() if name in accepted})

    CallableOptions.__name__ = CallableOptions.__qualname__ = f"{getattr(build, '__name__', 'Transport')}Options"
    return CallableOptions


def client_options(backend: str, values: Mapping[str, Any]) -> ClientOptions:
    """The options of client kind ``backend`` validated from ``values`` (None = the kind's default)."""
    kind = options_class(backend)
    given = {name: value for name, value in values.items() if value is not None}
    if kind.model_required() and not given.get("model"):
        raise ValueError(f"backend {backend!r} needs {kind.model_fields['model'].description} (model=)")
    return kind.model_validate(given)


class JudgeClientConfig(ClientOptions):
    """A judge client in a reward config or YAML file: ``backend`` names the kind, the other keys are its options.

    The keys are checked by the kind's options model (a key it does not take, or a missing model, fails here).
    """

    model_config = ConfigDict(extra="allow", frozen=True)  # a kind's own options are its model's to check

    backend: ClientName = "embedded"

    @model_validator(mode="after")
    def _backend_needs(self) -> JudgeClientConfig:
        self.options()
        missing = missing_backend_packages(self.backend)
        if missing:
            raise ValueError(missing)
        return self

    def options(self) -> ClientOptions:
        """These keys as the options model of the kind ``backend`` names (its own defaults for keys not given)."""
        return client_options(self.backend, self.model_dump(exclude={"backend"}, exclude_unset=True))

    def transport(self) -> ChatClient:
        return self.options().transport()

    def build(self) -> ManagedChatClient:
        return make_client(self.options())


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
        options: ClientOptions | None = None,
    ) -> None:
        self.transport = transport
        #: the options it was built from (None when assembled by hand)
        self.options = options
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
        if key is not None and self.cache is not None:
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


def make_client(backend: str | ClientOptions = "embedded", /, **options: Any) -> ManagedChatClient:
    """Build a judge client from a kind's options: an options model, or the kind's name and its fields.

    - ``"embedded"``: the packaged SmolLM2-135M-Instruct, through a llama.cpp server that rewardsmith
      starts on 127.0.0.1 when ``llama-cpp-python[server]`` is installed, else in-process through
      ``transformers`` (no compile, no key, no hub). With ``base_url`` it uses that server instead.
    - ``"openai"``: any OpenAI-compatible endpoint (``base_url``; default api.openai.com).
    - ``"transformers"``: a local model directory or ``.gguf`` file, in-process.

    The keywords (only keywords: a field's name says what its value is) are the fields of the kind's options
    model (:class:`~.options.ClientOptions`: ``model``, ``base_url``, ``api_key``, ``cache_dir``, ``rpm``, ``tpm``,
    ``concurrency``, ``prices``, ``timeout``, ``max_retries``, and a kind's own); None leaves the kind's default.
    """
    if isinstance(backend, ClientOptions):
        if options:
            raise TypeError("make_client(options) takes no other arguments: they are the options model's fields")
        chosen = backend.options() if isinstance(backend, JudgeClientConfig) else backend
    else:
        chosen = client_options(backend, options)
    return ManagedChatClient(
        chosen.transport(),
        cache=RequestCache(chosen.cache_dir) if chosen.cache_dir else None,
        limiter=RateLimiter(chosen.rpm, chosen.tpm),
        concurrency=chosen.concurrency,
        accountant=Accountant(chosen.prices),
        options=chosen,
    )
