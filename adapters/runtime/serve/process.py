"""``rewardsmith serve`` as a child process: start it on a free port, wait until it is ready, stop it.

For scripts that need a real server next to them (benchmarks, tests, a notebook): the server runs exactly as
from the shell, in its own process, and this object only starts, signals and reaps it.
"""

from __future__ import annotations

import os
import re
import selectors
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml

_READY = re.compile(r"ready on (http://\S+)")


class ServerProcess:
    """``with ServerProcess(spec, "--workers", "2") as server: server.url`` — a spec path, or a spec document."""

    def __init__(
        self,
        spec: str | Path | dict[str, Any] | list[Any],
        *args: str,
        env: dict[str, str] | None = None,
        host: str = "127.0.0.1",
        startup_timeout_s: float = 120.0,
    ) -> None:
        self.spec = spec
        self.args = list(args)
        self.env = env
        self.host = host
        self.startup_timeout_s = startup_timeout_s
        self.url = ""
        self.process: subprocess.Popen[str] | None = None
        self._dir = tempfile.TemporaryDirectory(prefix="rewardsmith-serve-")
        self.stderr_path = Path(self._dir.name) / "stderr.log"

    def __enter__(self) -> ServerProcess:
        self.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    def start(self) -> str:
        spec_path = self.spec
        if not isinstance(spec_path, (str, Path)):
            spec_path = Path(self._dir.name) / "spec.yaml"
            spec_path.write_text(yaml.safe_dump(self.spec))
        command = [sys.executable, "-m", "rewardsmith", "serve", "--spec", str(spec_path), "--host", self.host]
        if "--port" not in self.args:
            command += ["--port", "0"]
        env = {**os.environ, **(self.env or {})}
        with open(self.stderr_path, "w") as stderr:
            self.process = subprocess.Popen(
                command + self.args, stdout=subprocess.PIPE, stderr=stderr, text=True, env=env
            )
        self.url = self._wait_ready()
        return self.url

    def _wait_ready(self) -> str:
        assert self.process is not None and self.process.stdout is not None
        deadline = time.monotonic() + self.startup_timeout_s
        selector = selectors.DefaultSelector()
        selector.register(self.process.stdout, selectors.EVENT_READ)
        try:
            while time.monotonic() < deadline:
                if not selector.select(timeout=min(1.0, max(0.0, deadline - time.monotonic()))):
                    if self.process.poll() is not None:
                        break
                    continue
                line = self.process.stdout.readline()
                if not line:
                    break
                found = _READY.search(line)
                if found:
                    return found.group(1)
        finally:
            selector.close()
        self.kill()
        raise RuntimeError(f"rewardsmith serve did not become ready: {self.stderr()[-2000:]}")

    def stderr(self) -> str:
        return self.stderr_path.read_text() if self.stderr_path.exists() else ""

    @property
    def pid(self) -> int:
        assert self.process is not None
        return self.process.pid

    def terminate(self) -> None:
        """SIGTERM: the server drains (in-flight requests finish) and exits."""
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)

    def kill(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait(timeout=30)

    def wait(self, timeout_s: float) -> int:
        assert self.process is not None
        return self.process.wait(timeout=timeout_s)

    def stop(self, timeout_s: float = 30.0) -> None:
        """Drain and stop; kill what does not stop in time."""
        if self.process is None:
            return
        self.terminate()
        try:
            self.process.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            self.kill()
        if self.process.stdout is not None:
            self.process.stdout.close()
        self._dir.cleanup()
