"""Containment checks shared by the sandbox security tests: a live host (a real TCP listener on 127.0.0.1, a real
secret file and environment variable, the host's process table) and the checks that a hostile run left it alone."""

from __future__ import annotations

import os
import secrets
import socket
import threading
import time
from pathlib import Path

import pytest

from rewardsmith.sandboxes.base import Limits, RunRequest, RunStatus
from tests.support.hostile_programs import HostileCase, render


class Listener:
    """A real TCP server on the host's loopback that records every connection it accepts."""

    def __init__(self) -> None:
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self.connections = 0
        self.stopped = threading.Event()
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while not self.stopped.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            self.connections += 1
            conn.close()

    def close(self) -> None:
        self.stopped.set()
        self.thread.join(timeout=2)
        self.sock.close()


@pytest.fixture(scope="module")
def host(tmp_path_factory):
    """The live host facts the hostile programs try to reach."""
    secret_value = "rk-secret-" + secrets.token_hex(8)
    secret_dir = Path("/root") if os.access("/root", os.W_OK) else tmp_path_factory.mktemp("secret")
    secret_path = secret_dir / f"rewardsmith-secret-{secrets.token_hex(4)}.txt"
    secret_path.write_text(secret_value)
    env_value = "rk-env-" + secrets.token_hex(8)
    os.environ["REWARDSMITH_TEST_SECRET"] = env_value
    listener = Listener()
    values = {
        "SECRET_PATH": str(secret_path),
        "SECRET_VALUE": secret_value,
        "SECRET_ENV_VALUE": env_value,
        "LISTENER_PORT": str(listener.port),
        "HOST_PID": str(os.getpid()),
        "HOST_WRITE_PATH": str(tmp_path_factory.mktemp("host-write") / "pwned.txt"),
        "ORPHAN_MARKER": "rko" + secrets.token_hex(5),
    }
    yield values, listener
    listener.close()
    secret_path.unlink(missing_ok=True)
    os.environ.pop("REWARDSMITH_TEST_SECRET", None)


def check_contained(box, case: HostileCase, host, source: str, *, statuses: tuple[str, ...], slack_s: float) -> None:
    """Run ``source`` (the rendered ``case``) in ``box`` and check it was contained: one of ``statuses``, never a
    sandbox error, an answer within ``case.wall_time_s + slack_s``, no forbidden output, every host check holds."""
    values, listener = host
    connections_before = listener.connections
    limits = Limits(
        wall_time_s=case.wall_time_s,
        cpu_time_s=case.wall_time_s,
        memory_mb=256,
        max_processes=32,
        output_bytes=256 * 1024,
    )
    request = RunRequest(argv=["python3", "main.py"], files={"main.py": source}, limits=limits)
    started = time.monotonic()
    result = box.run(request)
    elapsed = time.monotonic() - started

    assert result.status.value in statuses, (result.status, result.message, result.stdout[-300:], result.stderr[-300:])
    assert result.status is not RunStatus.SANDBOX_ERROR
    assert elapsed < case.wall_time_s + slack_s, "the sandbox answered in bounded time"
    printed = result.stdout + result.stderr
    for forbidden in case.must_not_print:
        assert render(forbidden, values).encode() not in printed
    for check in case.host_checks:
        HOST_CHECKS[check](values, listener, connections_before)


def listener_untouched(values, listener, before):
    time.sleep(0.3)
    assert listener.connections == before, "a sandboxed program reached the host's 127.0.0.1"


def host_path_absent(values, listener, before):
    assert not Path(values["HOST_WRITE_PATH"]).exists()
    assert not Path("/usr/rewardsmith-pwned").exists()
    assert not Path("/root/rewardsmith-pwned").exists()


def runner_alive(values, listener, before):
    assert os.getpid() == int(values["HOST_PID"])  # we are still here to assert it
    os.kill(os.getpid(), 0)


def no_marked_process(values, listener, before):
    marker = values["ORPHAN_MARKER"][:15]
    deadline = time.monotonic() + 3
    while True:
        survivors = []
        for entry in Path("/proc").iterdir():
            try:
                if entry.name.isdigit() and (entry / "comm").read_text().strip() == marker:
                    survivors.append(entry.name)
            except OSError:
                continue
        if not survivors or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    assert not survivors, f"orphans outlived the run: {survivors}"


HOST_CHECKS = {
    "listener_untouched": listener_untouched,
    "host_path_absent": host_path_absent,
    "runner_alive": runner_alive,
    "no_marked_process": no_marked_process,
}
