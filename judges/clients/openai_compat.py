"""The OpenAI-compatible transport: the ``openai`` SDK against any ``base_url`` (OpenAI, vLLM, llama.cpp, ...).

Retries are done here rather than by the SDK so that every backend behaves the same way: 408, 429,
5xx, timeouts, dropped connections and unreadable bodies are retried with exponential backoff and
jitter (honouring ``Retry-After``); other 4xx fail at once. The SDK stays the transport; which failures
are retried and how long to wait come from :class:`rewardsmith.http.RetryPolicy`, the rule every HTTP client
in rewardsmith follows. After the last attempt the call raises :class:`JudgeError` — an infrastructure
failure, which strategies turn into an abstain, never a verdict.
"""

from __future__ import annotations

import asyncio
import json
import logging
import threading
from collections.abc import Callable
from typing import Annotated, Any

from pydantic import Field

from rewardsmith.http import FailureKind, RetryPolicy, parse_retry_after
from rewardsmith.judges.base import (
    AsyncTransport,
    ChatClient,
    ChatParams,
    ChatResult,
    JudgeError,
    Message,
    TokenLogprob,
    Usage,
)
from rewardsmith.judges.clients.options import ClientOptions, Flag
from rewardsmith.transient import KeepsConfig

logger = logging.getLogger(__name__)


class TransportStats:
    """Attempts and retries made by one transport (what the endpoint actually received).

    A retry is any request after a call's first: after a retryable fault, or re-sent without log-probs
    or with another schema style after the endpoint refused them; ``attempts - retries`` is the calls made.
    """

    def __init__(self) -> None:
        self.attempts = 0
        self.retries = 0
        self._lock = threading.Lock()

    def count(self, *, retry: bool) -> None:
        with self._lock:
            self.attempts += 1
            self.retries += int(retry)


