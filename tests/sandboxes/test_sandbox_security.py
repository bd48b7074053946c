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

import secrets
import socket
import time

import pytest

from rewardsmith.sandboxes.base import RunRequest, RunStatus
from rewardsmith.sandboxes.local.backend import LocalSandbox
from tests.support.containment import check_contained, listener_untouched, no_marked_process
from tests.support.containment import host as host  # the fixture: the attack battery's live host facts
from tests.support.hostile_programs import SANDBOX_ATTACKS, HostileCase, render


@pytest.fixture(scope="module", params=["bwrap", "bwrap-exec"])
def box(request):
    """Both namespace tiers: the warm forkserver and one bwrap per run."""
    sandbox = LocalSandbox(tier=request.param)
    if sandbox.tier != request.param:
        pytest.skip(f"the {request.param!r} tier is unavailable here: {sandbox._startup_error}")
    yield sandbox
    sandbox.close()


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


@pytest.mark.parametrize("case", SANDBOX_ATTACKS, ids=[c.id for c in SANDBOX_ATTACKS])
def test_hostile_program_is_contained(box, host, case: HostileCase):
    values, _ = host
    check_contained(box, case, host, render(case.code, values), statuses=case.statuses, slack_s=10)


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
            no_marked_process({"ORPHAN_MARKER": marker}, None, 0)
    finally:
        process.kill()
        process.wait()


def test_listener_check_can_fail(host):
    """The loopback check can fail: an unsandboxed connection is counted."""
    values, listener = host
    before = listener.connections
    socket.create_connection(("127.0.0.1", listener.port), timeout=2).close()
    with pytest.raises(AssertionError):
        listener_untouched(values, listener, before)
