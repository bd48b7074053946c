"""Every hostile program of ``tests/support/hostile_programs.py`` is contained by the local sandbox.

Why running fork bombs and ``kill(-1)`` from a test is safe here: these cases run only in the two bwrap tiers
(forkserver and one-bwrap-per-run), and the first test below proves the guarantee they rely on: each run has
its own PID namespace (it cannot see the test runner, ``kill(-1)`` reaches only its own processes) under an
unprivileged uid with ``RLIMIT_NPROC``. Without bubblewrap these cases are skipped, never run against the host.
The containment checks are real: a real TCP listener on the host's 127.0.0.1, a real secret file and a real
secret environment variable in this process, the host's process table for orphans.

A second guard in case the first regresses: when a session also collects ``tests/sandboxes/test_hostile_in_pidns.py``
and ``unshare`` works, this module's tests are deselected there and re-run inside a fresh PID namespace
(``unshare --pid --fork --mount-proc``), so a containment failure cannot reach the host's other processes.
"""

from __future__ import annotations

import os
import secrets
import socket
import threading
import time
from pathlib import Path

import pytest

from rewardkit.sandboxes.base import Limits, RunRequest, RunStatus
from rewardkit.sandboxes.local.backend import LocalSandbox
from tests.support.hostile_programs import SANDBOX_ATTACKS, HostileCase, render


@pytest.fixture(scope="module", params=["bwrap", "bwrap-exec"])
def box(request):
    """Both namespace tiers: the warm forkserver and one bwrap per run."""
    sandbox = LocalSandbox(tier=request.param)
    if sandbox.tier != request.param:
        pytest.skip(f"the {request.param!r} tier is unavailable here: {sandbox._startup_error}")
    yield sandbox
    sandbox.close()


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
    secret_path = secret_dir / f"rewardkit-secret-{secrets.token_hex(4)}.txt"
    secret_path.write_text(secret_value)
    env_value = "rk-env-" + secrets.token_hex(8)
    os.environ["REWARDKIT_TEST_SECRET"] = env_value
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
    os.environ.pop("REWARDKIT_TEST_SECRET", None)


def test_each_run_has_its_own_pid_namespace_and_an_unprivileged_uid(box):
    code = "import os\nprint(os.getpid(), os.getuid(), sorted(p for p in os.listdir('/proc') if p.isdigit()))\n"
    first = box.run(RunRequest(argv=["python3", "main.py"], files={"main.py": code}))
    second = box.run(RunRequest(argv=["python3", "main.py"], files={"main.py": code}))
    assert first.status is RunStatus.OK, first.message
    pid, uid, pids = first.stdout.decode().split(" ", 2)
    if box.tier == "bwrap":  # the program is PID 1; each run has a fresh uid
        assert pid == "1" and pids.strip() == "['1']"
        assert int(uid) >= 100_000
        assert uid != second.stdout.decode().split(" ")[1], "every run gets its own uid"
    else:  # bwrap's init is PID 1, the program PID 2; uid 65534 inside a user namespace
        assert pid == "2" and pids.strip() == "['1', '2']"
        assert uid == "65534"


def test_seccomp_is_loaded_and_capabilities_are_empty(box):
    code = "print(open('/proc/self/status').read())"
    result = box.run(RunRequest(argv=["python3", "main.py"], files={"main.py": code}))
    status = dict(line.split(":\t", 1) for line in result.stdout.decode().splitlines() if ":\t" in line)
    assert status["CapEff"].strip() == "0" * 16
    assert status["NoNewPrivs"].strip() == "1"
    if box.seccomp_active:
        assert status["Seccomp"].strip() == "2"


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


@pytest.mark.parametrize("case", SANDBOX_ATTACKS, ids=[c.id for c in SANDBOX_ATTACKS])
def test_hostile_program_is_contained(box, host, case: HostileCase):
    values, _ = host
    check_contained(box, case, host, render(case.code, values), statuses=case.statuses, slack_s=10)


def _listener_untouched(values, listener, before):
    time.sleep(0.3)
    assert listener.connections == before, "a sandboxed program reached the host's 127.0.0.1"


def _host_path_absent(values, listener, before):
    assert not Path(values["HOST_WRITE_PATH"]).exists()
    assert not Path("/usr/rewardkit-pwned").exists()
    assert not Path("/root/rewardkit-pwned").exists()


def _runner_alive(values, listener, before):
    assert os.getpid() == int(values["HOST_PID"])  # we are still here to assert it
    os.kill(os.getpid(), 0)


def _no_marked_process(values, listener, before):
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
    "listener_untouched": _listener_untouched,
    "host_path_absent": _host_path_absent,
    "runner_alive": _runner_alive,
    "no_marked_process": _no_marked_process,
}


def test_orphan_marker_detection_sees_a_real_host_process(host):
    """The orphan check can fail: a host process with the marker name is found."""
    import subprocess

    _values, _ = host
    marker = "rkc" + secrets.token_hex(5)
    code = f"import ctypes, time; ctypes.CDLL(None).prctl(15, b'{marker}', 0, 0, 0); time.sleep(5)"
    process = subprocess.Popen(["python3", "-c", code])
    try:
        time.sleep(0.5)
        with pytest.raises(AssertionError):
            _no_marked_process({"ORPHAN_MARKER": marker}, None, 0)
    finally:
        process.kill()
        process.wait()


def test_listener_check_can_fail(host):
    """The loopback check can fail: an unsandboxed connection is counted."""
    values, listener = host
    before = listener.connections
    socket.create_connection(("127.0.0.1", listener.port), timeout=2).close()
    with pytest.raises(AssertionError):
        _listener_untouched(values, listener, before)