class OpenAIChatClient(AsyncTransport, KeepsConfig):
    """Chat completions over the OpenAI API shape; log-probs are requested when ``top_logprobs > 0``."""

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        timeout: float = 60.0,
        max_retries: int = 4,
        backoff: float = 0.5,
        max_backoff: float = 20.0,
    ) -> None:
        self.model = model
        self.base_url = base_url
        # Local servers (llama.cpp, vLLM) accept any key; the SDK insists on one.
        self.api_key = api_key
        self.timeout = timeout
        self.max_retries = max_retries
        self.backoff = backoff
        self.max_backoff = max_backoff
        self.logprobs_supported = True  # turned off when the endpoint refuses them
        # OpenAI and vLLM take {"type": "json_schema", ...}; llama.cpp's server only {"type": "json_object", "schema"}.
        self.schema_style = "json_schema"
        self.stats = TransportStats()
        # Called before each retry; may raise to end the retries (the embedded server checks it is still alive).
        self.before_retry: Callable[[], None] | None = None
        self._async_clients: dict[int, tuple[Any, Any]] = {}
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"OpenAIChatClient(model={self.model!r}, base_url={self.base_url!r})"

    _PICKLED = (
        "model",
        "base_url",
        "api_key",
        "timeout",
        "max_retries",
        "backoff",
        "max_backoff",
        "logprobs_supported",
        "schema_style",
    )

    def _rebuild(self) -> None:
        self.stats = TransportStats()
        self.before_retry = None
        self._async_clients = {}
        self._lock = threading.Lock()

    # -- SDK clients -----------------------------------------------------------------------------
    def _client_kwargs(self) -> dict[str, Any]:
        import os

        key = self.api_key or os.environ.get("OPENAI_API_KEY") or ("sk-local" if self.base_url else None)
        return {"base_url": self.base_url, "api_key": key, "timeout": self.timeout, "max_retries": 0}

    def _async(self):
        # An async HTTP client is bound to the event loop that created it; keep one per live loop.
        loop = asyncio.get_running_loop()
        with self._lock:
            entry = self._async_clients.get(id(loop))
            if entry is None or entry[0] is not loop:
                from openai import AsyncOpenAI

                self._async_clients = {k: v for k, v in self._async_clients.items() if not v[0].is_closed()}
                entry = (loop, AsyncOpenAI(**self._client_kwargs()))
                self._async_clients[id(loop)] = entry
            return entry[1]

    async def aclose(self) -> None:
        """Close the async HTTP client of the running loop (call before ``asyncio.run`` returns)."""
        loop = asyncio.get_running_loop()
        with self._lock:
            entry = self._async_clients.pop(id(loop), None)
        if entry is not None and entry[0] is loop:
            await entry[1].close()

    # -- requests --------------------------------------------------------------------------------
    def _request(self, messages: list[Message], params: ChatParams) -> dict[str, Any]:
        request: dict[str, Any] = {
            "model": self.model,
            "messages": messages,
            "temperature": params.temperature,
            "max_tokens": params.max_tokens,
        }
        if params.seed is not None:
            request["seed"] = params.seed
        if params.stop:
            request["stop"] = list(params.stop)
        if params.top_logprobs > 0 and self.logprobs_supported:
            request["logprobs"] = True
            request["top_logprobs"] = params.top_logprobs
        if params.json_schema is not None:
            request["response_format"] = response_format(params.json_schema, self.schema_style)
        return request

    async def acomplete(self, messages: list[Message], params: ChatParams) -> ChatResult:
        request = self._request(messages, params)
        attempt = sent = 0
        while True:
            self.stats.count(retry=sent > 0)
            sent += 1
            try:
                response = await self._async().chat.completions.create(**request)
                return to_chat_result(response, self.model).model_copy(update={"retries": sent - 1})
            except Exception as exc:
                if self._refused_logprobs(exc, request) or self._refused_schema_style(exc, request):
                    continue
                await asyncio.sleep(self._retry_delay(exc, attempt, sent))
                attempt += 1

    def _refused_logprobs(self, exc: Exception, request: dict[str, Any]) -> bool:
        """An endpoint without log-prob support answers 400: drop them (for good) and ask again."""
        import openai

        refused = isinstance(exc, openai.BadRequestError) and "logprob" in str(exc).lower()
        if "logprobs" not in request or not refused:
            return False
        if self.logprobs_supported:
            logger.warning("%s does not return log-probs; judging from parsed verdicts instead", self.model)
        self.logprobs_supported = False
        request.pop("logprobs", None)
        request.pop("top_logprobs", None)
        return True

    def _refused_schema_style(self, exc: Exception, request: dict[str, Any]) -> bool:
        """llama.cpp refuses ``json_schema`` and names ``json_object``: switch style (for good) and ask again."""
        response_format_ = request.get("response_format")
        if not response_format_ or response_format_.get("type") != "json_schema" or "json_object" not in str(exc):
            return False
        self.schema_style = "json_object"
        request["response_format"] = {"type": "json_object", "schema": response_format_["json_schema"]["schema"]}
        return True

    @property
    def policy(self) -> RetryPolicy:
        """The retry rule of this client's options (read at each retry, so a changed ``backoff`` applies)."""
        return judge_policy(self.max_retries, self.backoff, self.max_backoff)

    def _retry_delay(self, exc: Exception, attempt: int, sent: int) -> float:
        """Seconds to wait before the next attempt, or raise :class:`JudgeError` when not retryable."""
        policy = self.policy
        retryable, what = classify_error(exc, policy)
        if self.before_retry is not None:
            self.before_retry()
        if not retryable:
            raise JudgeError(f"{self.model} at {self.base_url or 'api.openai.com'}: {what}", retries=sent - 1) from exc
        if attempt >= policy.max_retries:
            raise JudgeError(
                f"{self.model} at {self.base_url or 'api.openai.com'}: {what} (gave up after {attempt + 1} attempts)",
                retries=sent - 1,
            ) from exc
        delay = policy.delay(attempt, _retry_after(exc))
        logger.info("judge request failed (%s); retry %d in %.2fs", what, attempt + 1, delay)
        return delay


class OpenAIOptions(ClientOptions):
    """Any OpenAI-compatible endpoint (``base_url``; default api.openai.com) through the ``openai`` SDK."""

    model: Annotated[str, Flag("spec", "MODEL")] = Field(description="a model name")

    def transport(self) -> ChatClient:
        return OpenAIChatClient(
            self.model, base_url=self.base_url, api_key=self.api_key, timeout=self.timeout, max_retries=self.max_retries
        )


def judge_policy(max_retries: int = 4, backoff: float = 0.5, max_backoff: float = 20.0) -> RetryPolicy:
    """408, 429, 5xx, timeouts, dropped connections and malformed answers retried; waits jittered by up to half."""
    return RetryPolicy(max_retries=max_retries, backoff=backoff, max_backoff=max_backoff, jitter=0.5)


def response_format(schema_json: str, style: str) -> dict[str, Any]:
    """The ``response_format`` that asks an endpoint for an answer following ``schema_json``."""
    schema = json.loads(schema_json)
    if style == "json_object":
        return {"type": "json_object", "schema": schema}
    return {"type": "json_schema", "json_schema": {"name": "answer", "schema": schema}}


def failure_of(exc: Exception) -> tuple[FailureKind, int | None, str]:
    """``(kind, status, description)`` of an exception raised by the SDK or by response conversion."""
    import openai

    if isinstance(exc, openai.APITimeoutError):
        return "timeout", None, "timeout"
    if isinstance(exc, openai.APIConnectionError):  # refused, reset or cut: the SDK does not tell them apart
        return "connect", None, f"connection error: {exc}"
    if isinstance(exc, openai.APIStatusError):
        return "status", exc.status_code, f"HTTP {exc.status_code}: {_short(exc)}"
    if isinstance(exc, (openai.APIResponseValidationError, MalformedResponse, ValueError)):
        return "malformed", None, f"malformed response: {_short(exc)}"
    return "transport", None, f"{type(exc).__name__}: {_short(exc)}"


def classify_error(exc: Exception, policy: RetryPolicy | None = None) -> tuple[bool, str]:
    """``(retryable, description)`` for an exception raised by the SDK or by response conversion."""
    kind, status, what = failure_of(exc)
    retryable = (policy or judge_policy()).retryable(kind, status)
    if kind == "status" and retryable:
        what = f"HTTP {status}"
    return retryable, what


def _short(exc: Exception, limit: int = 200) -> str:
    text = str(exc)
    return text if len(text) <= limit else text[:limit] + "..."


def _retry_after(exc: Exception) -> float | None:
    headers = getattr(getattr(exc, "response", None), "headers", None)
    return parse_retry_after(headers.get("retry-after")) if headers else None


class MalformedResponse(ValueError):
    """The endpoint answered 200 with a body that is not a chat completion."""


def to_chat_result(response: Any, model: str) -> ChatResult:
    """Convert an SDK ``ChatCompletion`` to :class:`ChatResult`; raise :class:`MalformedResponse` if it is not one."""
    choices = getattr(response, "choices", None)
    if not choices:
        raise MalformedResponse(f"no choices in response: {str(response)[:200]}")
    choice = choices[0]
    message = getattr(choice, "message", None)
    if message is None:
        raise MalformedResponse("choice without a message")
    text = message.content or ""
    logprobs = None
    content = getattr(getattr(choice, "logprobs", None), "content", None)
    if content:
        logprobs = [
            TokenLogprob(
                token=entry.token,
                logprob=entry.logprob,
                top={alt.token: alt.logprob for alt in (entry.top_logprobs or [])},
            )
            for entry in content
        ]
    usage = getattr(response, "usage", None)
    return ChatResult(
        text=text,
        logprobs=logprobs,
        usage=Usage(
            prompt_tokens=getattr(usage, "prompt_tokens", 0) or 0,
            completion_tokens=getattr(usage, "completion_tokens", 0) or 0,
        ),
        model=getattr(response, "model", None) or model,
        finish_reason=getattr(choice, "finish_reason", None),
    )
